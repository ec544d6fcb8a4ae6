package fs

import (
	"io"
	"strings"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// Dir is an open directory of a workdir, for engines that need the control
// files the policy hides from agents (".gitignore", ".git/info/exclude").
// What ReadControlFile returns steers ServerFS itself and must never be
// returned to an agent.
type Dir struct {
	Path  string // workdir-relative path, "" for the root
	Depth int    // 0 for a walk's start directory, n for one n levels below

	w     *Workdir
	rel   relPath
	fd    int
	owned bool
	// listing, for the Dirs of a walk, knows the "." names present.
	listing *dotNames
}

// WorkspaceRoot reports whether d is the root of a workspace: a git work
// tree's root without a .git (its .gitignore files apply as in the
// repository it was checked out from).
func (d *Dir) WorkspaceRoot() bool { return d.Path == "" && d.w.workspace != nil }

// OpenDir opens the directory raw under the full path policy. The caller
// must Close it.
func (w *Workdir) OpenDir(raw string) (*Dir, error) {
	fd, rp, _, err := w.openAs(raw, TypeDirectory)
	if err != nil {
		return nil, w.notWalkable(raw, err)
	}
	return &Dir{Path: rp.String(), w: w, rel: rp, fd: fd, owned: true}, nil
}

// FD is the directory's descriptor (O_CLOEXEC), valid until Close: for
// a caller that must start a process in exactly this directory rather
// than in whatever its path names later.
func (d *Dir) FD() int { return d.fd }

// Close releases a Dir from OpenDir; it is a no-op for the Dirs a walk
// passes to WalkOptions.Enter.
func (d *Dir) Close() error {
	if d.owned && d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
	return nil
}

// Has reports whether name (one or more components, e.g. ".git") exists in
// the directory, without following symlinks.
func (d *Dir) Has(name string) bool {
	comps, ok := controlComps(name)
	if !ok || d.listing.absent(comps) {
		return false
	}
	fd, err := d.w.open(d.fd, comps, flagsPath)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// ReadControlFile reads the regular file name (components below this
// directory, e.g. ".gitignore" or ".git/info/exclude") through the same
// symlink-refusing resolver, up to max bytes. Hidden names are allowed here:
// this is ServerFS reading its own control input. It returns
// (nil, false, nil) when the file does not exist, and an error when it is
// not a regular file, unreadable, or larger than max.
func (d *Dir) ReadControlFile(name string, max int64) ([]byte, bool, error) {
	comps, ok := controlComps(name)
	if !ok {
		return nil, false, errs.At(errs.InvalidPath, d.w.alias, d.rel.String(), "bad control file name")
	}
	if d.listing.absent(comps) {
		return nil, false, nil
	}
	rp := relPath{comps: append(append([]string(nil), d.rel.comps...), comps...)}
	fd, _, err := d.w.openVerified(d.fd, comps, rp, TypeFile)
	if err != nil {
		if c := errs.CodeOf(err); c == errs.PathNotFound || c == errs.NotADirectory {
			return nil, false, nil
		}
		return nil, false, err
	}
	f := newFile(fd, d.w.alias+":/"+rp.String())
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, false, readErr(err)
	}
	if int64(len(b)) > max {
		return nil, false, errs.At(errs.ReadLimitExceeded, d.w.alias, rp.String(), "control file is too large")
	}
	return b, true, nil
}

func controlComps(name string) ([]string, bool) {
	comps := strings.Split(name, "/")
	for _, c := range comps {
		if c == "" || c == "." || c == ".." || strings.IndexByte(c, 0) >= 0 {
			return nil, false
		}
	}
	return comps, true
}
