package gitignore

import "strings"

// wildmatch results, as git's wildmatch.c: the two aborts cut the search
// short (a star that cannot find what follows it anywhere in the text
// makes every earlier star fail too), which keeps matching polynomial
// instead of exponential in the number of stars.
const (
	wmNoMatch = iota
	wmMatch
	wmAbortAll
	wmAbortToStarStar
)

// wildmatch matches text against the glob p as git's wildmatch.c
// (dowild) does, byte by byte; pathname is WM_PATHNAME ('*', '?' and
// classes never match '/', "**" as a whole component matches
// directories). Nothing is compiled or allocated.
func wildmatch(p, text string, pathname bool) int {
	pi, ti := 0, 0
	for ; pi < len(p) && p[pi] != 0; ti, pi = ti+1, pi+1 {
		pch := p[pi]
		tch := wmAt(text, ti)
		if tch == 0 && pch != '*' {
			return wmAbortAll
		}
		switch pch {
		case '\\':
			// Literal match with the following character.
			pi++
			pch = wmAt(p, pi)
			if tch != pch {
				return wmNoMatch
			}
			continue
		case '?':
			if pathname && tch == '/' {
				return wmNoMatch
			}
			continue
		case '*':
			var res int
			var done bool
			if pi, ti, res, done = wildmatchStar(p, text, pi, ti, pathname); done {
				return res
			}
			continue
		case '[':
			var inSet, ok bool
			if pi, inSet, ok = wildmatchBracket(p, pi, tch); !ok {
				return wmAbortAll
			}
			if !inSet || (pathname && tch == '/') {
				return wmNoMatch
			}
			continue
		default:
			if tch != pch {
				return wmNoMatch
			}
			continue
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// wmAt is C's NUL-terminated view of s: 0 past its end.
func wmAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// wildmatchStar is dowild's case '*', for the star (or stars) at p[pi]
// against text[ti:]. When done, res is the whole match's result;
// otherwise a single star before a '/' skipped to the text's next
// directory and matching goes on from the returned pi, ti (the caller's
// loop consumes the slash on both sides).
func wildmatchStar(p, text string, pi, ti int, pathname bool) (npi, nti, res int, done bool) {
	tch := wmAt(text, ti)
	var matchSlash bool
	pi++
	if wmAt(p, pi) == '*' {
		prev := pi - 2
		for pi++; wmAt(p, pi) == '*'; pi++ {
		}
		if (prev < 0 || p[prev] == '/') &&
			(wmAt(p, pi) == 0 || wmAt(p, pi) == '/' || (wmAt(p, pi) == '\\' && wmAt(p, pi+1) == '/')) {
			// "**/" may match no directory at all.
			if wmAt(p, pi) == '/' && wildmatch(p[pi+1:], text[ti:], pathname) == wmMatch {
				return pi, ti, wmMatch, true
			}
			matchSlash = true
		} else {
			matchSlash = !pathname // "a**b" is an ordinary star
		}
	} else {
		matchSlash = !pathname // without WM_PATHNAME, '*' == '**'
	}
	if wmAt(p, pi) == 0 {
		// A trailing "**" matches everything, a trailing "*"
		// only what has no more '/'.
		if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
			return pi, ti, wmNoMatch, true
		}
		return pi, ti, wmMatch, true
	} else if !matchSlash && wmAt(p, pi) == '/' {
		// One star then a slash matches the next directory.
		slash := strings.IndexByte(text[ti:], '/')
		if slash < 0 {
			return pi, ti, wmNoMatch, true
		}
		return pi, ti + slash, 0, false
	}
	for {
		if tch == 0 {
			break
		}
		// A star followed by a literal: skip to its next
		// occurrence (not past a '/' unless matchSlash).
		if c := wmAt(p, pi); !isGlobSpecial(c) {
			for tch = wmAt(text, ti); tch != 0 && (matchSlash || tch != '/'); tch = wmAt(text, ti) {
				if tch == c {
					break
				}
				ti++
			}
			if tch != c {
				if matchSlash {
					return pi, ti, wmAbortAll, true
				}
				return pi, ti, wmAbortToStarStar, true
			}
		}
		if m := wildmatch(p[pi:], text[ti:], pathname); m != wmNoMatch {
			if !matchSlash || m != wmAbortToStarStar {
				return pi, ti, m, true
			}
		} else if !matchSlash && tch == '/' {
			return pi, ti, wmAbortToStarStar, true
		}
		ti++
		tch = wmAt(text, ti)
	}
	return pi, ti, wmAbortAll, true
}

// wildmatchBracket is dowild's case '[', for the bracket expression at
// p[pi] against the text byte tch. It returns the index of the closing
// ']', whether tch is in the set (negation applied), and false for a
// malformed expression (no ']', a trailing '\\', a bad [:class:]).
func wildmatchBracket(p string, pi int, tch byte) (end int, inSet, ok bool) {
	pi++
	pch := wmAt(p, pi)
	if pch == '^' {
		pch = '!'
	}
	negated := pch == '!'
	if negated {
		pi++
		pch = wmAt(p, pi)
	}
	var prev byte
	matched := false
	for {
		if pch == 0 {
			return pi, false, false
		}
		switch {
		case pch == '\\':
			pi++
			pch = wmAt(p, pi)
			if pch == 0 {
				return pi, false, false
			}
			if tch == pch {
				matched = true
			}
		case pch == '-' && prev != 0 && wmAt(p, pi+1) != 0 && wmAt(p, pi+1) != ']':
			pi++
			pch = wmAt(p, pi)
			if pch == '\\' {
				pi++
				pch = wmAt(p, pi)
				if pch == 0 {
					return pi, false, false
				}
			}
			if tch <= pch && tch >= prev {
				matched = true
			}
			pch = 0 // so that prev becomes 0
		case pch == '[' && wmAt(p, pi+1) == ':':
			pi += 2
			s := pi
			for pch = wmAt(p, pi); pch != 0 && pch != ']'; pch = wmAt(p, pi) {
				pi++
			}
			if pch == 0 {
				return pi, false, false
			}
			if pi-s-1 < 0 || p[pi-1] != ':' {
				// No ":]": an ordinary '[' in the set.
				pi = s - 2
				pch = '['
				if tch == pch {
					matched = true
				}
				break
			}
			in, ok := charClass(p[s:pi-1], tch)
			if !ok {
				return pi, false, false // a malformed [:class:]
			}
			if in {
				matched = true
			}
			pch = 0
		default:
			if tch == pch {
				matched = true
			}
		}
		prev = pch
		pi++
		pch = wmAt(p, pi)
		if pch == ']' {
			break
		}
	}
	return pi, matched != negated, true
}

func isGlobSpecial(c byte) bool { return c == '*' || c == '?' || c == '[' || c == '\\' }

// charClass reports whether c is in the POSIX class name (ASCII only,
// as git's sane ctype); ok is false for an unknown name.
func charClass(name string, c byte) (in, ok bool) {
	lower := c >= 'a' && c <= 'z'
	upper := c >= 'A' && c <= 'Z'
	digit := c >= '0' && c <= '9'
	switch name {
	case "alnum":
		return lower || upper || digit, true
	case "alpha":
		return lower || upper, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return c > 0x20 && c < 0x7f, true
	case "lower":
		return lower, true
	case "print":
		return c >= 0x20 && c < 0x7f, true
	case "punct":
		return c > 0x20 && c < 0x7f && !lower && !upper && !digit, true
	case "space":
		return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f', true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
