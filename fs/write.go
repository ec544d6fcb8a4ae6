package fs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/internal/unidiff"
)

// Writes. Every change to a workdir:
//   - happens only on an rw workdir (WORKDIR_READ_ONLY otherwise);
//   - applies the read policy (hidden, deny list, no symlinks) to every
//     path it touches, and never touches ".git" even where hidden paths
//     are allowed;
//   - works on the parent directory's descriptor from the resolver and
//     one name in it, never on a path string;
//   - holds the workdir's WriterLease;
//   - is conditional: a change to an existing file names its revision, a
//     create needs the target absent, and a mismatch changes nothing;
//   - is atomic and crash-safe: new content is written to a temporary
//     file (O_EXCL, same directory), fsynced, renamed over the target,
//     and the directory is fsynced. A crash leaves either the old or the
//     new file, plus at worst a temporary that start-up sweeps.

// tempPrefix starts the name of every temporary file a write creates. It
// is hidden, so agents never see one.
const tempPrefix = ".serverfs-tmp-"

// isTempName reports whether name is one of ServerFS's temporary files:
// tempPrefix and 16 lower-case hex digits.
func isTempName(name string) bool {
	if len(name) != len(tempPrefix)+16 || !strings.HasPrefix(name, tempPrefix) {
		return false
	}
	for _, c := range name[len(tempPrefix):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// WriteResult is the answer of every write.
type WriteResult struct {
	Workdir string `json:"workdir"`
	Path    string `json:"path"`
	// FromPath is the source of a move.
	FromPath string `json:"from_path,omitempty"`
	// Action is what happened: created, replaced, edited, unchanged,
	// created_directory, exists, moved or deleted.
	Action string `json:"action"`
	// Revision is the file's revision after the write (files only).
	Revision string `json:"revision,omitempty"`
	// Size is the file's size after the write (files only).
	Size *int64 `json:"size,omitempty"`
	// Diff is a unified diff of the change, at most DiffMaxBytes.
	Diff          string `json:"diff,omitempty"`
	DiffTruncated bool   `json:"diff_truncated,omitempty"`
	// DiffOmitted: the content replaced was not UTF-8 text (NUL bytes
	// or another encoding), which a diff in a JSON answer cannot carry
	// byte for byte: there is none.
	DiffOmitted bool `json:"diff_omitted,omitempty"`
}

// Edit is one exact replacement of edit_text_file.
type Edit struct {
	OldText string `json:"old_text" jsonschema:"exact text to replace, whitespace and line endings included; it must occur exactly once in the file"`
	NewText string `json:"new_text" jsonschema:"replacement text; empty deletes old_text"`
}

// MaxEdits bounds the replacements of one EditFile call.
const MaxEdits = 100

// DiffMaxBytes bounds the diff a write returns: enough to show what an
// edit did, never a second copy of a large file.
const DiffMaxBytes = 8 << 10

// writableWorkdir returns the workdir for a write.
func (f *FS) writableWorkdir(alias string) (*Workdir, error) {
	w, err := f.Workdir(alias)
	if err != nil {
		return nil, err
	}
	if w.mode != ModeReadWrite {
		return nil, errs.At(errs.WorkdirReadOnly, w.alias, "", "is read-only; the administrator did not enable writes on it")
	}
	return w, nil
}

// startWrite is what every write checks before touching anything: a
// read-write workdir and a well-formed expected revision (or none).
func (f *FS) startWrite(alias, expected string) (*Workdir, error) {
	w, err := f.writableWorkdir(alias)
	if err != nil {
		return nil, err
	}
	return w, checkRevisionArg(expected)
}

// target is the object a write is about: its parent directory, open for
// reading so that it can be fsynced, and its name there.
type target struct {
	w      *Workdir
	rp     relPath
	parent int
	name   string
}

func (t *target) close() {
	if t.parent >= 0 {
		unix.Close(t.parent)
		t.parent = -1
	}
}

func (t *target) err(code errs.Code, msg string, cause error) *errs.Error {
	return errs.At(code, t.w.alias, t.rp.String(), msg).Wrap(cause)
}

// writeTarget resolves raw for a write: the policy on the whole path, no
// ".git" component, not the root, and its parent opened as a directory.
func (w *Workdir) writeTarget(raw string) (*target, error) {
	rp, err := w.clean(raw)
	if err != nil {
		return nil, err
	}
	if len(rp.comps) == 0 {
		return nil, errs.At(errs.InvalidPath, w.alias, "", "is the workdir root, which cannot be created, replaced, moved or deleted")
	}
	if InGitDir(rp.String()) {
		return nil, errs.At(errs.DeniedPath, w.alias, rp.String(), "is inside .git (repository metadata); ServerFS never writes there")
	}
	dir := relPath{comps: rp.comps[:len(rp.comps)-1]}
	fd, _, err := w.openVerified(w.rootFD, dir.comps, dir, TypeDirectory)
	if err != nil {
		if errs.CodeOf(err) == errs.PathNotFound {
			return nil, errs.At(errs.PathNotFound, w.alias, rp.String(), fmt.Sprintf("cannot be written: its parent directory %q does not exist (create it with create_directory)", dir.String())).Wrap(err)
		}
		return nil, err
	}
	return &target{w: w, rp: rp, parent: fd, name: rp.base()}, nil
}

// lstat describes the target without following it; exists is false when
// there is nothing by that name.
func (t *target) lstat() (st unix.Stat_t, exists bool, err error) {
	err = lstatAt(t.parent, t.name, &st)
	switch {
	case err == nil:
		return st, true, nil
	case err == unix.ENOENT:
		return st, false, nil
	default:
		return st, false, errnoError(t.w.alias, t.rp, err)
	}
}

// lstatExisting is lstat for a change of something that must exist.
func (t *target) lstatExisting() (unix.Stat_t, error) {
	st, exists, err := t.lstat()
	if err == nil && !exists {
		err = t.err(errs.PathNotFound, "does not exist", nil)
	}
	return st, err
}

// readCurrent opens the target as a regular file and reads it whole, up
// to max bytes (WRITE_LIMIT_EXCEEDED beyond). The returned stat is of the
// descriptor the bytes came from.
func (t *target) readCurrent(max int) ([]byte, unix.Stat_t, error) {
	fd, st, err := t.w.openVerified(t.parent, []string{t.name}, t.rp, TypeFile)
	if err != nil {
		return nil, st, err
	}
	f := newFile(fd, "")
	defer f.Close()
	if st.Size > int64(max) {
		return nil, st, t.err(errs.WriteLimitExceeded, fmt.Sprintf("is %d bytes, larger than the %d-byte write limit (SERVERFS_MAX_WRITE_BYTES); ServerFS does not change it", st.Size, max), nil)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, st, t.err(errs.Internal, "could not be read", err)
	}
	if len(b) > max {
		return nil, st, t.err(errs.WriteLimitExceeded, fmt.Sprintf("is larger than the %d-byte write limit (SERVERFS_MAX_WRITE_BYTES); ServerFS does not change it", max), nil)
	}
	return b, st, nil
}

// readExpected is readCurrent for a change that names the file's
// revision: REVISION_MISMATCH, with the current revision, when it is
// another.
func (t *target) readExpected(expected string, max int) ([]byte, unix.Stat_t, error) {
	old, st, err := t.readCurrent(max)
	if err != nil {
		return nil, st, err
	}
	if cur := Revision(old); cur != expected {
		return nil, st, t.err(errs.RevisionMismatch, fmt.Sprintf("has changed: its current revision is %s, not the expected %s; read it again (nothing was changed)", cur, expected), nil)
	}
	return old, st, nil
}

// unchanged reports whether the name still refers to the object st
// describes, unmodified: same inode, size, modification and change time.
// A write to the file by anyone changes its ctime.
func (t *target) unchanged(st *unix.Stat_t) bool {
	now, exists, err := t.lstat()
	return err == nil && exists && now.Dev == st.Dev && now.Ino == st.Ino && now.Size == st.Size &&
		now.Mtim == st.Mtim && now.Ctim == st.Ctim
}

// writeTemp writes content to a new temporary file in the target's
// directory, with permissions perm (and owner uid:gid when chown), and
// fsyncs it. It returns the temporary's name.
func (t *target) writeTemp(content []byte, perm uint32, chown bool, uid, gid uint32) (string, error) {
	var name string
	var fd int
	for attempt := 0; ; attempt++ {
		var rnd [8]byte
		rand.Read(rnd[:])
		name = tempPrefix + hex.EncodeToString(rnd[:])
		var err error
		fd, err = unix.Openat(t.parent, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if err == nil {
			break
		}
		if (err == unix.EEXIST || err == unix.EINTR) && attempt < 5 {
			continue
		}
		return "", writeErrno(t, err)
	}
	fail := func(err error) (string, error) {
		unix.Close(fd)
		unix.Unlinkat(t.parent, name, 0)
		return "", writeErrno(t, err)
	}
	for b := content; len(b) > 0; {
		n, err := retry(func() (int, error) { return unix.Write(fd, b) })
		if err != nil {
			return fail(err)
		}
		b = b[n:]
	}
	if chown {
		// Best effort: only a privileged server can give the file back to
		// another owner; otherwise it becomes the server's.
		unix.Fchown(fd, int(uid), int(gid))
	}
	// After the write and chown (both may clear set-id bits), and exactly:
	// the umask applied at creation must not narrow a replaced file's mode.
	if err := unix.Fchmod(fd, perm); err != nil {
		return fail(err)
	}
	if err := unix.Fsync(fd); err != nil {
		return fail(err)
	}
	if err := unix.Close(fd); err != nil {
		unix.Unlinkat(t.parent, name, 0)
		return "", writeErrno(t, err)
	}
	return name, nil
}

// fsyncDir is unix.Fsync. TestDurabilityHarnessFindsPlantedBug alone
// replaces it, with a no-op, to show that the power-cut harness notices a
// missing directory fsync.
var fsyncDir = unix.Fsync

// syncDir makes the directory's entries durable (a rename or create in it).
func syncDir(fd int) error {
	return retryErr(func() error { return fsyncDir(fd) })
}

// writeErrno maps an errno of a write system call.
func writeErrno(t *target, err error) *errs.Error {
	switch {
	case isErrno(err, unix.EACCES), isErrno(err, unix.EPERM):
		return t.err(errs.AccessDenied, "is not writable by the server (permission denied)", err)
	case isErrno(err, unix.EROFS):
		return t.err(errs.WorkdirReadOnly, "is on a read-only mount", err)
	case isErrno(err, unix.ENOSPC), isErrno(err, unix.EDQUOT):
		return t.err(errs.NoSpace, "cannot be written: no space left on the device (or quota exceeded)", err)
	case isErrno(err, unix.EXDEV):
		return t.err(errs.InvalidArgument, "cannot be moved across filesystems", err)
	default:
		return t.err(errs.Internal, "could not be written", err)
	}
}

// checkContent enforces what new file content may be.
func checkContent(content []byte, max int, what string) error {
	if len(content) > max {
		return errs.New(errs.WriteLimitExceeded, fmt.Sprintf("%s is %d bytes, larger than the %d-byte write limit (SERVERFS_MAX_WRITE_BYTES)", what, len(content), max))
	}
	if i := bytes.IndexByte(content, 0); i >= 0 {
		return errs.New(errs.InvalidContent, fmt.Sprintf("%s contains a NUL byte (at byte %d); only text can be written", what, i))
	}
	if !utf8.Valid(content) {
		return errs.New(errs.InvalidContent, fmt.Sprintf("%s is not valid UTF-8 (at byte %d); only UTF-8 text can be written", what, firstInvalidUTF8(content)))
	}
	return nil
}

// WriteFile creates the text file raw with content (expectedRevision "":
// the file must not exist) or replaces it (expectedRevision must be its
// current revision).
func (f *FS) WriteFile(ctx context.Context, alias, raw, content, expectedRevision string) (*WriteResult, error) {
	return f.rewrite(ctx, alias, raw, expectedRevision, true, func([]byte) ([]byte, string, error) {
		b := []byte(content)
		return b, "replaced", checkContent(b, f.limits.MaxWriteBytes, "content")
	})
}

// EditFile applies edits to the text file raw, whose current revision must
// be expectedRevision. Every edit's OldText must occur exactly once in the
// current content (EDIT_NOT_FOUND, EDIT_AMBIGUOUS); the edits must not
// overlap; all of them are applied together or none is.
func (f *FS) EditFile(ctx context.Context, alias, raw string, edits []Edit, expectedRevision string) (*WriteResult, error) {
	if expectedRevision == "" {
		return nil, errs.New(errs.InvalidArgument, "expected_revision is required: read the file with read_text_file (or stat_file) and pass its revision")
	}
	if len(edits) == 0 || len(edits) > MaxEdits {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("edits must hold between 1 and %d replacements", MaxEdits))
	}
	for i, e := range edits {
		if e.OldText == "" {
			return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("edit %d: old_text is empty; it must be text that occurs exactly once in the file", i+1))
		}
		if e.OldText == e.NewText {
			return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("edit %d: old_text and new_text are the same", i+1))
		}
		if err := checkContent([]byte(e.NewText), f.limits.MaxWriteBytes, fmt.Sprintf("edit %d: new_text", i+1)); err != nil {
			return nil, err
		}
	}
	return f.rewrite(ctx, alias, raw, expectedRevision, false, func(old []byte) ([]byte, string, error) {
		if err := checkText(old); err != nil {
			return nil, "", err
		}
		b, err := applyEdits(old, edits)
		if err != nil {
			return nil, "", err
		}
		return b, "edited", checkContent(b, f.limits.MaxWriteBytes, "the edited file")
	})
}

