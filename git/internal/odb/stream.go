package odb

import (
	"bufio"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/serverfs/serverfs/git/internal/pack"
	"github.com/serverfs/serverfs/internal/errs"
)

// Object content as a stream: a loose object's zlib data after its
// header, a packed entry's, or a packed delta applied as it is read, its
// base held in memory when small (maxDeltaBaseInMemory) and streamed
// again from its start when a copy goes back, else. Memory is a few zlib
// readers and buffers per delta level, whatever the object's size.

const (
	// maxDeltaBaseInMemory is the largest delta base read whole into
	// memory for a delta applied as a stream.
	maxDeltaBaseInMemory = 8 << 20
	// maxStreamedDeltaDepth bounds the levels of a delta chain applied
	// with streamed bases (each holds zlib readers and buffers).
	maxStreamedDeltaDepth = 64
	// deltaRereadFactor bounds, as a multiple of the result's size (and
	// at least deltaRereadMin), the base bytes a streamed delta inflates
	// again for copies that go back in its base.
	deltaRereadFactor = 8
	deltaRereadMin    = 64 << 20
)

// inflatedBytes counts the bytes object streams have inflated.
var inflatedBytes atomic.Int64

// InflatedBytes is how many bytes object streams have inflated since the
// process started (tests: an object refused from its header costs
// nothing).
func InflatedBytes() int64 { return inflatedBytes.Load() }

// Stream is an object's content being read.
type Stream struct {
	Type plumbing.ObjectType
	Size int64
	rd   io.Reader
	// left is what remains of size; done once the stream was checked to
	// end exactly there.
	left    int64
	done    bool
	closers []io.Closer
}

func (s *Stream) Read(p []byte) (int, error) {
	if s.left == 0 {
		if !s.done {
			// The stream must end here (a zlib stream then checks its
			// Adler-32).
			var b [1]byte
			n, err := s.rd.Read(b[:])
			for stalls := 0; n == 0 && err == nil; stalls++ {
				if stalls == 100 {
					return 0, io.ErrNoProgress
				}
				n, err = s.rd.Read(b[:])
			}
			if n > 0 || err != io.EOF {
				if err == nil || err == io.EOF {
					return 0, damaged("an object longer than its header says")
				}
				return 0, DamageErr(err)
			}
			s.done = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.rd.Read(p)
	s.left -= int64(n)
	if err == io.EOF {
		if s.left > 0 {
			return n, damaged("an object shorter than its header says")
		}
		s.done = true
	} else if err != nil {
		return n, DamageErr(err)
	}
	return n, nil
}

func (s *Stream) Close() error {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i].Close()
	}
	s.closers = nil
	return nil
}

// DamageErr is a read error of an object's data: damage unless it is an
// error of the file system (already a ServerFS error).
func DamageErr(err error) error {
	var se *errs.Error
	if errors.As(err, &se) || errors.Is(err, errObjectDamaged) {
		return err
	}
	return damaged("%v", err)
}

// inflaters pools zlib readers with their input buffers (a zlib reader
// is ~45 KiB: reading many small objects would mostly allocate).
var inflaters sync.Pool

type inflaterKit struct {
	br *bufio.Reader
	zr io.ReadCloser
}

// pooledZlib is a zlib reader over r from the pool, back there when
// closed.
type pooledZlib struct {
	*inflaterKit
}

func newInflater(r io.Reader) (pooledZlib, error) {
	k, _ := inflaters.Get().(*inflaterKit)
	if k == nil {
		k = &inflaterKit{br: bufio.NewReaderSize(r, 16<<10)}
	} else {
		k.br.Reset(r)
	}
	var err error
	if k.zr == nil {
		k.zr, err = zlib.NewReader(k.br)
	} else {
		err = k.zr.(zlib.Resetter).Reset(k.br, nil)
	}
	if err != nil {
		k.zr = nil
		return pooledZlib{}, err
	}
	return pooledZlib{k}, nil
}

func (z pooledZlib) Read(p []byte) (int, error) { return z.zr.Read(p) }

func (z pooledZlib) Close() error {
	if z.inflaterKit != nil {
		z.br.Reset(nil)
		inflaters.Put(z.inflaterKit)
	}
	return nil
}

// countingReader counts what it reads into inflatedBytes.
type countingReader struct{ r io.Reader }

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	inflatedBytes.Add(int64(n))
	return n, err
}

// ErrDeltaReread is a streamed delta whose copies go back in its base
// more than the chain may inflate again.
var ErrDeltaReread = errors.New("a pack delta whose copies go back in its base more than ServerFS inflates again")

// Open opens the content of the object at loc, whose headers are hd
// (taking over loc's open loose file).
func (st *Store) Open(loc Loc, hd Header) (*Stream, error) { return st.openStream(loc, hd, 0, nil) }

