// Package pathrule holds git's refusals of names and of dotfile contents:
// the tree-entry checks of git fsck (and of hosts that check pushes), the
// check git makes of every path it puts in the index (verify_path), and
// fsck's checks of .gitmodules and .gitattributes blobs, ported from git
// 2.39 with their quirks, so that what ServerFS commits passes them and
// what it checks out git would check out.
package pathrule

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/serverfs/serverfs/internal/errs"
)

// The names git refuses, ported from git's fsck rules (the tree checks of
// git fsck and of a receiving host with fsckObjects) and from the check
// git makes of every path it puts in the index (verify_path, with
// core.protectNTFS and core.protectHFS), as git 2.39 has them. The
// functions read a string as git reads a NUL-terminated one: past its end
// is NUL. Each keeps git's quirks, on purpose: agreeing with git is the
// point.

// Rule is a check of git's that a path fails: the fsck message id
// (or "invalidPath" for verify_path, which has none) and what it means.
type Rule struct{ ID, Why string }

var (
	RuleHasDotgit    = Rule{"hasDotgit", "git reads a component as .git (another case, trailing dots or spaces, git~1, an NTFS :stream, code points HFS+ ignores, or after a backslash, a separator on Windows); git fsck and hosts that check pushes reject it"}
	ruleHasDot       = Rule{"hasDot", "a component is .; git fsck rejects it"}
	ruleHasDotdot    = Rule{"hasDotdot", "a component is ..; git fsck rejects it"}
	ruleEmptyName    = Rule{"emptyName", "a component is empty; git fsck rejects it"}
	ruleFullPathname = Rule{"fullPathname", "a tree entry name holds '/'; git fsck rejects it"}
	ruleGitmodules   = Rule{"gitmodulesSymlink", ".gitmodules (or a spelling git reads as it) is a symlink; git fsck rejects it and git will not check it out"}
	ruleGitattr      = Rule{"gitattributesSymlink", ".gitattributes (or a spelling git reads as it) is a symlink; git fsck --strict reports it"}
	ruleGitignore    = Rule{"gitignoreSymlink", ".gitignore (or a spelling git reads as it) is a symlink; git fsck --strict reports it"}
	ruleMailmap      = Rule{"mailmapSymlink", ".mailmap (or a spelling git reads as it) is a symlink; git fsck --strict reports it"}
	ruleGitmodBlob   = Rule{"gitmodulesBlob", ".gitmodules (or a spelling git reads as it) is a directory or a submodule; git fsck rejects it"}
	ruleGitattrBlob  = Rule{"gitattributesBlob", ".gitattributes (or a spelling git reads as it) is a directory or a submodule; git fsck rejects it"}
	ruleInvalidPath  = Rule{"invalidPath", "git refuses it in the index and will not check it out"}
)

// Commit is the first check git applies that the path a commit
// records (slash-separated, its leaf of mode mode) fails, or nil: git
// fsck's checks of every tree entry on the way (each directory, then the
// leaf), then verify_path with both NTFS and HFS+ protection, so that what
// a commit records passes git fsck --strict (and a host's fsckObjects) and
// checks out with git everywhere.
func Commit(p string, mode filemode.FileMode) *Rule {
	comps := strings.Split(p, "/")
	for i, c := range comps {
		m := filemode.Dir
		if i == len(comps)-1 {
			m = mode
		}
		if r := fsckEntryRule(c, m); r != nil {
			return r
		}
	}
	if !verifyPath(p, mode, true, true) {
		return &ruleInvalidPath
	}
	return nil
}

// Checkout is why git on Linux (core.protectNTFS on, its default
// since 2.24; core.protectHFS off, its default outside macOS) refuses to
// check out a path, or nil: verify_path. The repository's own settings of
// the two are not read: its configuration is not trusted to relax them.
func Checkout(p string, mode filemode.FileMode) *Rule {
	if !verifyPath(p, mode, true, false) {
		return &ruleInvalidPath
	}
	return nil
}

