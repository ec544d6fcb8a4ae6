package archive

import (
	"archive/tar"
	"archive/zip"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/serverfs/serverfs/internal/decompress"
	"github.com/serverfs/serverfs/internal/errs"
)

// entry is a member as stored, with what reads its data: a zip's file,
// or, while a tar stream is at it, that stream.
type entry struct {
	Member
	zf *zip.File
	tr io.Reader
}

// stream is an archive opened for one pass over its members.
type stream struct {
	g     *guard
	zr    *zip.Reader
	tr    *tar.Reader
	close func()
}

// open starts a pass over src: a zip's central directory, or a tar's
// stream through its decompressor, counted by g.
func open(g *guard, src Source, f Format) (*stream, error) {
	if f == Zip {
		zr, err := zip.NewReader(src.R, src.Size)
		if err != nil {
			return nil, corrupt("not a readable zip archive", err)
		}
		return &stream{g: g, zr: zr, close: func() {}}, nil
	}
	// A plain tar's bytes count once in and once out: its ratio is 1.
	var in io.Reader = &inReader{g: g, r: io.NewSectionReader(src.R, 0, src.Size)}
	closeFn := func() {}
	switch f {
	case Tar:
	case TarGz, TarZst:
		kind := "gz"
		if f == TarZst {
			kind = "zst"
		}
		d, err := decompress.NewReader(g.ctx, kind, in)
		if err != nil {
			return nil, asCorrupt(err, "the archive's compressed stream")
		}
		in, closeFn = d, func() { d.Close() }
	case TarBz2:
		in = bzip2.NewReader(in)
	default:
		return nil, errs.New(errs.UnsupportedFileType, "not an archive")
	}
	return &stream{g: g, tr: tar.NewReader(&outReader{g: g, r: in}), close: closeFn}, nil
}

// each calls fn with every member in stored order, until fn returns
// errStop or an error. A tar entry's data may be read by fn before it
// returns; what it leaves is skipped.
func (s *stream) each(fn func(e entry) error) error {
	lim := s.g.lim
	n := 0
	count := func() error {
		if n++; n > lim.MaxMembers {
			return tooLarge(fmt.Sprintf("more than %d members", lim.MaxMembers))
		}
		return s.g.ctx.Err()
	}
	if s.zr != nil {
		for _, zf := range s.zr.File {
			if err := count(); err != nil {
				return err
			}
			if len(zf.Name) > lim.MaxNameBytes {
				return tooLarge(fmt.Sprintf("a member's name is longer than %d bytes", lim.MaxNameBytes))
			}
			if err := fn(zipEntry(zf)); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		h, err := s.tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return asCorrupt(err, "the archive's next member")
		}
		if err := count(); err != nil {
			return err
		}
		if len(h.Name) > lim.MaxNameBytes || len(h.Linkname) > lim.MaxNameBytes {
			return tooLarge(fmt.Sprintf("a member's name is longer than %d bytes", lim.MaxNameBytes))
		}
		if err := fn(tarEntry(h, s.tr)); err != nil {
			return err
		}
	}
}

// errStop ends a pass early without error.
var errStop = errors.New("stop")

func zipEntry(zf *zip.File) entry {
	m := Member{Size: int64(zf.UncompressedSize64), Mode: zf.Mode(), ModTime: zf.Modified, Encrypted: zf.Flags&1 != 0}
	m.Name, m.Escaped = DisplayName(zf.Name)
	switch {
	case strings.HasSuffix(zf.Name, "/") || m.Mode.IsDir():
		m.Type, m.Size = Dir, 0
	case m.Mode&fs.ModeSymlink != 0:
		m.Type = Symlink // its target is its data: never read
	case m.Mode&fs.ModeDevice != 0 && m.Mode&fs.ModeCharDevice != 0:
		m.Type = CharDevice
	case m.Mode&fs.ModeDevice != 0:
		m.Type = BlockDevice
	case m.Mode&fs.ModeNamedPipe != 0:
		m.Type = Fifo
	case m.Mode&(fs.ModeSocket|fs.ModeIrregular) != 0:
		m.Type = Other
	default:
		m.Type = File
	}
	return entry{Member: m, zf: zf}
}

func tarEntry(h *tar.Header, r io.Reader) entry {
	m := Member{Size: h.Size, Mode: h.FileInfo().Mode(), ModTime: h.ModTime}
	m.Name, m.Escaped = DisplayName(h.Name)
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeGNUSparse, tar.TypeCont:
		m.Type = File
	case tar.TypeDir:
		m.Type, m.Size = Dir, 0
	case tar.TypeSymlink:
		m.Type, m.Link = Symlink, displayLink(h.Linkname)
	case tar.TypeLink:
		m.Type, m.Link = Hardlink, displayLink(h.Linkname)
	case tar.TypeChar:
		m.Type = CharDevice
	case tar.TypeBlock:
		m.Type = BlockDevice
	case tar.TypeFifo:
		m.Type = Fifo
	default:
		m.Type = Other
	}
	if m.Type != File {
		m.Size = 0
	}
	return entry{Member: m, tr: r}
}

// data opens a file entry's bytes, bounded by the guard: a zip member
// checked for encryption, method and declared ratio first.
func (s *stream) data(e entry) (io.ReadCloser, error) {
	if e.zf == nil {
		return io.NopCloser(e.tr), nil
	}
	if e.Encrypted {
		return nil, errs.New(errs.ArchiveEncrypted, "the member is encrypted; it is never decrypted")
	}
	zf := e.zf
	if zf.Method != zip.Store && zf.Method != zip.Deflate {
		return nil, errs.New(errs.UnsupportedFileType, fmt.Sprintf("the member is compressed by method %d; only stored and deflated members are read", zf.Method))
	}
	if u, c := zf.UncompressedSize64, zf.CompressedSize64; u > RatioSlack && u > max(c, 1)*uint64(s.g.lim.MaxRatio) {
		return nil, tooLarge(fmt.Sprintf("the member declares %d bytes from %d: it expands more than %d times", u, c, s.g.lim.MaxRatio))
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, asCorrupt(err, "the member's data")
	}
	// The declared compressed size counts as read: the zip reader reads
	// it from the file at its offset.
	s.g.in += int64(zf.CompressedSize64)
	return struct {
		io.Reader
		io.Closer
	}{&outReader{g: s.g, r: rc}, rc}, nil
}
