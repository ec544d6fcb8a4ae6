package imagefit

// gifFrames counts a GIF's image descriptors by walking its blocks without
// decompressing any: linear in the file's size, allocating nothing (to
// count frames, gif.DecodeAll would decode them all). A file cut short or
// malformed after its first frame counts what came before; it is called
// only on a file whose first frame decoded, so it answers at least 1.
func gifFrames(data []byte) int {
	const (
		header     = 6 + 7 // signature and version, logical screen descriptor
		extension  = 0x21
		descriptor = 0x2c
		trailer    = 0x3b
	)
	if len(data) < header {
		return 1
	}
	i := header
	if p := data[10]; p&0x80 != 0 {
		i += 3 << (p&7 + 1)
	}
	frames := 0
	for i < len(data) {
		switch data[i] {
		case extension:
			i = skipSubBlocks(data, i+2)
		case descriptor:
			frames++
			if i+10 > len(data) {
				i = len(data)
				break
			}
			next := i + 10
			if p := data[i+9]; p&0x80 != 0 {
				next += 3 << (p&7 + 1)
			}
			i = skipSubBlocks(data, next+1) // +1: the LZW minimum code size
		default: // the trailer, or bytes that are no block
			i = len(data)
		}
	}
	return max(frames, 1)
}

// skipSubBlocks returns the index after the data sub-blocks starting at i
// (each a length byte then that many bytes, ended by a zero length), or
// len(data) when they run past the end.
func skipSubBlocks(data []byte, i int) int {
	for i < len(data) {
		n := int(data[i])
		i++
		if n == 0 {
			return i
		}
		i += n
	}
	return len(data)
}
