package fs

import (
	"github.com/serverfs/serverfs/internal/errs"
	"strings"
	"unicode/utf8"
)

// Path length limits, as Linux enforces them; checked textually so an
// over-long path is INVALID_PATH before any system call.
const (
	maxPathBytes = 4095 // PATH_MAX minus the terminating NUL
	maxNameBytes = 255  // NAME_MAX
)

// relPath is a workdir-relative path after the textual checks: no empty,
// "." or ".." components, never absolute. The zero value is the workdir root.
type relPath struct {
	comps   []string
	wantDir bool // the caller wrote a trailing "/": the target must be a directory
}

// String renders the path the way agents see it: "a/b/c", "" for the root.
func (p relPath) String() string { return strings.Join(p.comps, "/") }

// join returns p/name as a new relPath.
func (p relPath) join(name string) relPath {
	c := make([]string, len(p.comps)+1)
	copy(c, p.comps)
	c[len(p.comps)] = name
	return relPath{comps: c}
}

// base returns the final component, "" for the root.
func (p relPath) base() string {
	if len(p.comps) == 0 {
		return ""
	}
	return p.comps[len(p.comps)-1]
}

// cleanPath applies the textual path rules to an agent-supplied path:
// relative only, valid UTF-8, no NUL, nothing Windows reads as absolute
// (a leading backslash, as in "\\host\share" and "\x", or a drive
// letter, as in "C:\x" and "C:/x"), bounded length; "." and
// empty components are dropped and "a/../b" is folded, but a ".." that would
// climb above the workdir root is PATH_OUTSIDE_WORKDIR. The returned error
// has no Workdir set; callers add it.
//
// Folding ".." textually is safe because the result is then resolved by the
// kernel with symlinks forbidden: "link/../x" never touches "link".
func cleanPath(raw string) (relPath, *errs.Error) {
	shown := displayPath(raw)
	switch {
	case strings.IndexByte(raw, 0) >= 0:
		return relPath{}, errs.At(errs.InvalidPath, "", shown, "contains a NUL byte")
	case !utf8.ValidString(raw):
		return relPath{}, errs.At(errs.InvalidPath, "", shown, "is not valid UTF-8")
	case strings.HasPrefix(raw, `\`):
		return relPath{}, errs.At(errs.InvalidPath, "", shown, "starts with a backslash (a Windows rooted or UNC path); paths are relative to the workdir root, with '/' between components")
	case windowsDrive(raw):
		return relPath{}, errs.At(errs.InvalidPath, "", shown, "starts with a drive letter (a Windows absolute path); paths are relative to the workdir root, with '/' between components")
	case strings.HasPrefix(raw, "/"):
		return relPath{}, errs.At(errs.InvalidPath, "", shown, "is absolute; paths are relative to the workdir root (e.g. \"src/main.go\", \"\" for the root)")
	case len(raw) > maxPathBytes:
		return relPath{}, errs.At(errs.InvalidPath, "", shown, "is longer than 4095 bytes")
	}
	// Any other backslash is an ordinary byte of a file name, as it is
	// on Linux (git and the kernel agree): "a\b.txt" is one component,
	// resolved as one name, so it cannot climb anywhere.
	var p relPath
	p.wantDir = strings.HasSuffix(raw, "/")
	for _, c := range strings.Split(raw, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			if len(p.comps) == 0 {
				return relPath{}, errs.At(errs.PathOutsideWorkdir, "", shown, "climbs above the workdir root")
			}
			p.comps = p.comps[:len(p.comps)-1]
			continue
		}
		if len(c) > maxNameBytes {
			return relPath{}, errs.At(errs.InvalidPath, "", shown, "has a component longer than 255 bytes")
		}
		p.comps = append(p.comps, c)
	}
	// The same Windows rules hold for what the path cleans to: "./\x" and
	// "a/../C:/x" must not become a rooted or drive path that the next
	// cleaning (of a path echoed back by a tool) would refuse.
	if len(p.comps) > 0 {
		switch {
		case strings.HasPrefix(p.comps[0], `\`):
			return relPath{}, errs.At(errs.InvalidPath, "", shown, "starts with a backslash once cleaned (a Windows rooted or UNC path); paths are relative to the workdir root, with '/' between components")
		case windowsDrive(p.String()):
			return relPath{}, errs.At(errs.InvalidPath, "", shown, "starts with a drive letter once cleaned (a Windows absolute path); paths are relative to the workdir root, with '/' between components")
		}
	}
	return p, nil
}

// windowsDrive reports whether raw starts like a Windows drive path: a
// letter and ':' followed by a separator or nothing ("C:", "C:\x", "c:/x").
func windowsDrive(raw string) bool {
	if len(raw) < 2 || raw[1] != ':' {
		return false
	}
	c := raw[0] | 0x20
	return c >= 'a' && c <= 'z' && (len(raw) == 2 || raw[2] == '/' || raw[2] == '\\')
}

// displayPath makes an agent-supplied path safe to echo in an error: bounded
// and without NUL or invalid UTF-8. Agent input never contains host paths.
func displayPath(raw string) string {
	if len(raw) > 200 {
		raw = raw[:200] + "..."
	}
	raw = strings.ToValidUTF8(raw, "\uFFFD")
	return strings.ReplaceAll(raw, "\x00", "\\x00")
}

// DisplayPath makes an agent-supplied string safe to echo in a message:
// bounded, valid UTF-8, NUL shown as \x00.
func DisplayPath(raw string) string { return displayPath(raw) }
