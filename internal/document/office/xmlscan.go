package office

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/serverfs/serverfs/internal/errs"
)

// scanner is a streaming tokenizer of the XML office documents are made
// of. It is not encoding/xml because encoding/xml returns a run of text,
// an attribute or a comment as one token however long it is: a 100 MB
// cell would be 100 MB of heap before any bound could look at it. Here
// text comes in chunks of at most textChunk bytes, comments, processing
// instructions and DOCTYPEs are skipped without being kept, a tag is at
// most maxTag bytes and elements nest at most maxDepth deep. Names are
// matched by their local part (prefixes are the document's choice), and
// only the five predefined entities and character references are known:
// any other entity, such as a billion-laughs DOCTYPE's, is an error.
type scanner struct {
	r        io.Reader
	part     string // member name, for messages
	buf      []byte
	pos, end int
	eof      bool
	rerr     error // the reader's error, returned once the buffer is drained
	started  bool

	depth, maxDepth int
	pendingEnd      bool // a self-closing tag's end comes next
	inCDATA         bool
	carry           []byte // an incomplete rune cut off the previous text chunk

	local []byte // the current start or end tag's local name
	tag   []byte // the current tag's raw bytes
	attrs []attr
	vals  []byte // unescaped attribute values
	text  []byte // the current text chunk, unescaped
}

// attr is one attribute of the current start tag: its name is a slice of
// scanner.tag, its value a range of scanner.vals.
type attr struct {
	prefix, local []byte
	v0, v1        int
}

type token uint8

const (
	tokEOF token = iota
	tokStart
	tokEnd
	tokText
)

const (
	scanBuf   = 64 << 10
	textChunk = 64 << 10
	maxTag    = 1 << 20
)

func newScanner(r io.Reader, part string, maxDepth int) *scanner {
	return &scanner{r: r, part: part, buf: make([]byte, scanBuf), maxDepth: maxDepth}
}

// reset makes s read another part, keeping its buffers.
func (s *scanner) reset(r io.Reader, part string) {
	*s = scanner{r: r, part: part, buf: s.buf, maxDepth: s.maxDepth,
		carry: s.carry[:0], tag: s.tag[:0], attrs: s.attrs[:0], vals: s.vals[:0], text: s.text[:0]}
}

func (s *scanner) corrupt(format string, a ...any) error {
	return errs.New(errs.DocumentCorrupt, s.part+": "+fmt.Sprintf(format, a...))
}

// fill reads more input after compacting the buffer; false at the end
// of the input or on a read error (kept in rerr).
func (s *scanner) fill() bool {
	if s.eof {
		return false
	}
	if s.pos > 0 {
		s.end = copy(s.buf, s.buf[s.pos:s.end])
		s.pos = 0
	}
	for s.end < len(s.buf) {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.rerr = err
			}
			break
		}
		if n > 0 {
			break
		}
	}
	if !s.started && s.end >= 2 {
		s.started = true
		if err := s.skipBOM(); err != nil {
			s.rerr, s.eof = err, true
			s.pos = s.end
		}
	}
	return s.pos < s.end
}

func (s *scanner) skipBOM() error {
	b := s.buf[s.pos:s.end]
	switch {
	case bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")):
		s.pos += 3
	case bytes.HasPrefix(b, []byte("\xFF\xFE")), bytes.HasPrefix(b, []byte("\xFE\xFF")):
		return s.corrupt("UTF-16 XML is not read")
	}
	return nil
}

// ensure makes n bytes available if the input has them.
func (s *scanner) ensure(n int) bool {
	for s.end-s.pos < n {
		if s.eof {
			return false
		}
		if s.pos > 0 || s.end < len(s.buf) {
			s.fill()
		}
	}
	return true
}

// endErr is the error at the end of the input: the reader's, or a
// truncated document's.
func (s *scanner) endErr(what string) error {
	if s.rerr != nil {
		return s.rerr
	}
	return s.corrupt("the XML ends inside %s", what)
}

// Next returns the next token; its name, attributes or text stay valid
// until the following call.
func (s *scanner) Next() (token, error) {
	if s.pendingEnd {
		s.pendingEnd = false
		s.depth--
		return tokEnd, nil
	}
	for {
		if s.inCDATA || len(s.carry) > 0 {
			return s.readText()
		}
		if s.pos >= s.end && !s.fill() {
			if s.rerr != nil {
				return tokEOF, s.rerr
			}
			if s.depth > 0 {
				return tokEOF, s.corrupt("the XML ends inside an element")
			}
			return tokEOF, nil
		}
		if s.buf[s.pos] != '<' {
			return s.readText()
		}
		if !s.ensure(2) {
			return tokEOF, s.endErr("a tag")
		}
		switch s.buf[s.pos+1] {
		case '/':
			return s.readEnd()
		case '?':
			if err := s.skipPast("?>", 2); err != nil {
				return tokEOF, err
			}
		case '!':
			if err := s.readBang(); err != nil {
				return tokEOF, err
			}
		default:
			return s.readStart()
		}
	}
}

