package pathrule

import (
	"bytes"
	"strings"
)

// git fsck also reads the blobs a tree names .gitmodules or
// .gitattributes (in every spelling it reads as those): a .gitmodules it
// cannot parse as configuration, or whose submodule names, urls, paths or
// update commands could attack a clone, and a .gitattributes with a line
// git would not read, are flagged, and hosts that check pushes reject
// them. Ported from git's fsck rules as git 2.39 has them, with the parts
// of its configuration parser and URL handling they rely on.

var (
	ruleGitmodParse  = Rule{"gitmodulesParse", "git cannot parse this .gitmodules as configuration; git fsck --strict reports it"}
	ruleGitmodName   = Rule{"gitmodulesName", "a submodule name in this .gitmodules is empty or holds a .. component; git fsck rejects it"}
	ruleGitmodURL    = Rule{"gitmodulesUrl", "a submodule url in this .gitmodules looks like an option, escapes its root, or carries a newline; git fsck rejects it"}
	ruleGitmodPath   = Rule{"gitmodulesPath", "a submodule path in this .gitmodules looks like an option; git fsck rejects it"}
	ruleGitmodUpdate = Rule{"gitmodulesUpdate", "a submodule update setting in this .gitmodules is a command (!...); git fsck rejects it"}
	ruleGitattrLine  = Rule{"gitattributesLineLength", "this .gitattributes has a line of 2048 bytes or more; git fsck rejects it"}
)

// IsGitmodulesName and IsGitattributesName are fsck's tests of an entry
// name for the blobs whose content it checks.
func IsGitmodulesName(name string) bool {
	if isHFSDot(name, "gitmodules") || isNTFSDot(name, "gitmodules", "gi7eba") {
		return true
	}
	for rest := name; ; {
		i := strings.IndexByte(rest, '\\')
		if i < 0 {
			return false
		}
		if rest = rest[i+1:]; isNTFSDot(rest, "gitmodules", "gi7eba") {
			return true
		}
	}
}

func IsGitattributesName(name string) bool {
	return isHFSDot(name, "gitattributes") || isNTFSDot(name, "gitattributes", "gi7d29")
}

// Gitattributes is fsck's check of a .gitattributes blob: no line
// (up to the first NUL, as git reads it) of 2048 bytes or more.
func Gitattributes(data []byte) *Rule {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		data = data[:i]
	}
	for len(data) > 0 {
		eol := bytes.IndexByte(data, '\n')
		if eol < 0 {
			eol = len(data)
		}
		if eol >= 2048 {
			return &ruleGitattrLine
		}
		data = data[min(eol+1, len(data)):]
	}
	return nil
}

// Gitmodules is fsck's check of a .gitmodules blob: git's
// configuration parser, then every submodule.<name>.<key> it reads.
func Gitmodules(data []byte) *Rule {
	var found *Rule
	ok := (&configParser{buf: data}).parse(func(v string, value *string) {
		if r := gitmodulesEntryRule(v, value); r != nil && found == nil {
			found = r
		}
	})
	if found != nil {
		return found
	}
	if !ok {
		return &ruleGitmodParse
	}
	return nil
}

// gitmodulesEntryRule is fsck_gitmodules_fn for the variable v (section,
// subsection and key, as the parser made it) with value (nil for a key
// without '=').
func gitmodulesEntryRule(v string, value *string) *Rule {
	rest, ok := strings.CutPrefix(v, "submodule")
	if !ok || !strings.HasPrefix(rest, ".") {
		return nil
	}
	dot := strings.LastIndexByte(rest, '.')
	if dot == 0 {
		return nil // no subsection
	}
	name, key := rest[1:dot], rest[dot+1:]
	switch {
	case !checkSubmoduleName(name):
		return &ruleGitmodName
	case value == nil:
	case key == "url" && !checkSubmoduleURL(*value):
		return &ruleGitmodURL
	case key == "path" && strings.HasPrefix(*value, "-"):
		return &ruleGitmodPath
	case key == "update" && strings.HasPrefix(*value, "!"):
		return &ruleGitmodUpdate
	}
	return nil
}

func isXplatformSep(c byte) bool { return c == '/' || c == '\\' }

// checkSubmoduleName is check_submodule_name: not empty, and no ".."
// component with '/' or '\' as separators.
func checkSubmoduleName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i <= len(name); i++ {
		if i > 0 && !isXplatformSep(name[i-1]) {
			continue
		}
		if at(name, i) == '.' && at(name, i+1) == '.' && (at(name, i+2) == 0 || isXplatformSep(at(name, i+2))) {
			return false
		}
	}
	return true
}

