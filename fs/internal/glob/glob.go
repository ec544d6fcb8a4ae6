package glob

import (
	"math/bits"
	"strings"
	"sync"
	"unicode/utf8"
)

// Pattern is a compiled glob. It is safe for concurrent use.
type Pattern struct {
	src string

	// A pattern of one of the common shapes is matched without the
	// automaton (shape != shapeNFA).
	shape          shape
	prefix, suffix string

	prog []inst
	pc   int // start instruction

	// With at most 63 consuming instructions the automaton runs as a bit
	// set: bit i is consuming instruction cons[i], bit 63 the match.
	small  bool
	cons   []int
	start  uint64
	follow []uint64 // per bit: the set reached after it consumes

	pool sync.Pool // *machine, for the general automaton
}

type shape uint8

const (
	shapeNFA       shape = iota
	shapeLiteral         // prefix
	shapePrefix          // prefix then * (no '/' after the prefix)
	shapeSuffix          // * then suffix
	shapeAnyPrefix       // prefix then **
	shapeAnySuffix       // ** then suffix
)

// Compile compiles pattern (see the package comment), or returns an
// *Error.
func Compile(pattern string) (*Pattern, error) {
	n, err := parse(pattern)
	if err != nil {
		return nil, err
	}
	n, _ = globstar(n, true)
	p := &Pattern{src: pattern}
	if p.fastShape(n) {
		return p, nil
	}
	c := &compiler{}
	match := c.emit(inst{op: opMatch})
	p.pc = c.compile(n, match)
	p.prog = c.prog
	p.prepareSmall()
	return p, nil
}

// MustCompile is Compile for patterns known to be valid; it panics on an
// error.
func MustCompile(pattern string) *Pattern {
	p, err := Compile(pattern)
	if err != nil {
		panic(err)
	}
	return p
}

// String returns the pattern text.
func (p *Pattern) String() string { return p.src }

func (p *Pattern) fastShape(n node) bool {
	switch v := n.(type) {
	case nText:
		p.shape, p.prefix = shapeLiteral, v.s
		return true
	case nSeq:
		if len(v) != 2 {
			return false
		}
		if t, ok := v[0].(nText); ok {
			if s, ok := v[1].(nStar); ok {
				p.shape, p.prefix = shapePrefix, t.s
				if s.super {
					p.shape = shapeAnyPrefix
				}
				return true
			}
		}
		if s, ok := v[0].(nStar); ok {
			if t, ok := v[1].(nText); ok {
				p.shape, p.suffix = shapeSuffix, t.s
				if s.super {
					p.shape = shapeAnySuffix
				}
				return true
			}
		}
	}
	return false
}

type opcode uint8

const (
	opMatch opcode = iota
	opSplit        // try out, then out1
	opLit          // the rune r, encoded as in the pattern
	opAny1         // any character but '/'
	opAny          // any character
	opRange        // lo <= c <= hi, or outside when not
	opSet          // c in set, or not in it when not
)

type inst struct {
	op     opcode
	not    bool
	r      rune // opLit
	lo, hi rune // opRange
	set    []rune
	out    int
	out1   int // opSplit
}

// consumes reports whether the instruction matches one character.
func (in *inst) consumes() bool { return in.op >= opLit }

// accepts reports whether the consuming instruction matches the character
// r decoded from w bytes.
func (in *inst) accepts(r rune, w int) bool {
	switch in.op {
	case opLit:
		return r == in.r && (r != utf8.RuneError || w == 3)
	case opAny1:
		return r != '/'
	case opAny:
		return true
	case opRange:
		return (in.lo <= r && r <= in.hi) != in.not
	case opSet:
		for _, c := range in.set {
			if c == r {
				return !in.not
			}
		}
		return in.not
	}
	return false
}

// compiler builds the automaton back to front: compile(n, next) emits the
// instructions matching n and then continuing at next, and returns the
// first one.
type compiler struct{ prog []inst }

func (c *compiler) emit(in inst) int {
	c.prog = append(c.prog, in)
	return len(c.prog) - 1
}

func (c *compiler) compile(n node, next int) int {
	switch v := n.(type) {
	case nVoid:
		return next
	case nText:
		rs := []rune(v.s)
		for i := len(rs) - 1; i >= 0; i-- {
			next = c.emit(inst{op: opLit, r: rs[i], out: next})
		}
		return next
	case nAny1:
		return c.emit(inst{op: opAny1, out: next})
	case nClass:
		if v.ranged {
			return c.emit(inst{op: opRange, not: v.not, lo: v.lo, hi: v.hi, out: next})
		}
		return c.emit(inst{op: opSet, not: v.not, set: v.set, out: next})
	case nStar:
		loop := c.emit(inst{op: opSplit, out1: next})
		op := opAny1
		if v.super {
			op = opAny
		}
		c.prog[loop].out = c.emit(inst{op: op, out: loop})
		return loop
	case nSeq:
		for i := len(v) - 1; i >= 0; i-- {
			next = c.compile(v[i], next)
		}
		return next
	case nAlt:
		pc := c.compile(v[len(v)-1], next)
		for i := len(v) - 2; i >= 0; i-- {
			a := c.compile(v[i], next)
			pc = c.emit(inst{op: opSplit, out: a, out1: pc})
		}
		return pc
	}
	panic("glob: unknown node")
}