// checkText refuses to edit a file that read_text_file would refuse.
func checkText(b []byte) error {
	if bytes.IndexByte(b, 0) >= 0 {
		return errs.New(errs.BinaryFile, "is a binary file (it contains NUL bytes); it cannot be edited")
	}
	if !utf8.Valid(b) {
		return errs.New(errs.UnsupportedTextEncoding, "is not valid UTF-8; it cannot be edited")
	}
	return nil
}

// applyEdits replaces each edit's unique occurrence in old.
func applyEdits(old []byte, edits []Edit) ([]byte, error) {
	type span struct{ at, end, edit int }
	spans := make([]span, 0, len(edits))
	for i, e := range edits {
		at := bytes.Index(old, []byte(e.OldText))
		if at < 0 {
			return nil, errs.New(errs.EditNotFound, fmt.Sprintf("edit %d: old_text does not occur in the file (it must match exactly, whitespace and line endings included); nothing was changed", i+1))
		}
		if n := countNonOverlapping(old, []byte(e.OldText)); n > 1 {
			return nil, errs.New(errs.EditAmbiguous, fmt.Sprintf("edit %d: old_text occurs %d times; include more surrounding text so that it occurs once; nothing was changed", i+1, n))
		}
		spans = append(spans, span{at, at + len(e.OldText), i})
	}
	// Sort by position (insertion sort: at most MaxEdits) and refuse
	// overlaps: the edits are applied to the original text together.
	for i := 1; i < len(spans); i++ {
		for j := i; j > 0 && spans[j].at < spans[j-1].at; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	for i := 1; i < len(spans); i++ {
		if spans[i].at < spans[i-1].end {
			return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("edits %d and %d overlap in the file; combine them into one edit", spans[i-1].edit+1, spans[i].edit+1))
		}
	}
	var out bytes.Buffer
	prev := 0
	for _, s := range spans {
		out.Write(old[prev:s.at])
		out.WriteString(edits[s.edit].NewText)
		prev = s.end
	}
	out.Write(old[prev:])
	return out.Bytes(), nil
}