func startsWithDotSlash(s string) bool { return at(s, 0) == '.' && isXplatformSep(at(s, 1)) }

func startsWithDotDotSlash(s string) bool {
	return at(s, 0) == '.' && at(s, 1) == '.' && isXplatformSep(at(s, 2))
}

// checkSubmoduleURL is check_submodule_url.
func checkSubmoduleURL(url string) bool {
	if strings.HasPrefix(url, "-") {
		return false
	}
	if startsWithDotSlash(url) || startsWithDotDotSlash(url) || strings.HasPrefix(url, "git://") {
		// Appended to an http URL and decoded, a newline could inject
		// into a credential helper; a leading ../ could climb into the
		// host part.
		if strings.IndexByte(urlDecode(url), '\n') >= 0 {
			return false
		}
		n, next := 0, url
		for {
			if startsWithDotDotSlash(next) {
				n, next = n+1, next[3:]
			} else if startsWithDotSlash(next) {
				next = next[2:]
			} else {
				break
			}
		}
		return n == 0 || (at(next, 0) != ':' && at(next, 0) != '/')
	}
	if curl, ok := urlToCurlURL(url); ok {
		host, ok := credentialHost(curl)
		return ok && host != ""
	}
	return true
}

// urlToCurlURL is url_to_curl_url: the URL curl would fetch, for the
// schemes git hands to curl.
func urlToCurlURL(url string) (string, bool) {
	for _, p := range []string{"http::", "https::", "ftp::", "ftps::"} {
		if rest, ok := strings.CutPrefix(url, p); ok {
			return rest, true
		}
	}
	for _, p := range []string{"http://", "https://", "ftp://", "ftps://"} {
		if strings.HasPrefix(url, p) {
			return url, true
		}
	}
	return "", false
}

// credentialHost is credential_from_url_gently's reading of url: its
// host, and false when it has no scheme or a component (user, password,
// scheme, host, path) holds a newline once decoded.
func credentialHost(url string) (string, bool) {
	pe := strings.Index(url, "://")
	if pe <= 0 {
		return "", false
	}
	cp := url[pe+3:]
	at, colon := strings.IndexByte(cp, '@'), strings.IndexByte(cp, ':')
	slash := strings.IndexAny(cp, "/?#")
	if slash < 0 {
		slash = len(cp)
	}
	var parts []string
	host := 0
	switch {
	case at < 0 || slash <= at:
	case colon < 0 || at <= colon:
		parts = append(parts, urlDecode(cp[:at]))
		host = at + 1
	default:
		parts = append(parts, urlDecode(cp[:colon]), urlDecode(cp[colon+1:at]))
		host = at + 1
	}
	h := urlDecode(cp[host:slash])
	parts = append(parts, url[:pe], h)
	if path := strings.TrimLeft(cp[slash:], "/"); path != "" {
		parts = append(parts, urlDecode(path))
	}
	for _, p := range parts {
		if strings.IndexByte(p, '\n') >= 0 {
			return "", false
		}
	}
	return h, true
}

