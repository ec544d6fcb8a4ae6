package pdf

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/ascii85"
	"io"
)

// errInflated says a stream was cut at the call's budget of decompressed
// bytes (MaxStream): what came before it is returned with it.
var errInflated = errLimit("streams decompressed past the limit")

// streamData returns a stream's data with its filters undone. It reads no
// more than the file holds and decompresses no more than what is left of
// MaxStream; past that it returns the bytes so far and errInflated.
func (f *file) streamData(s *stream) ([]byte, error) {
	n, err := f.streamLen(s)
	if err != nil {
		return nil, err
	}
	var rd io.Reader = io.NewSectionReader(f.ra, s.off, n)
	filters, _ := f.resolve(s.d["Filter"])
	parms, _ := f.resolve(s.d["DecodeParms"])
	if parms == nil {
		parms, _ = f.resolve(s.d["DP"])
	}
	var fs, ps array
	switch v := filters.(type) {
	case name:
		fs, ps = array{v}, array{parms}
	case array:
		fs = v
		ps, _ = parms.(array)
	}
	if len(fs) > 8 {
		return nil, errCorrupt("too many filters")
	}
	for i, fl := range fs {
		var p dict
		if i < len(ps) {
			pv, _ := f.resolve(ps[i])
			p, _ = pv.(dict)
		}
		nm, _ := fl.(name)
		if rd, err = f.decoder(rd, nm, p); err != nil {
			return nil, err
		}
	}
	left := f.lim.MaxStream - f.inflate
	data, err := readChunks(io.LimitReader(rd, left+1))
	if int64(len(data)) > left {
		f.inflate = f.lim.MaxStream
		return data[:left], errInflated
	}
	f.inflate += int64(len(data))
	if err != nil && !isLimit(err) {
		// A damaged stream gives what it decoded before the damage.
		return data, nil
	}
	return data, err
}

// readChunks reads rd to its end in chunks joined once at the end, so
// that a stream costs twice its size at most (doubling a buffer costs
// up to four times).
func readChunks(rd io.Reader) ([]byte, error) {
	const chunk = 256 << 10
	var chunks [][]byte
	total := 0
	for {
		b := make([]byte, chunk)
		n, err := io.ReadFull(rd, b)
		if n > 0 {
			chunks = append(chunks, b[:n])
			total += n
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = nil
		}
		if n < chunk || err != nil {
			if len(chunks) == 1 {
				return chunks[0], err
			}
			out := make([]byte, 0, total)
			for _, c := range chunks {
				out = append(out, c...)
			}
			return out, err
		}
	}
}

// streamLen is /Length where "endstream" follows it, else the distance
// to the next "endstream" (a wrong /Length is common in damaged files).
func (f *file) streamLen(s *stream) (int64, error) {
	lv, err := f.resolve(s.d["Length"])
	if err != nil {
		return 0, err
	}
	n, _ := lv.(int)
	end := s.off + int64(n)
	if n >= 0 && end <= f.size {
		l := f.lexerAt(end)
		if t, _ := l.token(); t.kind == tokWord && t.s == "endstream" {
			return int64(n), nil
		}
	}
	const chunk = 64 << 10
	buf := make([]byte, chunk+9)
	for base := s.off; base < f.size; base += chunk {
		k, _ := f.ra.ReadAt(buf, base)
		if i := bytes.Index(buf[:k], []byte("endstream")); i >= 0 {
			return trimEOL(base + int64(i) - s.off), nil
		}
		if k < len(buf) {
			break
		}
	}
	return f.size - s.off, nil
}

// trimEOL leaves the end of line before "endstream" out of a length found
// by searching: it belongs to the syntax, not the data.
func trimEOL(n int64) int64 {
	if n > 0 {
		n--
	}
	return n
}

func (f *file) decoder(rd io.Reader, nm name, p dict) (io.Reader, error) {
	switch nm {
	case "FlateDecode", "Fl":
		br := bufio.NewReader(rd)
		var zr io.Reader
		if h, err := br.Peek(2); err == nil && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 && h[0]&0x0f == 8 {
			z, err := zlib.NewReader(br)
			if err != nil {
				return nil, errCorrupt("bad zlib stream")
			}
			zr = z
		} else {
			zr = flate.NewReader(br) // raw deflate, as some writers emit
		}
		return predictor(zr, p)
	case "ASCIIHexDecode", "AHx":
		return &hexReader{r: bufio.NewReader(rd)}, nil
	case "ASCII85Decode", "A85":
		return ascii85.NewDecoder(&a85Trim{r: bufio.NewReader(rd)}), nil
	case "LZWDecode", "LZW":
		early := true
		if v, ok := p["EarlyChange"].(int); ok && v == 0 {
			early = false
		}
		return predictor(newLZW(rd, early), p)
	case "RunLengthDecode", "RL":
		return &rlReader{r: bufio.NewReader(rd)}, nil
	}
	return nil, errCorrupt("unsupported filter " + string(nm))
}

// predictor undoes a PNG predictor (/Predictor >= 10), the one cross-
// reference streams use; TIFF predictor 2 is rare in text and left as is.
func predictor(rd io.Reader, p dict) (io.Reader, error) {
	pred, _ := p["Predictor"].(int)
	if pred < 10 {
		return rd, nil
	}
	cols, colors, bpc := 1, 1, 8
	if v, ok := p["Columns"].(int); ok {
		cols = v
	}
	if v, ok := p["Colors"].(int); ok {
		colors = v
	}
	if v, ok := p["BitsPerComponent"].(int); ok {
		bpc = v
	}
	if cols < 1 || cols > 1<<16 || colors < 1 || colors > 32 || bpc < 1 || bpc > 16 {
		return nil, errCorrupt("bad predictor parameters")
	}
	bpp := (colors*bpc + 7) / 8
	row := (cols*colors*bpc + 7) / 8
	return &pngReader{r: rd, bpp: bpp, cur: make([]byte, row+1), prev: make([]byte, row+1)}, nil
}