// countNonOverlapping counts occurrences of sep in b, also those that
// overlap (so "aa" occurs twice in "aaa": either could be meant).
func countNonOverlapping(b, sep []byte) int {
	n := 0
	for i := 0; ; {
		j := bytes.Index(b[i:], sep)
		if j < 0 {
			return n
		}
		n++
		i += j + 1
	}
}

// rewrite is the conditional replace behind WriteFile and EditFile:
// produce turns the current content (nil for a create) into the new one
// and names the action.
func (f *FS) rewrite(ctx context.Context, alias, raw, expected string, mayCreate bool, produce func(old []byte) ([]byte, string, error)) (*WriteResult, error) {
	w, err := f.startWrite(alias, expected)
	if err != nil {
		return nil, err
	}
	t, err := w.writeTarget(raw)
	if err != nil {
		return nil, err
	}
	defer t.close()
	if t.rp.wantDir {
		return nil, t.err(errs.NotAFile, "ends with '/' but a file was expected", nil)
	}
	release, err := f.lease.Acquire(ctx, alias)
	if err != nil {
		return nil, err
	}
	defer release()

	st, exists, err := t.lstat()
	if err != nil {
		return nil, err
	}
	located := func(err error) error {
		if e, ok := err.(*errs.Error); ok && e.Workdir == "" {
			e.Workdir, e.Path = t.w.alias, t.rp.String()
		}
		return err
	}
	if !exists {
		if !mayCreate {
			return nil, t.err(errs.PathNotFound, "does not exist", nil)
		}
		if expected != "" {
			return nil, t.err(errs.RevisionMismatch, "does not exist, so it has no revision; omit expected_revision to create it", nil)
		}
		content, _, err := produce(nil)
		if err != nil {
			return nil, located(err)
		}
		tmp, err := t.writeTemp(content, 0o644, false, 0, 0)
		if err != nil {
			return nil, err
		}
		if err := unix.Renameat2(t.parent, tmp, t.parent, t.name, unix.RENAME_NOREPLACE); err != nil {
			unix.Unlinkat(t.parent, tmp, 0)
			if err == unix.EEXIST {
				return nil, t.err(errs.RevisionMismatch, "was created by someone else meanwhile; read it and pass its revision to replace it", nil)
			}
			return nil, writeErrno(t, err)
		}
		if err := syncDir(t.parent); err != nil {
			return nil, writeErrno(t, err)
		}
		return t.result("created", content, nil, true), nil
	}
	if err := w.checkType(t.rp, st.Mode, TypeFile); err != nil {
		return nil, err
	}
	if expected == "" {
		old, _, err := t.readCurrent(f.limits.MaxWriteBytes)
		if err != nil {
			return nil, err
		}
		return nil, t.err(errs.RevisionMismatch, fmt.Sprintf("already exists (current revision %s); pass it as expected_revision to replace the file", Revision(old)), nil)
	}
	old, st, err := t.readExpected(expected, f.limits.MaxWriteBytes)
	if err != nil {
		return nil, err
	}
	content, action, err := produce(old)
	if err != nil {
		return nil, located(err)
	}
	if bytes.Equal(content, old) {
		return t.result("unchanged", content, old, false), nil
	}
	chown := int(st.Uid) != unix.Geteuid() || int(st.Gid) != unix.Getegid()
	tmp, err := t.writeTemp(content, st.Mode&0o777, chown, st.Uid, st.Gid)
	if err != nil {
		return nil, err
	}
	// The lease keeps other ServerFS writes out; this catches anyone else
	// who changed the file since it was read (a write changes its ctime).
	if !t.unchanged(&st) {
		unix.Unlinkat(t.parent, tmp, 0)
		return nil, t.err(errs.RevisionMismatch, "was changed by another program while it was being written; read it again", nil)
	}
	if err := unix.Renameat(t.parent, tmp, t.parent, t.name); err != nil {
		unix.Unlinkat(t.parent, tmp, 0)
		return nil, writeErrno(t, err)
	}
	if err := syncDir(t.parent); err != nil {
		return nil, writeErrno(t, err)
	}
	return t.result(action, content, old, false), nil
}