// fsckEntryRule is the first of git fsck's tree checks one entry name of
// mode mode fails, or nil (fsck_tree).
func fsckEntryRule(name string, mode filemode.FileMode) *Rule {
	link := mode == filemode.Symlink
	// fsck reads the content of what such names hold as .gitmodules or
	// .gitattributes, and flags what is not a blob.
	notBlob := mode == filemode.Dir || mode == filemode.Submodule
	switch {
	case strings.IndexByte(name, '/') >= 0:
		return &ruleFullPathname
	case name == "":
		return &ruleEmptyName
	case name == ".":
		return &ruleHasDot
	case name == "..":
		return &ruleHasDotdot
	case HasDotGit(name):
		return &RuleHasDotgit
	case link && (isHFSDot(name, "gitmodules") || isNTFSDot(name, "gitmodules", "gi7eba")):
		return &ruleGitmodules
	case link && (isHFSDot(name, "gitattributes") || isNTFSDot(name, "gitattributes", "gi7d29")):
		return &ruleGitattr
	case link && (isHFSDot(name, "gitignore") || isNTFSDot(name, "gitignore", "gi250a")):
		return &ruleGitignore
	case link && (isHFSDot(name, "mailmap") || isNTFSDot(name, "mailmap", "maba30")):
		return &ruleMailmap
	case notBlob && (isHFSDot(name, "gitmodules") || isNTFSDot(name, "gitmodules", "gi7eba")):
		return &ruleGitmodBlob
	case notBlob && (isHFSDot(name, "gitattributes") || isNTFSDot(name, "gitattributes", "gi7d29")):
		return &ruleGitattrBlob
	}
	// What follows each backslash is checked as NTFS would read it.
	for rest := name; ; {
		i := strings.IndexByte(rest, '\\')
		if i < 0 {
			return nil
		}
		rest = rest[i+1:]
		if isNTFSDot(rest, "gitmodules", "gi7eba") {
			if link {
				return &ruleGitmodules
			}
			if notBlob {
				return &ruleGitmodBlob
			}
		}
	}
}

// HasDotGit is fsck's hasDotgit test of an entry name: a spelling NTFS
// or HFS+ reads as .git, also after any backslash.
func HasDotGit(name string) bool {
	if isHFSDotGit(name) || isNTFSDotGit(name) {
		return true
	}
	for rest := name; ; {
		i := strings.IndexByte(rest, '\\')
		if i < 0 {
			return false
		}
		if rest = rest[i+1:]; isNTFSDotGit(rest) {
			return true
		}
	}
}

// DotGitComponent reports whether a slash-separated path has a component
// git fsck reads as .git (hasDotgit): every spelling NTFS and HFS+ read
// as .git, also after a backslash.
func DotGitComponent(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if HasDotGit(c) {
			return true
		}
	}
	return false
}

// at is s[i], or NUL past its end.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold is strncasecmp(s, prefix, len(prefix)) == 0 for an ASCII,
// lower-case prefix.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerASCII(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

// isNTFSDotGit is is_ntfs_dotgit: ".git" or "git~1" in any case, followed
// by dots and spaces only, up to the end, a '/' or '\', or a ':' (an NTFS
// stream name).
func isNTFSDotGit(name string) bool {
	var i int
	switch {
	case at(name, 0) == '.' && hasPrefixFold(name[1:], "git"):
		i = 4
	case hasPrefixFold(name, "git~1"):
		i = 5
	default:
		return false
	}
	for ; ; i++ {
		switch c := at(name, i); c {
		case 0, '/', '\\', ':':
			return true
		case '.', ' ':
		default:
			return false
		}
	}
}

// isNTFSDot is is_ntfs_dot_generic: "."+dotName in any case, its NTFS
// short name (the first six letters and ~1 to ~4) or the fall-back short
// name (short, up to six letters of it, ~ and digits), each followed by
// dots and spaces only, up to the end or a ':'.
func isNTFSDot(name, dotName, short string) bool {
	spacesAndPeriods := func(i int) bool {
		for ; ; i++ {
			switch at(name, i) {
			case 0, ':':
				return true
			case ' ', '.':
			default:
				return false
			}
		}
	}
	if at(name, 0) == '.' && hasPrefixFold(name[1:], dotName) {
		return spacesAndPeriods(len(dotName) + 1)
	}
	if hasPrefixFold(name, dotName[:6]) && at(name, 6) == '~' && at(name, 7) >= '1' && at(name, 7) <= '4' {
		return spacesAndPeriods(8)
	}
	sawTilde := false
	i := 0
	for ; i < 8; i++ {
		c := at(name, i)
		switch {
		case c == 0:
			return false
		case sawTilde:
			if c < '0' || c > '9' {
				return false
			}
		case c == '~':
			i++
			if d := at(name, i); d < '1' || d > '9' {
				return false
			}
			sawTilde = true
		case i >= 6, c&0x80 != 0, lowerASCII(c) != short[i]:
			return false
		}
	}
	return spacesAndPeriods(i)
}