const matchBit = 1 << 63

// prepareSmall precomputes the bit-set automaton when the program has at
// most 63 consuming instructions.
func (p *Pattern) prepareSmall() {
	bit := make([]int, len(p.prog))
	for pc := range p.prog {
		bit[pc] = -1
		if p.prog[pc].consumes() {
			if len(p.cons) == 63 {
				p.cons = nil
				return
			}
			bit[pc] = len(p.cons)
			p.cons = append(p.cons, pc)
		}
	}
	seen := make([]bool, len(p.prog))
	closure := func(pc int) uint64 {
		clear(seen)
		var m uint64
		stack := []int{pc}
		for len(stack) > 0 {
			pc := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[pc] {
				continue
			}
			seen[pc] = true
			switch in := &p.prog[pc]; {
			case in.op == opMatch:
				m |= matchBit
			case in.op == opSplit:
				stack = append(stack, in.out1, in.out)
			default:
				m |= 1 << bit[pc]
			}
		}
		return m
	}
	p.small = true
	p.start = closure(p.pc)
	p.follow = make([]uint64, len(p.cons))
	for i, pc := range p.cons {
		p.follow[i] = closure(p.prog[pc].out)
	}
}

// Match reports whether the whole of s matches the pattern. It takes at
// most O(len(pattern) × len(s)) steps and allocates nothing in the steady
// state.
func (p *Pattern) Match(s string) bool {
	switch p.shape {
	case shapeLiteral:
		return s == p.prefix
	case shapePrefix:
		return strings.HasPrefix(s, p.prefix) && strings.IndexByte(s[len(p.prefix):], '/') < 0
	case shapeSuffix:
		return strings.HasSuffix(s, p.suffix) && strings.IndexByte(s[:len(s)-len(p.suffix)], '/') < 0
	case shapeAnyPrefix:
		return strings.HasPrefix(s, p.prefix)
	case shapeAnySuffix:
		return strings.HasSuffix(s, p.suffix)
	}
	if p.small {
		return p.matchSmall(s)
	}
	return p.matchLarge(s)
}

func decode(s string) (rune, int) {
	if c := s[0]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s)
}

func (p *Pattern) matchSmall(s string) bool {
	cur := p.start
	for i := 0; i < len(s); {
		if cur&^matchBit == 0 {
			return false
		}
		r, w := decode(s[i:])
		i += w
		var next uint64
		for m := cur &^ matchBit; m != 0; m &= m - 1 {
			b := bits.TrailingZeros64(m)
			if p.prog[p.cons[b]].accepts(r, w) {
				next |= p.follow[b]
			}
		}
		cur = next
	}
	return cur&matchBit != 0
}

// machine is the state of one general-automaton match (Thompson's
// simulation): the instructions to try on the next character, with a
// generation-stamped visited mark per instruction.
type machine struct {
	mark       []uint32
	gen        uint32
	cur, next  []int32
	stack      []int32
	matchFound bool
}

// add puts pc's closure into m.next.
func (p *Pattern) add(m *machine, pc int) {
	m.stack = append(m.stack[:0], int32(pc))
	for len(m.stack) > 0 {
		pc := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		if m.mark[pc] == m.gen {
			continue
		}
		m.mark[pc] = m.gen
		switch in := &p.prog[pc]; in.op {
		case opMatch:
			m.matchFound = true
		case opSplit:
			m.stack = append(m.stack, int32(in.out1), int32(in.out))
		default:
			m.next = append(m.next, pc)
		}
	}
}

func (p *Pattern) matchLarge(s string) bool {
	m, _ := p.pool.Get().(*machine)
	if m == nil {
		m = &machine{mark: make([]uint32, len(p.prog))}
	}
	defer p.pool.Put(m)
	m.next = m.next[:0]
	m.step()
	p.add(m, p.pc)
	for i := 0; i < len(s); {
		m.cur, m.next = m.next, m.cur[:0]
		if len(m.cur) == 0 {
			return false
		}
		r, w := decode(s[i:])
		i += w
		m.step()
		for _, pc := range m.cur {
			if in := &p.prog[pc]; in.accepts(r, w) {
				p.add(m, in.out)
			}
		}
	}
	return m.matchFound
}

// step starts a new generation of visited marks (and of the match flag).
func (m *machine) step() {
	m.gen++
	if m.gen == 0 {
		clear(m.mark)
		m.gen = 1
	}
	m.matchFound = false
}