// result describes a file the write left with content.
func (t *target) result(action string, content, old []byte, created bool) *WriteResult {
	size := int64(len(content))
	r := &WriteResult{Workdir: t.w.alias, Path: t.rp.String(), Action: action, Revision: Revision(content), Size: &size}
	switch {
	case action == "unchanged":
	case checkText(old) != nil:
		r.DiffOmitted = true
	default:
		r.Diff, r.DiffTruncated = unidiff.Unified(r.Path, old, content, created, DiffMaxBytes)
	}
	return r
}

// CreateDirectory creates the directory raw and any missing parents, never
// through a symlink. An existing directory is not an error (action
// "exists").
func (f *FS) CreateDirectory(ctx context.Context, alias, raw string) (*WriteResult, error) {
	w, err := f.writableWorkdir(alias)
	if err != nil {
		return nil, err
	}
	t, err := w.writeTarget(raw)
	if err != nil {
		if errs.CodeOf(err) != errs.PathNotFound {
			return nil, err
		}
		// The parent is missing: created below, component by component.
	} else {
		t.close()
	}
	rp, _ := w.clean(raw)
	release, err := f.lease.Acquire(ctx, alias)
	if err != nil {
		return nil, err
	}
	defer release()

	cur, _, err := w.openVerified(w.rootFD, nil, relPath{}, TypeDirectory)
	if err != nil {
		return nil, err
	}
	defer func() { unix.Close(cur) }()
	created := false
	for i, c := range rp.comps {
		sub := relPath{comps: rp.comps[:i+1]}
		var fd int
		for attempt := 0; ; attempt++ {
			fd, _, err = w.openVerified(cur, []string{c}, sub, TypeDirectory)
			if errs.CodeOf(err) != errs.PathNotFound || attempt == 2 {
				break
			}
			if err = unix.Mkdirat(cur, c, 0o755); err != nil && err != unix.EEXIST {
				return nil, writeErrno(&target{w: w, rp: sub}, err)
			}
			if err == nil {
				created = true
				if err := syncDir(cur); err != nil {
					return nil, writeErrno(&target{w: w, rp: sub}, err)
				}
			}
		}
		if err != nil {
			return nil, err
		}
		unix.Close(cur)
		cur = fd
	}
	action := "exists"
	if created {
		action = "created_directory"
	}
	return &WriteResult{Workdir: w.alias, Path: rp.String(), Action: action}, nil
}

