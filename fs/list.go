package fs

import (
	"fmt"
	"sort"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// Entry is one listed directory entry. Size is set for regular files only;
// a symlink's target is never read.
type Entry struct {
	Name       string    `json:"name"`
	Path       string    `json:"path"`
	Type       EntryType `json:"type"`
	Size       *int64    `json:"size,omitempty"`
	ModifiedAt string    `json:"modified_at,omitempty"`
}

// Listing is one page of a directory listing.
type Listing struct {
	Workdir    string  `json:"workdir"`
	Path       string  `json:"path"`
	Entries    []Entry `json:"entries"`
	Offset     int     `json:"offset"`
	Limit      int     `json:"limit"`
	Returned   int     `json:"returned"`
	Total      int     `json:"total"`
	HasMore    bool    `json:"has_more"`
	NextOffset *int    `json:"next_offset,omitempty"`
}

// List returns entries offset..offset+limit of the directory raw, sorted by
// name (byte order), with hidden and denied entries left out. limit 0 means
// the default; it may not exceed Limits.MaxListEntries. Only the entries of
// the returned page are stat'ed, so a large directory costs one read of its
// names. A directory with more than Limits.MaxWalkEntries entries is
// DIRECTORY_TOO_LARGE: it cannot be listed in a stable order within bounds.
func (f *FS) List(alias, raw string, offset, limit int) (*Listing, error) {
	w, err := f.Workdir(alias)
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = f.limits.DefaultListLimit
	}
	if offset < 0 || limit < 1 || limit > f.limits.MaxListEntries {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("offset must be >= 0 and limit between 1 and %d", f.limits.MaxListEntries))
	}
	if a, ok, _ := w.archiveAt(raw, true); ok {
		defer a.Close()
		return f.listArchive(w, a, offset, limit)
	}
	fd, rp, _, err := w.openAs(raw, TypeDirectory)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	ents, more, rerr := readDirents(fd, f.limits.MaxWalkEntries)
	if rerr != nil {
		return nil, errnoError(w.alias, rp, rerr)
	}
	if more {
		return nil, errs.At(errs.DirectoryTooLarge, w.alias, rp.String(), fmt.Sprintf("holds more than %d entries; use find_files with a pattern instead", f.limits.MaxWalkEntries))
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if f.policy.visible(rp, e.name) {
			names = append(names, e.name)
		}
	}
	sort.Strings(names)

	l := &Listing{Workdir: w.alias, Path: rp.String(), Entries: []Entry{}, Offset: offset, Limit: limit, Total: len(names)}
	if offset < len(names) {
		end := min(offset+limit, len(names))
		for _, name := range names[offset:end] {
			l.Entries = append(l.Entries, w.entryAt(fd, rp, name))
		}
		if end < len(names) {
			l.HasMore = true
			l.NextOffset = &end
		}
	}
	l.Returned = len(l.Entries)
	return l, nil
}

// entryAt describes name inside the open directory dirfd with fstatat and
// AT_SYMLINK_NOFOLLOW: nothing is followed or opened. An entry that vanished
// since the directory was read is reported as TypeOther without metadata.
func (w *Workdir) entryAt(dirfd int, dir relPath, name string) Entry {
	e := Entry{Name: name, Path: dir.join(name).String(), Type: TypeOther}
	var st unix.Stat_t
	if err := lstatAt(dirfd, name, &st); err != nil {
		return e
	}
	e.Type = typeOfMode(st.Mode)
	e.ModifiedAt = modTime(&st)
	if e.Type == TypeFile {
		size := st.Size
		e.Size = &size
	}
	return e
}
