package pdf

import (
	"bytes"
	"io"
	"strconv"
	"strings"
)

// The object model: PDF values as Go values. A dict's keys are names
// without the slash; a str holds a string's bytes as written; a keyword
// is a bare word (an operator in a content stream, "R", "obj", ...).
type (
	name    string
	str     string
	keyword string
	array   []any
	dict    map[name]any
	ref     struct{ num, gen int }
	// stream is a stream object in the file: its dictionary and where its
	// data begins (the file offset past the "stream" line).
	stream struct {
		d   dict
		off int64
	}
)

// lexer reads tokens and objects from a ReaderAt through a window, so
// that a file is never read whole; content streams come as bytes and use
// the same lexer over a bytes.Reader.
type lexer struct {
	ra     io.ReaderAt
	size   int64
	pos    int64
	win    []byte
	winOff int64
	maxLen int // cap on collection sizes and string lengths
	// scratch holds a token's bytes while it is read.
	scratch []byte
}

// window is small: most reads are one small object, and a file's lexer
// is made per object.
const window = 4 << 10

func newLexer(ra io.ReaderAt, size int64, maxLen int) *lexer {
	return &lexer{ra: ra, size: size, maxLen: maxLen}
}

func bytesLexer(b []byte, maxLen int) *lexer {
	return &lexer{ra: bytes.NewReader(b), size: int64(len(b)), win: b, maxLen: maxLen}
}

// byteAt returns the byte at p, filling the window as needed; ok is false
// past the end (or on a read error, which ends the input the same way).
func (l *lexer) byteAt(p int64) (byte, bool) {
	if p >= l.winOff && p < l.winOff+int64(len(l.win)) {
		return l.win[p-l.winOff], true
	}
	if p < 0 || p >= l.size {
		return 0, false
	}
	n := int64(window)
	if p+n > l.size {
		n = l.size - p
	}
	if cap(l.win) < window {
		l.win = make([]byte, window)
	}
	l.win = l.win[:n]
	m, err := l.ra.ReadAt(l.win, p)
	if m <= 0 && err != nil {
		l.win = l.win[:0]
		return 0, false
	}
	l.win, l.winOff = l.win[:m], p
	return l.win[0], true
}

func (l *lexer) peek() (byte, bool) { return l.byteAt(l.pos) }

func (l *lexer) next() (byte, bool) {
	c, ok := l.byteAt(l.pos)
	if ok {
		l.pos++
	}
	return c, ok
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// skipSpace skips white space and comments.
func (l *lexer) skipSpace() {
	for {
		c, ok := l.peek()
		if !ok {
			return
		}
		switch {
		case isSpace(c):
			l.pos++
		case c == '%':
			for {
				c, ok := l.next()
				if !ok || c == '\n' || c == '\r' {
					break
				}
			}
		default:
			return
		}
	}
}

// tokKind is what a token is; delimiters come as tokDelim with their text.
type tokKind int

const (
	tokEOF tokKind = iota
	tokDelim
	tokNum
	tokName
	tokStr
	tokWord
)

type token struct {
	kind tokKind
	s    string  // delimiter, name, string bytes, keyword
	num  float64 // a number's value
	int  bool    // the number was written as an integer
}

// token reads the next token.
func (l *lexer) token() (token, error) {
	l.skipSpace()
	c, ok := l.next()
	if !ok {
		return token{kind: tokEOF}, nil
	}
	switch c {
	case '[', ']', '{', '}':
		return token{kind: tokDelim, s: string(c)}, nil
	case '<':
		if d, _ := l.peek(); d == '<' {
			l.pos++
			return token{kind: tokDelim, s: "<<"}, nil
		}
		return l.hexString()
	case '>':
		if d, _ := l.peek(); d == '>' {
			l.pos++
		}
		return token{kind: tokDelim, s: ">>"}, nil
	case '(':
		return l.litString()
	case '/':
		return token{kind: tokName, s: l.regular(true)}, nil
	case ')':
		return token{kind: tokDelim, s: ")"}, nil
	}
	l.pos--
	wb := l.regularBytes(false)
	if len(wb) == 0 { // a stray byte no token starts with
		l.pos++
		return token{kind: tokWord, s: string(c)}, nil
	}
	if c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9') {
		if f, isInt, ok := plainNumber(wb); ok {
			return token{kind: tokNum, num: f, int: isInt}, nil
		}
	}
	if op, ok := operators[string(wb)]; ok { // no allocation per operator
		return token{kind: tokWord, s: op}, nil
	}
	w := string(wb)
	if c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9') {
		if f, err := strconv.ParseFloat(w, 64); err == nil {
			isInt := true
			for i := 0; i < len(w); i++ {
				if w[i] == '.' || w[i] == 'e' || w[i] == 'E' {
					isInt = false
				}
			}
			return token{kind: tokNum, num: f, int: isInt}, nil
		}
		if f, ok := lenientNumber(w); ok { // "--5", "1.2.3": as readers do
			return token{kind: tokNum, num: f}, nil
		}
	}
	return token{kind: tokWord, s: w}, nil
}