// MovePath renames the file or directory from to to within one workdir.
// The destination must not exist (PATH_EXISTS) and its parent must. A
// directory is moved only when nothing inside it is hidden or denied
// (those files stay where the operator put them). expectedRevision, when
// given for a file, must be its current revision.
func (f *FS) MovePath(ctx context.Context, alias, from, to, expectedRevision string) (*WriteResult, error) {
	w, err := f.startWrite(alias, expectedRevision)
	if err != nil {
		return nil, err
	}
	src, err := w.writeTarget(from)
	if err != nil {
		return nil, err
	}
	defer src.close()
	dst, err := w.writeTarget(to)
	if err != nil {
		return nil, err
	}
	defer dst.close()
	if len(dst.rp.comps) >= len(src.rp.comps) && equalComps(dst.rp.comps[:len(src.rp.comps)], src.rp.comps) {
		return nil, src.err(errs.InvalidArgument, fmt.Sprintf("cannot be moved to %q: the destination is the source or inside it", dst.rp.String()), nil)
	}
	release, err := f.lease.Acquire(ctx, alias)
	if err != nil {
		return nil, err
	}
	defer release()

	st, err := src.lstatExisting()
	if err != nil {
		return nil, err
	}
	res := &WriteResult{Workdir: w.alias, Path: dst.rp.String(), FromPath: src.rp.String(), Action: "moved"}
	switch typeOfMode(st.Mode) {
	case TypeFile:
		if src.rp.wantDir || dst.rp.wantDir {
			return nil, src.err(errs.NotADirectory, "is a file, but a path ends with '/'", nil)
		}
		if expectedRevision != "" {
			if _, _, err := src.readExpected(expectedRevision, f.limits.MaxWriteBytes); err != nil {
				return nil, err
			}
			res.Revision = expectedRevision
		}
		size := st.Size
		res.Size = &size
	case TypeDirectory:
		if expectedRevision != "" {
			return nil, src.err(errs.InvalidArgument, "is a directory; expected_revision applies to files only", nil)
		}
		fd, _, err := w.openVerified(src.parent, []string{src.name}, src.rp, TypeDirectory)
		if err != nil {
			return nil, err
		}
		budget := f.limits.MaxWalkEntries
		err = w.checkMovable(fd, src.rp, dst.rp, &budget, 0)
		unix.Close(fd)
		if err != nil {
			return nil, err
		}
	default:
		return nil, w.checkType(src.rp, st.Mode, TypeFile)
	}
	if err := unix.Renameat2(src.parent, src.name, dst.parent, dst.name, unix.RENAME_NOREPLACE); err != nil {
		if err == unix.EEXIST {
			return nil, dst.err(errs.PathExists, "already exists; move_path never replaces (delete it first, or choose another name)", nil)
		}
		return nil, writeErrno(src, err)
	}
	if err := syncDir(dst.parent); err != nil {
		return nil, writeErrno(dst, err)
	}
	if err := syncDir(src.parent); err != nil {
		return nil, writeErrno(src, err)
	}
	return res, nil
}