// readBang handles "<!": a comment or a DOCTYPE is skipped, a CDATA
// section becomes text.
func (s *scanner) readBang() error {
	s.ensure(9)
	b := s.buf[s.pos:s.end]
	switch {
	case bytes.HasPrefix(b, []byte("<!--")):
		return s.skipPast("-->", 4)
	case bytes.HasPrefix(b, []byte("<![CDATA[")):
		s.pos += 9
		s.inCDATA = true
		return nil
	}
	return s.skipDirective()
}

// skipPast skips from+len bytes then everything up to and past end,
// keeping nothing.
func (s *scanner) skipPast(end string, from int) error {
	s.pos += from
	for {
		if !s.ensure(len(end)) {
			return s.endErr("a comment or processing instruction")
		}
		b := s.buf[s.pos:s.end]
		if i := bytes.Index(b, []byte(end)); i >= 0 {
			s.pos += i + len(end)
			return nil
		}
		s.pos += len(b) - (len(end) - 1)
	}
}

// skipDirective skips a "<!DOCTYPE ...>", with its internal subset's
// nested declarations and quoted strings.
func (s *scanner) skipDirective() error {
	s.pos += 2
	nest, quote := 0, byte(0)
	for {
		if s.pos >= s.end && !s.fill() {
			return s.endErr("a DOCTYPE")
		}
		c := s.buf[s.pos]
		s.pos++
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '<':
			nest++
		case c == '>' && nest == 0:
			return nil
		case c == '>':
			nest--
		}
	}
}

// readText reads a chunk of text (or of a CDATA section) up to the next
// markup, at most about textChunk bytes, cut at a rune boundary.
func (s *scanner) readText() (token, error) {
	s.text = append(s.text[:0], s.carry...)
	s.carry = s.carry[:0]
	for len(s.text) < textChunk {
		if s.inCDATA {
			done, err := s.cdataPiece()
			if err != nil {
				return tokEOF, err
			}
			if done {
				break
			}
			continue
		}
		if s.pos >= s.end && !s.fill() {
			break
		}
		b := s.buf[s.pos:s.end]
		i := 0
		for i < len(b) && b[i] != '<' && b[i] != '&' {
			i++
		}
		s.text = append(s.text, b[:i]...)
		s.pos += i
		if i == len(b) {
			continue
		}
		if b[i] == '<' {
			break
		}
		if err := s.entity(); err != nil {
			return tokEOF, err
		}
	}
	if len(s.text) >= textChunk {
		// Cut an incomplete rune off: it continues in the next chunk.
		cut := runeCut(s.text)
		s.carry = append(s.carry, s.text[cut:]...)
		s.text = s.text[:cut]
	}
	if len(s.text) == 0 && len(s.carry) == 0 && !s.inCDATA {
		// Only at the end of the input: any other byte is text or markup.
		return s.Next()
	}
	return tokText, nil
}

// cdataPiece appends the CDATA section's bytes up to its end or the
// buffer's; done at its end.
func (s *scanner) cdataPiece() (bool, error) {
	if !s.ensure(3) {
		return false, s.endErr("a CDATA section")
	}
	b := s.buf[s.pos:s.end]
	if i := bytes.Index(b, []byte("]]>")); i >= 0 {
		s.text = append(s.text, b[:i]...)
		s.pos += i + 3
		s.inCDATA = false
		return true, nil
	}
	n := len(b) - 2
	s.text = append(s.text, b[:n]...)
	s.pos += n
	return false, nil
}

// runeCut returns the length of b without an incomplete rune at its end.
func runeCut(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// entity decodes the reference at s.pos ("&amp;", "&#10;") into s.text.
func (s *scanner) entity() error {
	s.ensure(16)
	b := s.buf[s.pos:s.end]
	i := bytes.IndexByte(b[:min(len(b), 16)], ';')
	if i < 0 {
		return s.corrupt("a bare '&' or an overlong reference")
	}
	var err error
	s.text, err = s.appendEntity(s.text, b[1:i])
	s.pos += i + 1
	return err
}

func (s *scanner) appendEntity(dst, name []byte) ([]byte, error) {
	switch string(name) {
	case "amp":
		return append(dst, '&'), nil
	case "lt":
		return append(dst, '<'), nil
	case "gt":
		return append(dst, '>'), nil
	case "quot":
		return append(dst, '"'), nil
	case "apos":
		return append(dst, '\''), nil
	}
	if len(name) > 1 && name[0] == '#' {
		base, digits := 10, name[1:]
		if digits[0] == 'x' || digits[0] == 'X' {
			base, digits = 16, digits[1:]
		}
		n, err := strconv.ParseUint(string(digits), base, 32)
		if err != nil {
			return dst, s.corrupt("a bad character reference &%s;", name)
		}
		r := rune(n)
		if !utf8.ValidRune(r) {
			r = utf8.RuneError
		}
		return utf8.AppendRune(dst, r), nil
	}
	return dst, s.corrupt("an undefined entity &%s; (only XML's own are read)", name)
}

// readTag collects a tag's bytes, from '<' to its '>' outside quotes,
// into s.tag.
func (s *scanner) readTag() error {
	s.tag = s.tag[:0]
	quote := byte(0)
	for {
		if s.pos >= s.end && !s.fill() {
			return s.endErr("a tag")
		}
		b := s.buf[s.pos:s.end]
		for i, c := range b {
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '"' || c == '\'':
				quote = c
			case c == '>':
				s.tag = append(s.tag, b[:i+1]...)
				s.pos += i + 1
				return nil
			}
		}
		s.tag = append(s.tag, b...)
		s.pos = s.end
		if len(s.tag) > maxTag {
			return errs.New(errs.DocumentTooLarge, fmt.Sprintf("%s: an XML tag longer than %d bytes", s.part, maxTag))
		}
	}
}