// urlDecode is url_decode_mem: the part before the first ':' (a scheme)
// as it is, the rest with %XX decoded (not %00, nor a malformed one), up
// to a NUL.
func urlDecode(s string) string {
	var out strings.Builder
	if colon := strings.IndexByte(s, ':'); colon > 0 {
		out.WriteString(s[:colon])
		s = s[colon:]
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0 {
			break
		}
		if c == '%' && len(s)-i >= 3 {
			if v := hex2chr(s[i+1], s[i+2]); v > 0 {
				out.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		out.WriteByte(c)
		i++
	}
	return out.String()
}

// hex2chr is the byte two hex digits spell, or -1.
func hex2chr(a, b byte) int {
	val := func(c byte) int {
		switch {
		case '0' <= c && c <= '9':
			return int(c - '0')
		case 'a' <= c && c <= 'f':
			return int(c-'a') + 10
		case 'A' <= c && c <= 'F':
			return int(c-'A') + 10
		}
		return -1
	}
	x, y := val(a), val(b)
	if x < 0 || y < 0 {
		return -1
	}
	return x<<4 | y
}

// configParser is git's configuration parser as it reads a blob: each
// byte as a signed char (so 0xFF reads as end of file, and a UTF-8 byte
// order mark is not recognised), CR LF as LF, an end of file that sticks.
type configParser struct {
	buf []byte
	pos int
	eof bool
}

const cfgEOF = -1

func (p *configParser) getc() int {
	if p.pos < len(p.buf) {
		c := int(int8(p.buf[p.pos]))
		p.pos++
		return c
	}
	return cfgEOF
}

// next is get_next_char.
func (p *configParser) next() int {
	c := p.getc()
	if c == '\r' {
		if c = p.getc(); c != '\n' {
			if c != cfgEOF {
				p.pos--
			}
			c = '\r'
		}
	}
	if c == cfgEOF {
		p.eof = true
		c = '\n'
	}
	return c
}

// git's locale-independent ctype: bytes of 0x80 and up are nothing.
func cfgSpace(c int) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func cfgAlpha(c int) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func cfgKeyChar(c int) bool {
	return cfgAlpha(c) || '0' <= c && c <= '9' || c == '-'
}
func cfgLower(c int) byte {
	if 'A' <= c && c <= 'Z' {
		return byte(c + 'a' - 'A')
	}
	return byte(c)
}

// cString is s up to its first NUL, as C reads it.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// parse is git_parse_source: it calls fn for every variable and reports
// whether the whole blob parsed.
func (p *configParser) parse(fn func(v string, value *string)) bool {
	const bom = "\xef\xbb\xbf"
	bomAt := 0 // -1 once past the start
	comment := false
	var v []byte
	baselen := 0
	for {
		c := p.next()
		if bomAt >= 0 && bomAt < len(bom) {
			if c == int(bom[bomAt]) { // never, for a signed char
				bomAt++
				continue
			}
			if bomAt != 0 {
				return false
			}
			bomAt = -1
		}
		switch {
		case c == '\n':
			if p.eof {
				return true
			}
			comment = false
			continue
		case comment, cfgSpace(c):
			continue
		case c == '#' || c == ';':
			comment = true
			continue
		case c == '[':
			v = v[:0]
			var ok bool
			if v, ok = p.baseVar(v); !ok || len(v) < 1 {
				return false
			}
			v = append(v, '.')
			baselen = len(v)
			continue
		case !cfgAlpha(c):
			return false
		}
		v = append(v[:baselen], cfgLower(c))
		var ok bool
		if v, ok = p.value(v, fn); !ok {
			return false
		}
	}
}

// value is get_value: the rest of the key, then "= value" or nothing.
func (p *configParser) value(name []byte, fn func(string, *string)) ([]byte, bool) {
	var c int
	for {
		c = p.next()
		if p.eof || !cfgKeyChar(c) {
			break
		}
		name = append(name, cfgLower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	var value *string
	if c != '\n' {
		if c != '=' {
			return name, false
		}
		b, ok := p.parseValue()
		if !ok {
			return name, false
		}
		s := cString(b)
		value = &s
	}
	fn(cString(name), value)
	return name, true
}

// parseValue is parse_value: quotes, escapes, comments and inner runs of
// blanks as one space.
func (p *configParser) parseValue() ([]byte, bool) {
	quote, comment, space := false, false, 0
	val := []byte{}
	for {
		c := p.next()
		if c == '\n' {
			return val, !quote
		}
		if comment {
			continue
		}
		if cfgSpace(c) && !quote {
			if len(val) > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			val = append(val, ' ')
		}
		if c == '\\' {
			switch c = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return nil, false
			}
			val = append(val, byte(c))
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		val = append(val, byte(c))
	}
}

// baseVar is get_base_var: a section name, then ']' or a quoted
// subsection.
func (p *configParser) baseVar(name []byte) ([]byte, bool) {
	for {
		c := p.next()
		switch {
		case p.eof:
			return name, false
		case c == ']':
			return name, true
		case cfgSpace(c):
			return p.extendedBaseVar(name, c)
		case !cfgKeyChar(c) && c != '.':
			return name, false
		}
		name = append(name, cfgLower(c))
	}
}

// extendedBaseVar is get_extended_base_var: `"subsection"]`, the
// subsection as written (\x is x).
func (p *configParser) extendedBaseVar(name []byte, c int) ([]byte, bool) {
	for {
		if c == '\n' {
			return name, false
		}
		if c = p.next(); !cfgSpace(c) {
			break
		}
	}
	if c != '"' {
		return name, false
	}
	name = append(name, '.')
	for {
		c := p.next()
		if c == '\n' {
			return name, false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return name, false
			}
		}
		name = append(name, byte(c))
	}
	return name, p.next() == ']'
}
