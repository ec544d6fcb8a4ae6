package fs

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// URLTemplate is a workdir's citation URL (WORKDIR_NN_URL_TEMPLATE or
// --url-template ALIAS=TEMPLATE): an http(s) URL in which {path} stands
// for a file's workdir-relative path and {line} for a line number, e.g.
// https://git.example.com/repo/blob/main/{path}#L{line}. It is validated
// when the configuration loads, so expanding it cannot fail.
type URLTemplate struct {
	parts []string // literal text and placeholders ("{path}", "{line}") in order
}

// maxURLTemplateBytes bounds a template.
const maxURLTemplateBytes = 1024

// ParseURLTemplate validates a template: valid UTF-8 without spaces or
// control characters, at most 1024 bytes, only the placeholders {path}
// (required) and {line}, an http or https URL with a host and without
// credentials, and no placeholder before the path part (a file name never
// becomes the host). The error is worded for the operator.
func ParseURLTemplate(s string) (*URLTemplate, error) {
	switch {
	case s == "":
		return nil, fmt.Errorf("is empty")
	case len(s) > maxURLTemplateBytes:
		return nil, fmt.Errorf("is longer than %d bytes", maxURLTemplateBytes)
	case !utf8.ValidString(s):
		return nil, fmt.Errorf("is not valid UTF-8")
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0:
		return nil, fmt.Errorf("contains spaces or control characters")
	}
	t := &URLTemplate{}
	rest, hasPath := s, false
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			t.parts = append(t.parts, rest)
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("has a '}' without '{'; the placeholders are {path} and {line}")
		}
		if open > 0 {
			t.parts = append(t.parts, rest[:open])
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("has a '{' without '}'; the placeholders are {path} and {line}")
		}
		ph := rest[open : open+end+1]
		switch ph {
		case "{path}":
			hasPath = true
		case "{line}":
		default:
			return nil, fmt.Errorf("has the unknown placeholder %q; the placeholders are {path} and {line}", displayValue(ph))
		}
		t.parts = append(t.parts, ph)
		rest = rest[open+end+1:]
	}
	if !hasPath {
		return nil, fmt.Errorf("has no {path} placeholder")
	}
	u, err := url.Parse(t.Expand("x", 1))
	if err != nil {
		return nil, fmt.Errorf("is not a URL once expanded")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("must start with http:// or https://")
	case u.User != nil:
		return nil, fmt.Errorf("must not carry credentials (user@ or user:password@): every answer would show them")
	case u.Host == "":
		return nil, fmt.Errorf("has no host")
	}
	// The literal text before the first placeholder must hold the whole
	// authority and the start of the path, query or fragment.
	first := t.parts[0]
	if strings.HasPrefix(first, "{") {
		first = ""
	}
	after, _ := strings.CutPrefix(first, u.Scheme+"://")
	if len(after) == len(first) || !strings.ContainsAny(after, "/?#") {
		return nil, fmt.Errorf("must not have a placeholder in the scheme or host: write the host out, then a '/' before {path}")
	}
	return t, nil
}

// Expand is the URL of the file path (workdir-relative, "a/b.txt") at
// line (1 when unknown, for {line}). Each path segment is
// percent-encoded except the unreserved characters (A-Z a-z 0-9 - . _ ~),
// so that a name with '#', '?', '%', '&', spaces or non-ASCII letters
// stays one segment wherever {path} stands: in the path, query or
// fragment.
func (t *URLTemplate) Expand(path string, line int) string {
	var b strings.Builder
	for _, p := range t.parts {
		switch p {
		case "{path}":
			b.WriteString(EscapePath(path))
		case "{line}":
			b.WriteString(strconv.Itoa(max(line, 1)))
		default:
			b.WriteString(p)
		}
	}
	return b.String()
}

// String is the template as configured.
func (t *URLTemplate) String() string { return strings.Join(t.parts, "") }

// EscapePath percent-encodes each '/'-separated segment of path, keeping
// only the unreserved characters of RFC 3986 and the separators.
func EscapePath(path string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}
