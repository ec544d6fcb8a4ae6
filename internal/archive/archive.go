// Package archive reads zip and tar archives (plain, gzip, zstd, bzip2)
// in place, as read-only directories: it lists members, opens one
// member's bytes, or streams every member once (for search). Nothing is
// extracted or cached: every call reads the file as it is now.
//
// Archives are hostile input. Member names are shown escaped and never
// resolved; links and devices are named, never followed; every call is
// bounded in decompressed bytes, expansion ratio, members scanned and
// name length (Limits), and a malformed archive is an ARCHIVE_CORRUPT
// error, never a panic. The caller's path policy is applied to members
// through Options.Filter. Nested archives are not opened: a member that
// is itself an archive is a file.
package archive

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
)

// Format is an archive format; the zero Format is not an archive.
type Format string

// The formats read. Zip covers jar, whl and any other zip container.
const (
	None   Format = ""
	Zip    Format = "zip"
	Tar    Format = "tar"
	TarGz  Format = "tar.gz"
	TarZst Format = "tar.zst"
	TarBz2 Format = "tar.bz2"
)

// Detect tells an archive's format from its name and its first bytes
// (512 suffice; fewer may miss a plain tar). The content decides the
// container; for a compressed stream the name decides whether a tar is
// inside (a plain "app.log.gz" is a compressed log, not an archive).
// Office documents (docx, xlsx, odt) are zips too: a caller that reads
// them as documents checks for them first.
func Detect(name string, head []byte) Format {
	switch {
	case len(head) >= 4 && string(head[:2]) == "PK" &&
		(string(head[2:4]) == "\x03\x04" || string(head[2:4]) == "\x05\x06"):
		return Zip
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		if hasSuffix(name, suffixes[TarGz]) {
			return TarGz
		}
	case len(head) >= 4 && string(head[:4]) == "\x28\xb5\x2f\xfd":
		if hasSuffix(name, suffixes[TarZst]) {
			return TarZst
		}
	case len(head) >= 3 && string(head[:3]) == "BZh":
		if hasSuffix(name, suffixes[TarBz2]) {
			return TarBz2
		}
	case isTarHeader(head):
		return Tar
	}
	return None
}

// suffixes are the names each format goes by.
var suffixes = map[Format][]string{
	Zip:    {".zip", ".jar", ".whl"},
	Tar:    {".tar"},
	TarGz:  {".tar.gz", ".tgz", ".taz"},
	TarZst: {".tar.zst", ".tzst", ".tar.zstd"},
	TarBz2: {".tar.bz2", ".tbz2", ".tbz", ".tb2"},
}

// Named reports whether a file's name is one an archive goes by (Detect
// decides from its first bytes): what a caller checks before it opens
// anything.
func Named(name string) bool {
	for _, s := range suffixes {
		if hasSuffix(name, s) {
			return true
		}
	}
	return false
}

func hasSuffix(name string, suffixes []string) bool {
	lower := strings.ToLower(name)
	for _, s := range suffixes {
		if strings.HasSuffix(lower, s) {
			return true
		}
	}
	return false
}

// isTarHeader reports whether block is a tar header: the ustar magic, or
// (for pre-POSIX v7 archives, which have none) a valid header checksum.
func isTarHeader(block []byte) bool {
	if len(block) < 512 {
		return false
	}
	if string(block[257:262]) == "ustar" {
		return true
	}
	stored := strings.TrimRight(strings.TrimLeft(string(block[148:156]), " "), " \x00")
	if stored == "" {
		return false
	}
	var want int64
	for _, c := range stored {
		if c < '0' || c > '7' {
			return false
		}
		want = want*8 + int64(c-'0')
	}
	var sum int64
	for i, c := range block[:512] {
		if i >= 148 && i < 156 {
			c = ' '
		}
		sum += int64(c)
	}
	return sum == want && sum != 8*' '
}

// Source is an archive file as it is now: read at offsets, of this size.
// Size is taken once per call; an archive that grows or shrinks under a
// call is read as corrupt, never past Size.
type Source struct {
	R    io.ReaderAt
	Size int64
}

// Type is a member's kind.
type Type uint8

// Member types. Links and devices are named, never followed or opened.
const (
	File Type = iota
	Dir
	Symlink
	Hardlink
	CharDevice
	BlockDevice
	Fifo
	Other // a tar type this package does not know
)

var typeNames = [...]string{"file", "dir", "symlink", "hardlink", "char_device", "block_device", "fifo", "other"}

func (t Type) String() string { return typeNames[t] }

