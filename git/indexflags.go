package git

import (
	"encoding/binary"
	"errors"
)

// assumeValidFlags scans the raw index and reports, per entry in file
// order (the order go-git's decoder appends them), whether its
// "assume valid" bit (git update-index --assume-unchanged) is set. go-git
// v5.19.3 reads the bit but drops it; git treats such an entry as
// unchanged without looking at the work tree.
func assumeValidFlags(b []byte) ([]bool, error) {
	errBad := errors.New("index: unexpected layout")
	if len(b) < 12 || string(b[:4]) != "DIRC" {
		return nil, errBad
	}
	version := binary.BigEndian.Uint32(b[4:8])
	n := int(binary.BigEndian.Uint32(b[8:12]))
	if version < 2 || version > 4 || n < 0 || n > len(b)/62 {
		return nil, errBad
	}
	out := make([]bool, n)
	pos := 12
	for i := range n {
		start := pos
		if pos+62 > len(b) {
			return nil, errBad
		}
		flags := binary.BigEndian.Uint16(b[pos+60 : pos+62])
		out[i] = flags&0x8000 != 0
		pos += 62
		if flags&0x4000 != 0 { // extended flags (v3+)
			pos += 2
		}
		if version == 4 {
			// A varint (how many bytes to strip from the previous name),
			// then the NUL-terminated rest of the name; no padding.
			for pos < len(b) && b[pos]&0x80 != 0 {
				pos++
			}
			pos++
			for pos < len(b) && b[pos] != 0 {
				pos++
			}
			pos++
		} else {
			for pos < len(b) && b[pos] != 0 {
				pos++
			}
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
			pos = start + ((pos-start)/8+1)*8
		}
		if pos > len(b) {
			return nil, errBad
		}
	}
	return out, nil
}