func equalComps(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkMovable refuses a directory move when the tree below fd holds a
// hidden, denied or .git entry, or is too large to check.
func (w *Workdir) checkMovable(fd int, rel, dstRel relPath, budget *int, depth int) error {
	if depth > MaxWalkDepth {
		return errs.At(errs.DirectoryTooLarge, w.alias, rel.String(), "is too deep to move")
	}
	ents, more, err := readDirents(fd, *budget)
	if err != nil {
		return errnoError(w.alias, rel, err)
	}
	*budget -= len(ents)
	if more {
		return errs.At(errs.DirectoryTooLarge, w.alias, rel.String(), "holds more entries than SERVERFS_MAX_WALK_ENTRIES allows checking; it cannot be moved")
	}
	for _, d := range ents {
		// Checked where it is and where it would be: a deny pattern with
		// '/' (config/prod/*.yaml) may match only the destination.
		if !w.policy.visible(rel, d.name) || !w.policy.visible(dstRel, d.name) || strings.EqualFold(d.name, ".git") {
			return errs.At(errs.DeniedPath, w.alias, rel.String(), "contains hidden, credential or .git entries, which ServerFS does not move")
		}
		if direntType(fd, d) != TypeDirectory {
			continue
		}
		sub, err := openatRetry(fd, d.name, flagsDir)
		if err != nil {
			return errnoError(w.alias, rel.join(d.name), err)
		}
		err = w.checkMovable(sub, rel.join(d.name), dstRel.join(d.name), budget, depth+1)
		unix.Close(sub)
		if err != nil {
			return err
		}
	}
	return nil
}

// DeletePath removes the file raw, whose current revision must be
// expectedRevision, or the empty directory raw.
func (f *FS) DeletePath(ctx context.Context, alias, raw, expectedRevision string) (*WriteResult, error) {
	w, err := f.startWrite(alias, expectedRevision)
	if err != nil {
		return nil, err
	}
	t, err := w.writeTarget(raw)
	if err != nil {
		return nil, err
	}
	defer t.close()
	release, err := f.lease.Acquire(ctx, alias)
	if err != nil {
		return nil, err
	}
	defer release()

	st, err := t.lstatExisting()
	if err != nil {
		return nil, err
	}
	res := &WriteResult{Workdir: w.alias, Path: t.rp.String(), Action: "deleted"}
	switch typeOfMode(st.Mode) {
	case TypeFile:
		if t.rp.wantDir {
			return nil, t.err(errs.NotADirectory, "ends with '/' but is a file", nil)
		}
		if expectedRevision == "" {
			return nil, t.err(errs.InvalidArgument, "is a file: expected_revision is required to delete it (read_text_file or stat_file return it)", nil)
		}
		_, st, err := t.readExpected(expectedRevision, f.limits.MaxWriteBytes)
		if err != nil {
			return nil, err
		}
		if !t.unchanged(&st) {
			return nil, t.err(errs.RevisionMismatch, "was changed by another program meanwhile; read it again", nil)
		}
		if err := unix.Unlinkat(t.parent, t.name, 0); err != nil {
			return nil, writeErrno(t, err)
		}
		res.Revision = expectedRevision
	case TypeDirectory:
		if expectedRevision != "" {
			return nil, t.err(errs.InvalidArgument, "is a directory; expected_revision applies to files only", nil)
		}
		if err := unix.Unlinkat(t.parent, t.name, unix.AT_REMOVEDIR); err != nil {
			if err == unix.ENOTEMPTY || err == unix.EEXIST {
				return nil, t.err(errs.DirectoryNotEmpty, "is not empty (it may hold hidden files); delete_path removes only files and empty directories", nil)
			}
			return nil, writeErrno(t, err)
		}
	default:
		return nil, w.checkType(t.rp, st.Mode, TypeFile)
	}
	if err := syncDir(t.parent); err != nil {
		return nil, writeErrno(t, err)
	}
	return res, nil
}