func lenientNumber(w string) (float64, bool) {
	end := 0
	for end < len(w) && (w[end] == '-' || w[end] == '+') {
		end++
	}
	neg := end > 0 && w[end-1] == '-'
	start := end
	dot := false
	for end < len(w) && ((w[end] >= '0' && w[end] <= '9') || (w[end] == '.' && !dot)) {
		dot = dot || w[end] == '.'
		end++
	}
	f, err := strconv.ParseFloat(w[start:end], 64)
	if err != nil {
		return 0, end == start && start > 0 // a lone sign is 0
	}
	if neg {
		f = -f
	}
	return f, true
}

// operators are the words of content streams, CMaps and the file's
// structure, returned without allocating a string for each.
var operators = func() map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(`b B b* B* BDC BI BMC BT BX c cm CS cs d d0 d1 Do DP
		EI EMC ET EX f F f* G g gs h i ID j J K k l m M MP n q Q re RG rg ri s S SC sc
		SCN scn sh T* Tc Td TD Tf Tj TJ TL Tm Tr Ts Tw Tz v w W W* y ' " R obj endobj
		stream endstream xref trailer n f true false null def begin end dup put`) {
		m[w] = w
	}
	return m
}()

// plainNumber parses [+-]digits[.digits] without allocating; ok is false
// for anything else (exponents, junk), left to strconv.
func plainNumber(b []byte) (v float64, isInt, ok bool) {
	i, neg := 0, false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) || len(b) > 18 {
		return 0, false, false
	}
	var mant int64
	scale := 1.0
	isInt = true
	digits := 0
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			mant = mant*10 + int64(c-'0')
			digits++
			if !isInt {
				scale *= 10
			}
		case c == '.' && isInt:
			isInt = false
		default:
			return 0, false, false
		}
	}
	if digits == 0 {
		return 0, false, false
	}
	v = float64(mant) / scale
	if neg {
		v = -v
	}
	return v, isInt, true
}

// regular reads a run of regular characters; a name decodes #xx escapes.
func (l *lexer) regular(isName bool) string {
	return string(l.regularBytes(isName))
}

// regularBytes is regular into a buffer the lexer reuses.
func (l *lexer) regularBytes(isName bool) []byte {
	b := l.scratch[:0]
	defer func() { l.scratch = b[:0] }()
	for len(b) < l.maxLen {
		c, ok := l.peek()
		if !ok || isSpace(c) || isDelim(c) {
			break
		}
		l.pos++
		if isName && c == '#' {
			h1, _ := l.byteAt(l.pos)
			h2, _ := l.byteAt(l.pos + 1)
			if v, ok := unhex(h1, h2); ok {
				l.pos += 2
				c = v
			}
		}
		b = append(b, c)
	}
	return b
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func unhex(a, b byte) (byte, bool) {
	x, ok1 := hexVal(a)
	y, ok2 := hexVal(b)
	return x<<4 | y, ok1 && ok2
}

func (l *lexer) hexString() (token, error) {
	var b []byte
	half, odd := byte(0), false
	for {
		c, ok := l.next()
		if !ok {
			return token{}, errCorrupt("unterminated hex string")
		}
		if c == '>' {
			break
		}
		v, ok := hexVal(c)
		if !ok {
			continue // white space, or junk readers skip
		}
		if odd {
			if len(b) < l.maxLen {
				b = append(b, half<<4|v)
			}
		} else {
			half = v
		}
		odd = !odd
	}
	if odd && len(b) < l.maxLen {
		b = append(b, half<<4)
	}
	return token{kind: tokStr, s: string(b)}, nil
}

func (l *lexer) litString() (token, error) {
	var b []byte
	depth := 1
	for {
		c, ok := l.next()
		if !ok {
			return token{}, errCorrupt("unterminated string")
		}
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return token{kind: tokStr, s: string(b)}, nil
			}
		case '\\':
			c, ok = l.escape()
			if !ok {
				continue
			}
		case '\r': // an end of line in a string is a '\n'
			if d, _ := l.peek(); d == '\n' {
				l.pos++
			}
			c = '\n'
		}
		if len(b) < l.maxLen {
			b = append(b, c)
		}
	}
}