type pngReader struct {
	r         io.Reader
	bpp       int
	cur, prev []byte
	out       []byte
}

func (p *pngReader) Read(b []byte) (int, error) {
	for len(p.out) == 0 {
		if _, err := io.ReadFull(p.r, p.cur); err != nil {
			return 0, io.EOF // a partial last row is dropped
		}
		row, prev := p.cur[1:], p.prev[1:]
		for i := range row {
			var left, up, ul byte
			if i >= p.bpp {
				left, ul = row[i-p.bpp], prev[i-p.bpp]
			}
			up = prev[i]
			switch p.cur[0] {
			case 1:
				row[i] += left
			case 2:
				row[i] += up
			case 3:
				row[i] += byte((int(left) + int(up)) / 2)
			case 4:
				row[i] += paeth(left, up, ul)
			}
		}
		p.cur, p.prev = p.prev, p.cur
		p.out = p.prev[1:]
	}
	n := copy(b, p.out)
	p.out = p.out[n:]
	return n, nil
}

func paeth(a, b, c byte) byte {
	p := int(a) + int(b) - int(c)
	pa, pb, pc := abs(p-int(a)), abs(p-int(b)), abs(p-int(c))
	if pa <= pb && pa <= pc {
		return a
	}
	if pb <= pc {
		return b
	}
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

type hexReader struct {
	r *bufio.Reader
}

func (h *hexReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		var v [2]byte
		k := 0
		for k < 2 {
			c, err := h.r.ReadByte()
			if err != nil || c == '>' {
				if k == 1 {
					b[n] = v[0] << 4
					n++
				}
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			if x, ok := hexVal(c); ok {
				v[k] = x
				k++
			}
		}
		b[n] = v[0]<<4 | v[1]
		n++
	}
	return n, nil
}

// a85Trim ends ASCII85 data at its "~>" and drops white space the
// decoder would otherwise see past the end.
type a85Trim struct {
	r    *bufio.Reader
	done bool
}

func (a *a85Trim) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) && !a.done {
		c, err := a.r.ReadByte()
		if err != nil || c == '~' {
			a.done = true
			break
		}
		b[n] = c
		n++
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

type rlReader struct {
	r   *bufio.Reader
	out []byte
}

func (r *rlReader) Read(b []byte) (int, error) {
	for len(r.out) == 0 {
		c, err := r.r.ReadByte()
		if err != nil || c == 128 {
			return 0, io.EOF
		}
		if c < 128 {
			r.out = make([]byte, int(c)+1)
			if _, err := io.ReadFull(r.r, r.out); err != nil {
				return 0, io.EOF
			}
		} else {
			d, err := r.r.ReadByte()
			if err != nil {
				return 0, io.EOF
			}
			r.out = bytes.Repeat([]byte{d}, 257-int(c))
		}
	}
	n := copy(b, r.out)
	r.out = r.out[n:]
	return n, nil
}

// lzwReader decodes PDF's LZW (MSB first, 9 to 12 bit codes, with the
// "early change" PDF defaults to, which compress/lzw lacks).
type lzwReader struct {
	r     *bufio.Reader
	early int
	bits  uint32
	nbits uint
	width uint
	table [][]byte
	prev  []byte
	out   []byte
	done  bool
}

func newLZW(rd io.Reader, early bool) *lzwReader {
	z := &lzwReader{r: bufio.NewReader(rd), width: 9}
	if early {
		z.early = 1
	}
	z.reset()
	return z
}

func (z *lzwReader) reset() {
	z.table = z.table[:0]
	for i := 0; i < 256; i++ {
		z.table = append(z.table, []byte{byte(i)})
	}
	z.table = append(z.table, nil, nil) // 256 clear, 257 end
	z.width, z.prev = 9, nil
}

func (z *lzwReader) code() (int, bool) {
	for z.nbits < z.width {
		c, err := z.r.ReadByte()
		if err != nil {
			return 0, false
		}
		z.bits = z.bits<<8 | uint32(c)
		z.nbits += 8
	}
	z.nbits -= z.width
	return int(z.bits>>z.nbits) & (1<<z.width - 1), true
}

func (z *lzwReader) Read(b []byte) (int, error) {
	for len(z.out) == 0 {
		if z.done {
			return 0, io.EOF
		}
		c, ok := z.code()
		switch {
		case !ok || c == 257:
			z.done = true
			continue
		case c == 256:
			z.reset()
			continue
		}
		var entry []byte
		switch {
		case c < len(z.table) && z.table[c] != nil:
			entry = z.table[c]
		case c == len(z.table) && z.prev != nil:
			entry = append(append([]byte{}, z.prev...), z.prev[0])
		default:
			z.done = true
			continue
		}
		if z.prev != nil && len(z.table) < 4096 {
			z.table = append(z.table, append(append([]byte{}, z.prev...), entry[0]))
		}
		z.prev = entry
		if n := len(z.table) + z.early; n >= 1<<z.width && z.width < 12 {
			z.width++
		}
		z.out = entry
	}
	n := copy(b, z.out)
	z.out = z.out[n:]
	return n, nil
}