func (s *scanner) readEnd() (token, error) {
	if err := s.readTag(); err != nil {
		return tokEOF, err
	}
	name := bytes.TrimSpace(s.tag[2 : len(s.tag)-1])
	if len(name) == 0 {
		return tokEOF, s.corrupt("an end tag without a name")
	}
	if s.depth == 0 {
		return tokEOF, s.corrupt("an end tag </%s> without its start", name)
	}
	s.depth--
	s.local = localName(name)
	return tokEnd, nil
}

func (s *scanner) readStart() (token, error) {
	if err := s.readTag(); err != nil {
		return tokEOF, err
	}
	t := s.tag[1 : len(s.tag)-1]
	if n := len(t); n > 0 && t[n-1] == '/' {
		s.pendingEnd = true
		t = t[:n-1]
	}
	i := 0
	for i < len(t) && !isSpace(t[i]) {
		i++
	}
	if i == 0 {
		return tokEOF, s.corrupt("a tag without a name")
	}
	s.local = localName(t[:i])
	if err := s.parseAttrs(t[i:]); err != nil {
		return tokEOF, err
	}
	s.depth++
	if s.depth > s.maxDepth {
		return tokEOF, errs.New(errs.DocumentTooLarge, fmt.Sprintf("%s: XML elements nested more than %d deep", s.part, s.maxDepth))
	}
	return tokStart, nil
}

// parseAttrs reads name="value" pairs; values are unescaped into s.vals.
func (s *scanner) parseAttrs(t []byte) error {
	s.attrs, s.vals = s.attrs[:0], s.vals[:0]
	for {
		t = bytes.TrimLeft(t, " \t\r\n")
		if len(t) == 0 {
			return nil
		}
		eq := bytes.IndexByte(t, '=')
		if eq <= 0 {
			return s.corrupt("an attribute without a value")
		}
		name := bytes.TrimRight(t[:eq], " \t\r\n")
		t = bytes.TrimLeft(t[eq+1:], " \t\r\n")
		if len(t) == 0 || (t[0] != '"' && t[0] != '\'') {
			return s.corrupt("an unquoted attribute value")
		}
		end := bytes.IndexByte(t[1:], t[0])
		if end < 0 {
			return s.corrupt("an unterminated attribute value")
		}
		v0 := len(s.vals)
		if err := s.unescapeAttr(t[1 : 1+end]); err != nil {
			return err
		}
		a := attr{local: localName(name), v0: v0, v1: len(s.vals)}
		if c := bytes.IndexByte(name, ':'); c >= 0 {
			a.prefix = name[:c]
		}
		s.attrs = append(s.attrs, a)
		t = t[end+2:]
	}
}

func (s *scanner) unescapeAttr(v []byte) error {
	for {
		i := bytes.IndexByte(v, '&')
		if i < 0 {
			s.vals = append(s.vals, v...)
			return nil
		}
		s.vals = append(s.vals, v[:i]...)
		j := bytes.IndexByte(v[i:], ';')
		if j < 0 || j > 16 {
			return s.corrupt("a bare '&' in an attribute value")
		}
		var err error
		if s.vals, err = s.appendEntity(s.vals, v[i+1:i+j]); err != nil {
			return err
		}
		v = v[i+j+1:]
	}
}

// attr returns the value of the current start tag's attribute with that
// local name (the first one), and whether it has one.
func (s *scanner) attr(local string) ([]byte, bool) {
	for _, a := range s.attrs {
		if string(a.local) == local {
			return s.vals[a.v0:a.v1], true
		}
	}
	return nil, false
}

// attrPrefixed is attr for a prefixed attribute only: r:id, not id.
func (s *scanner) attrPrefixed(local string) []byte {
	for _, a := range s.attrs {
		if len(a.prefix) > 0 && string(a.local) == local {
			return s.vals[a.v0:a.v1]
		}
	}
	return nil
}

// is says whether the current tag's local name is name.
func (s *scanner) is(name string) bool { return string(s.local) == name }

// skip consumes the rest of the element whose start was just returned.
func (s *scanner) skip() error {
	target := s.depth - 1
	for s.depth > target {
		tok, err := s.Next()
		if err != nil {
			return err
		}
		if tok == tokEOF {
			return s.corrupt("the XML ends inside an element")
		}
	}
	return nil
}

func localName(name []byte) []byte {
	if i := bytes.LastIndexByte(name, ':'); i >= 0 {
		return name[i+1:]
	}
	return name
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