// escape reads what follows a backslash; ok is false for a line
// continuation, which adds nothing.
func (l *lexer) escape() (byte, bool) {
	c, ok := l.next()
	if !ok {
		return 0, false
	}
	switch c {
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case '\r':
		if d, _ := l.peek(); d == '\n' {
			l.pos++
		}
		return 0, false
	case '\n':
		return 0, false
	}
	if c >= '0' && c <= '7' {
		v := c - '0'
		for i := 0; i < 2; i++ {
			d, ok := l.peek()
			if !ok || d < '0' || d > '7' {
				break
			}
			l.pos++
			v = v<<3 | (d - '0')
		}
		return v, true
	}
	return c, true
}

// object reads one value. depth counts the arrays and dictionaries it is
// inside; past maxDepth it fails rather than recursing on. Integers
// followed by "gen R" become refs; a dictionary followed by "stream"
// becomes a stream at the data's offset.
func (l *lexer) object(depth, maxDepth int) (any, error) {
	t, err := l.token()
	if err != nil {
		return nil, err
	}
	return l.objectFrom(t, depth, maxDepth)
}

func (l *lexer) objectFrom(t token, depth, maxDepth int) (any, error) {
	switch t.kind {
	case tokEOF:
		return nil, errCorrupt("unexpected end of data")
	case tokNum:
		if t.int && t.num >= 0 {
			if r, ok := l.tryRef(int(t.num)); ok {
				return r, nil
			}
			return int(t.num), nil
		}
		if t.int {
			return int(t.num), nil
		}
		return t.num, nil
	case tokName:
		return name(t.s), nil
	case tokStr:
		return str(t.s), nil
	case tokWord:
		switch t.s {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "null":
			return nil, nil
		}
		return keyword(t.s), nil
	}
	if depth >= maxDepth && (t.s == "[" || t.s == "<<") {
		return nil, errLimit("objects nested deeper than the limit")
	}
	switch t.s {
	case "[":
		return l.array(depth+1, maxDepth)
	case "<<":
		return l.dict(depth+1, maxDepth)
	}
	return keyword(t.s), nil // a stray delimiter: the caller decides
}

// tryRef reads "gen R" after an integer, or leaves the position as it was.
func (l *lexer) tryRef(num int) (ref, bool) {
	save := l.pos
	g, err := l.token()
	if err == nil && g.kind == tokNum && g.int && g.num >= 0 && g.num < 65536 {
		r, err := l.token()
		if err == nil && r.kind == tokWord && r.s == "R" {
			return ref{num, int(g.num)}, true
		}
	}
	l.pos = save
	return ref{}, false
}

func (l *lexer) array(depth, maxDepth int) (array, error) {
	var a array
	for {
		t, err := l.token()
		if err != nil {
			return nil, err
		}
		if t.kind == tokDelim && t.s == "]" {
			return a, nil
		}
		if t.kind == tokEOF {
			return nil, errCorrupt("unterminated array")
		}
		v, err := l.objectFrom(t, depth, maxDepth)
		if err != nil {
			return nil, err
		}
		if len(a) >= l.maxLen {
			return nil, errLimit("an array longer than the object limit")
		}
		a = append(a, v)
	}
}

func (l *lexer) dict(depth, maxDepth int) (any, error) {
	d := dict{}
	for {
		t, err := l.token()
		if err != nil {
			return nil, err
		}
		if t.kind == tokDelim && t.s == ">>" {
			break
		}
		if t.kind == tokEOF {
			return nil, errCorrupt("unterminated dictionary")
		}
		if t.kind != tokName {
			continue // junk where a key belongs: skipped, as readers do
		}
		v, err := l.object(depth, maxDepth)
		if err != nil {
			return nil, err
		}
		if kw, ok := v.(keyword); ok && (kw == ">>" || kw == "endobj") {
			break // a key without a value at the end
		}
		if len(d) >= l.maxLen {
			return nil, errLimit("a dictionary larger than the object limit")
		}
		d[name(t.s)] = v
	}
	return d, nil
}

// streamAfter returns a stream if "stream" follows the dictionary just
// read, with the offset of its data.
func (l *lexer) streamAfter(d dict) (any, bool) {
	save := l.pos
	t, err := l.token()
	if err != nil || t.kind != tokWord || t.s != "stream" {
		l.pos = save
		return d, false
	}
	if c, _ := l.peek(); c == '\r' {
		l.pos++
	}
	if c, _ := l.peek(); c == '\n' {
		l.pos++
	}
	return &stream{d: d, off: l.pos}, true
}
