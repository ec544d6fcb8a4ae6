package unidiff

// FuncName tells whether a line of the old file (its newline included)
// starts a function, and the text git shows for it after a hunk's "@@"
// (at most funcNameMax bytes, trailing white space trimmed).
type FuncName func(line []byte) (text string, ok bool)

// funcNameMax is the size of git's buffer for a hunk's function text.
const funcNameMax = 80

// DefaultFuncName is git's rule where no diff driver names a pattern: a
// line that starts with a letter, '_' or '$'.
func DefaultFuncName(line []byte) (string, bool) {
	if len(line) == 0 || !(isAlpha(line[0]) || line[0] == '_' || line[0] == '$') {
		return "", false
	}
	return trimFuncText(line), true
}

// TrimFuncText cuts a driver's match to git's buffer and trims trailing
// white space as git does.
func TrimFuncText(match []byte) string { return trimFuncText(match) }

func trimFuncText(b []byte) string {
	b = b[:min(len(b), funcNameMax)]
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return string(b)
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// funcContext finds each hunk's function line as git's xdiff does: from
// the line before the hunk's first old line back to where the previous
// hunk's search began; when nothing is found there, the previous hunk's
// text stands (the function it was in still encloses this hunk).
type funcContext struct {
	name     FuncName
	old      [][]byte
	searched int // the line the previous search started at; -1 before any
	text     string
}

// before returns the header suffix (" text", or "") for a hunk whose old
// side starts at line start (0-based).
func (c *funcContext) before(start int) string {
	if c.name == nil {
		return ""
	}
	from := start - 1
	for l := from; l > c.searched && l >= 0; l-- {
		if text, ok := c.name(c.old[l]); ok {
			c.text = text
			break
		}
	}
	c.searched = from
	if c.text == "" {
		return ""
	}
	return " " + c.text
}