// Member describes one member of an archive.
type Member struct {
	// Name is the member's path as shown and as addressed: relative,
	// '/'-separated, without "." or empty components, with "..",
	// control characters, backslashes, invalid UTF-8 and ambiguous '%'
	// escaped as %XX (see DisplayName). Directories have no trailing '/'.
	Name string
	// Escaped: the stored name differed from Name (it was absolute, had
	// "..", a backslash, control characters or invalid UTF-8).
	Escaped bool
	Type    Type
	// Size is the uncompressed size the archive declares (0 but for
	// files); reads end with ARCHIVE_CORRUPT when the data disagrees.
	Size    int64
	Mode    fs.FileMode // permission bits and type
	ModTime time.Time   // zero when the archive records none
	// Link is a symlink's or hard link's target, escaped like Name but
	// kept as stored (absolute or climbing); it is never resolved.
	Link string
	// Implied: a directory without an entry of its own, implied by a
	// member below it.
	Implied bool
	// Encrypted: a zip member that Open refuses with ARCHIVE_ENCRYPTED.
	Encrypted bool
}

// Limits bounds one call. Zero fields take the defaults.
type Limits struct {
	// MaxTotalBytes bounds the bytes decompressed in one call: a
	// compressed tar's stream up to the member wanted, or the members a
	// Walk or Open reads (default 64 GiB: a search over a 1 GB tar.gz of
	// logs reads ~10 GB; the call's deadline bounds its time).
	MaxTotalBytes int64
	// MaxRatio bounds decompressed bytes per compressed byte read, once
	// past RatioSlack. Real logs and sources compress 5-100 times; a
	// bomb of zeros 1,000 (deflate's most is 1,032) and more (zstd,
	// bzip2, a sparse tar member's holes): the default of 256 stops it
	// within its first MiBs past the slack. The compressed bytes counted
	// include a decoder's read-ahead, so a bomb is caught a little late,
	// never early.
	MaxRatio int64
	// MaxMembers bounds the entries a call scans (default 250,000): a
	// call's time is proportional to it, and its memory to it for a zip
	// (the standard library holds its central directory) or to the one
	// directory listed for a tar.
	MaxMembers int
	// MaxNameBytes bounds a member's name and link target (default 4096,
	// PATH_MAX). tar's own bound on PAX and GNU long-name headers (1 MiB)
	// applies before it.
	MaxNameBytes int
}

// Defaults for Limits.
const (
	DefaultMaxTotalBytes = 64 << 30
	DefaultMaxRatio      = 256
	DefaultMaxMembers    = 250_000
	DefaultMaxNameBytes  = 4096
	// RatioSlack: the decompressed bytes allowed before MaxRatio applies,
	// so that a small archive of zeros is not a bomb.
	RatioSlack = 16 << 20
	// DefaultPageSize is List's page when Options.Limit is 0.
	DefaultPageSize = 1000
)

func (l Limits) withDefaults() Limits {
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = DefaultMaxRatio
	}
	if l.MaxMembers <= 0 {
		l.MaxMembers = DefaultMaxMembers
	}
	if l.MaxNameBytes <= 0 {
		l.MaxNameBytes = DefaultMaxNameBytes
	}
	return l
}

// Filter reports whether a member (or a directory above one) may be
// shown: the caller's path policy, given the member's Name. A member is
// visible only when it and every directory above it pass, so a filter
// that judges the last component alone still hides whole subtrees.
type Filter func(name string, isDir bool) bool

// Options are a call's paging, policy and bounds.
type Options struct {
	// Offset and Limit are List's page: the members from Offset, at
	// most Limit of them (DefaultPageSize when 0).
	Offset, Limit int
	// Filter hides members; nil shows all.
	Filter Filter
	Limits Limits
}

// corrupt is the error of a malformed archive.
func corrupt(msg string, cause error) error {
	return errs.New(errs.ArchiveCorrupt, msg).Wrap(cause)
}

// tooLarge is the error of a bound reached.
func tooLarge(msg string) error {
	return errs.New(errs.ArchiveTooLarge, msg)
}

// asCorrupt keeps this package's errors (and the context's, as
// CANCELED) and turns any other failure of a read into ARCHIVE_CORRUPT: a
// decoder's or the archive reader's complaint is about the data.
func asCorrupt(err error, msg string) error {
	var e *errs.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errs.New(errs.Canceled, "reading the archive was cancelled or ran out of time").Wrap(err)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return corrupt(msg+": truncated", err)
	}
	return corrupt(msg, err)
}