// openStream opens the content of the object at loc, whose headers are
// hd (taking over loc's open loose file: its header is read again here,
// and is the stream's). depth counts the delta levels above; reread is
// the base bytes the whole chain may still inflate again (shared by its
// levels; nil: a new chain).
func (st *Store) openStream(loc Loc, hd Header, depth int, reread *int64) (*Stream, error) {
	s := &Stream{Type: hd.Type, Size: hd.Size, left: hd.Size}
	if loc.loose != nil {
		s.closers = append(s.closers, loc.loose)
		if _, err := loc.loose.Seek(0, io.SeekStart); err != nil {
			s.Close()
			return nil, err
		}
		zr, err := newInflater(loc.loose)
		if err != nil {
			s.Close()
			return nil, damaged("a loose object that does not inflate: %v", err)
		}
		s.closers = append(s.closers, zr)
		lh, err := looseHeader(zr)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Type, s.Size, s.left = lh.Type, lh.Size, lh.Size
		s.rd = countingReader{zr}
		return s, nil
	}
	delta := hd.Type == plumbing.OFSDeltaObject || hd.Type == plumbing.REFDeltaObject
	var base *deltaBase
	if delta {
		// The base first (a base read whole holds no file open after):
		// at loc's pack and offset (OFS), or anywhere (REF).
		if depth >= pack.MaxDeltaDepth {
			return nil, damaged("a delta chain deeper than %d", pack.MaxDeltaDepth)
		}
		if reread == nil {
			reread = new(int64)
			*reread = max(deltaRereadMin, deltaRereadFactor*hd.Size)
		}
		locateBase := func() (Loc, error) { return Loc{pack: loc.pack, off: hd.baseOff}, nil }
		if hd.Type == plumbing.REFDeltaObject {
			locateBase = func() (Loc, error) { return st.Locate(hd.baseID) }
		}
		var err error
		if base, err = st.openBase(locateBase, depth+1, reread); err != nil {
			return nil, err
		}
		s.closers = append(s.closers, base)
		s.Type = base.typ
	}
	f, err := st.ctl.Open(st.packList()[loc.pack].base + ".pack")
	if err != nil {
		s.Close()
		return nil, err
	}
	s.closers = append(s.closers, f)
	zr, err := newInflater(io.NewSectionReader(f, hd.dataOff, 1<<62))
	if err != nil {
		s.Close()
		return nil, damaged("a pack entry that does not inflate: %v", err)
	}
	s.closers = append(s.closers, zr)
	if !delta {
		s.rd = countingReader{zr}
		return s, nil
	}
	dr := &deltaReader{delta: bufio.NewReaderSize(countingReader{zr}, 4<<10), base: base, left: hd.Size, reread: reread}
	src, err := dr.varint()
	if err == nil {
		var target int64
		if target, err = dr.varint(); err == nil && (target != hd.Size || src != base.size) {
			err = damaged("a delta whose sizes do not match its base and header")
		}
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	s.rd = dr
	return s, nil
}

// deltaBase is a delta's base: in memory, or a stream opened again from
// its start when a copy goes back past what its window keeps.
type deltaBase struct {
	typ  plumbing.ObjectType
	size int64
	data []byte // in memory; else:
	open func() (*Stream, error)
	cur  *Stream
	pos  int64 // the stream's offset
	// window keeps the last bytes read from the stream (ending at pos),
	// so that a copy going back a little reads no stream again.
	window  []byte
	scratch []byte
}

// deltaBaseWindow is what a streamed base keeps of what it read.
const deltaBaseWindow = 256 << 10

// openBase opens the base of a delta: read whole when small, else as a
// stream.
func (st *Store) openBase(locate func() (Loc, error), depth int, reread *int64) (*deltaBase, error) {
	loc, err := locate()
	if err != nil {
		return nil, err
	}
	hd, err := st.ReadHeader(loc)
	if err != nil {
		loc.Close()
		return nil, err
	}
	if hd.Size <= maxDeltaBaseInMemory {
		s, err := st.openStream(loc, hd, depth, reread)
		if err != nil {
			return nil, err
		}
		defer s.Close()
		data := make([]byte, hd.Size)
		if _, err := io.ReadFull(s, data); err != nil {
			return nil, DamageErr(err)
		}
		if _, err := s.Read(nil); err != io.EOF {
			return nil, DamageErr(err)
		}
		return &deltaBase{typ: s.Type, size: hd.Size, data: data}, nil
	}
	if depth > maxStreamedDeltaDepth {
		loc.Close()
		return nil, errs.At(errs.RepoUnsupported, st.alias, "", fmt.Sprintf("has a pack delta chain of more than %d objects over %d MiB, more than ServerFS applies", maxStreamedDeltaDepth, maxDeltaBaseInMemory>>20))
	}
	s, err := st.openStream(loc, hd, depth, reread)
	if err != nil {
		return nil, err
	}
	b := &deltaBase{typ: s.Type, size: hd.Size, cur: s}
	b.open = func() (*Stream, error) {
		loc, err := locate()
		if err != nil {
			return nil, err
		}
		return st.openStream(loc, hd, depth, reread)
	}
	return b, nil
}

func (b *deltaBase) Close() error {
	if b.cur != nil {
		b.cur.Close()
		b.cur = nil
	}
	return nil
}

// windowStart is the base offset of the window's first byte.
func (b *deltaBase) windowStart() int64 { return b.pos - int64(len(b.window)) }

// goesBack reports whether reading from off needs the stream again.
func (b *deltaBase) goesBack(off int64) bool {
	return b.data == nil && off < b.windowStart()
}

// copyTo fills p with the base's bytes from off.
func (b *deltaBase) copyTo(p []byte, off int64) error {
	if b.data != nil {
		copy(p, b.data[off:])
		return nil
	}
	if b.goesBack(off) {
		b.cur.Close()
		b.cur = nil
		s, err := b.open()
		if err != nil {
			return err
		}
		b.cur, b.pos, b.window = s, 0, b.window[:0]
	}
	if off < b.pos {
		// Within the window.
		n := copy(p, b.window[off-b.windowStart():])
		p, off = p[n:], off+int64(n)
	}
	for stalls := 0; len(p) > 0; {
		skipping := b.pos < off
		chunk := p
		if skipping {
			// Bytes on the way to off.
			if b.scratch == nil {
				b.scratch = make([]byte, 64<<10)
			}
			chunk = b.scratch[:min(off-b.pos, int64(len(b.scratch)))]
		}
		n, err := b.cur.Read(chunk)
		b.keep(chunk[:n])
		if !skipping {
			p, off = p[n:], off+int64(n)
		}
		switch {
		case err == io.EOF && len(p) > 0:
			return damaged("a delta copy past the end of its base")
		case err != nil && err != io.EOF:
			return err
		case n == 0:
			if stalls++; stalls > 100 {
				return io.ErrNoProgress
			}
		default:
			stalls = 0
		}
	}
	return nil
}

// keep records p, just read from the stream, in the window: at least
// the last deltaBaseWindow bytes read, in a buffer of twice that, moved
// down only when full (each byte is moved at most once).
func (b *deltaBase) keep(p []byte) {
	b.pos += int64(len(p))
	if b.window == nil {
		b.window = make([]byte, 0, 2*deltaBaseWindow)
	}
	if len(p) >= deltaBaseWindow {
		b.window = append(b.window[:0], p[len(p)-deltaBaseWindow:]...)
		return
	}
	if len(b.window)+len(p) > cap(b.window) {
		keep := deltaBaseWindow - len(p)
		b.window = b.window[:copy(b.window, b.window[len(b.window)-keep:])]
	}
	b.window = append(b.window, p...)
}

// deltaReader applies a delta (gitformat-pack: copies from the base and
// inserted bytes) as its result is read.
type deltaReader struct {
	delta *bufio.Reader
	base  *deltaBase
	left  int64 // result bytes still to produce
	// The command being carried out: a copy of copyLeft bytes of the
	// base from copyOff, or insLeft inserted bytes.
	copyOff, copyLeft int64
	insLeft           int
	reread            *int64
}

func (d *deltaReader) varint() (int64, error) {
	var v int64
	for shift := 0; ; shift += 7 {
		c, err := d.delta.ReadByte()
		if err != nil || shift > 56 {
			return 0, damaged("a delta whose header does not end")
		}
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
}

func (d *deltaReader) Read(p []byte) (int, error) {
	if d.left == 0 {
		// The delta must end with the result.
		if _, err := d.delta.ReadByte(); err != io.EOF {
			if err == nil {
				return 0, damaged("a delta with data past its result")
			}
			return 0, DamageErr(err)
		}
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && d.left > 0 {
		switch {
		case d.copyLeft > 0:
			k := min(int64(len(p)-n), d.copyLeft)
			if err := d.base.copyTo(p[n:n+int(k)], d.copyOff); err != nil {
				return n, err
			}
			d.copyOff += k
			d.copyLeft -= k
			d.left -= k
			n += int(k)
		case d.insLeft > 0:
			k := min(len(p)-n, d.insLeft)
			m, err := io.ReadFull(d.delta, p[n:n+k])
			n += m
			d.insLeft -= m
			d.left -= int64(m)
			if err != nil {
				return n, damaged("a delta shorter than its commands")
			}
		default:
			if err := d.next(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// next reads the next delta command.
func (d *deltaReader) next() error {
	cmd, err := d.delta.ReadByte()
	if err != nil {
		return damaged("a delta shorter than its result")
	}
	switch {
	case cmd&0x80 != 0:
		var off, n int64
		for i := range 7 {
			if cmd&(1<<i) == 0 {
				continue
			}
			c, err := d.delta.ReadByte()
			if err != nil {
				return damaged("a delta shorter than its commands")
			}
			if i < 4 {
				off |= int64(c) << (8 * i)
			} else {
				n |= int64(c) << (8 * (i - 4))
			}
		}
		if n == 0 {
			n = 0x10000
		}
		if n > d.left || off+n > d.base.size {
			return damaged("a delta copy outside its base or result")
		}
		if d.base.goesBack(off) {
			// The base is inflated again up to off.
			if *d.reread -= off; *d.reread < 0 {
				return ErrDeltaReread
			}
		}
		d.copyOff, d.copyLeft = off, n
	case cmd != 0:
		if int64(cmd) > d.left {
			return damaged("a delta insertion past its result")
		}
		d.insLeft = int(cmd)
	default:
		return damaged("a delta with the reserved command 0")
	}
	return nil
}