// nextHFSChar is next_hfs_char: the next code point of s from *i, skipping
// those HFS+ ignores; 0 at the end or at malformed UTF-8 (git's decoder
// also refuses U+FFFE and U+FFFF).
func nextHFSChar(s string, i *int) rune {
	for {
		if *i >= len(s) {
			return 0
		}
		r, n := utf8.DecodeRuneInString(s[*i:])
		if r == utf8.RuneError && n <= 1 || r == 0xfffe || r == 0xffff {
			*i = len(s)
			return 0
		}
		*i += n
		switch r {
		case 0x200c, 0x200d, 0x200e, 0x200f, // zero width (non-)joiner, directional marks
			0x202a, 0x202b, 0x202c, 0x202d, 0x202e, // directional embedding and overrides
			0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, // deprecated format characters
			0xfeff: // zero width no-break space
			continue
		}
		return r
	}
}

// isHFSDot is is_hfs_dot_generic: "."+needle in ASCII case, with the code
// points HFS+ ignores anywhere, ending at the end, a '/' or malformed
// UTF-8.
func isHFSDot(path, needle string) bool {
	i := 0
	if nextHFSChar(path, &i) != '.' {
		return false
	}
	for j := 0; j < len(needle); j++ {
		c := nextHFSChar(path, &i)
		if c > 127 || lowerASCII(byte(c)) != needle[j] {
			return false
		}
	}
	c := nextHFSChar(path, &i)
	return c == 0 || c == '/'
}

func isHFSDotGit(path string) bool { return isHFSDot(path, "git") }

// verifyPath is git's verify_path as built for Linux (only '/' separates
// directories) with core.protectNTFS and core.protectHFS as given: no
// empty, "." or ".." component, no .git component in any case (nor a
// symlink .gitmodules), and with the protections the spellings NTFS and
// HFS+ read as those, NTFS's also after a backslash.
func verifyPath(p string, mode filemode.FileMode, protectNTFS, protectHFS bool) bool {
	link := mode == filemode.Symlink
	i := 0
	for {
		// At the start of a component.
		rest := p[i:]
		if protectHFS && (isHFSDotGit(rest) || link && isHFSDot(rest, "gitmodules")) {
			return false
		}
		if protectNTFS && (isNTFSDotGit(rest) || link && isNTFSDot(rest, "gitmodules", "gi7eba")) {
			return false
		}
		c := at(p, i)
		i++
		if c == '.' && !verifyDotfile(p[min(i, len(p)):], link) || c == '/' || c == 0 {
			return false
		}
		// Through the component.
		for {
			c = at(p, i)
			i++
			if c == 0 {
				return true
			}
			if c == '/' {
				break
			}
			if c == '\\' && protectNTFS {
				rest := p[i:]
				if isNTFSDotGit(rest) || link && isNTFSDot(rest, "gitmodules", "gi7eba") {
					return false
				}
			}
		}
	}
}

// verifyDotfile is verify_dotfile: rest follows a component's leading
// '.'; "." and ".." are refused, ".git" in any case, and for a symlink
// ".gitmodules" in any case, as a name or as a directory above it.
func verifyDotfile(rest string, link bool) bool {
	c := at(rest, 0)
	if c == 0 || c == '/' {
		return false
	}
	switch c {
	case 'g', 'G':
		if lowerASCII(at(rest, 1)) != 'i' || lowerASCII(at(rest, 2)) != 't' {
			break
		}
		if d := at(rest, 3); d == 0 || d == '/' {
			return false
		}
		if link && hasPrefixFold(rest[3:], "modules") {
			if d := at(rest, 10); d == 0 || d == '/' {
				return false
			}
		}
	case '.':
		if d := at(rest, 1); d == 0 || d == '/' {
			return false
		}
	}
	return true
}

// Err refuses a path a commit would record that git refuses.
func Err(alias, p string, r *Rule) error {
	return errs.At(errs.GitPathRejected, alias, p, fmt.Sprintf(
		"is a name git refuses (%s: %s); rename it", r.ID, r.Why))
}
