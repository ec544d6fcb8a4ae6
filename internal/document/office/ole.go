package office

import (
	"bytes"
	"encoding/binary"
	"io"
	"unicode/utf16"
)

// oleMagic begins an OLE compound file: a legacy .doc/.xls/.ppt, or an
// encrypted OOXML document (its zip sealed in an EncryptedPackage stream
// described by an EncryptionInfo stream).
var oleMagic = []byte("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1")

func isOLE(r io.ReaderAt, size int64) bool {
	var b [8]byte
	if size < 512 {
		return false
	}
	if _, err := r.ReadAt(b[:], 0); err != nil {
		return false
	}
	return bytes.Equal(b[:], oleMagic)
}

// encryptionInfo is the stream name in a directory entry (UTF-16LE).
var encryptionInfo = utf16le("EncryptionInfo")

func utf16le(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return b
}

// oleEncrypted says whether an OLE file's first directory sector names
// an EncryptionInfo stream: the mark of an encrypted OOXML package (its
// root directory is small and comes first).
func oleEncrypted(r io.ReaderAt, size int64) bool {
	var h [512]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return false
	}
	shift := binary.LittleEndian.Uint16(h[30:])
	if shift != 9 && shift != 12 {
		return false
	}
	sector := int64(1) << shift
	first := int64(binary.LittleEndian.Uint32(h[48:]))
	off := (first + 1) * sector
	if first >= 0xFFFFFFFA || off >= size {
		return false
	}
	dir := make([]byte, min(sector, size-off))
	n, _ := r.ReadAt(dir, off)
	return bytes.Contains(dir[:n], encryptionInfo)
}
