package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sys/unix"

	gitobject "github.com/serverfs/serverfs/git/internal/object"
	"github.com/serverfs/serverfs/git/internal/pathrule"
	"github.com/serverfs/serverfs/internal/errs"
)

// CheckoutLimits bound one Checkout.
type CheckoutLimits struct {
	// MaxFiles bounds the entries written (files, symlinks, directories).
	MaxFiles int
	// MaxBytes bounds the sum of the blob sizes written.
	MaxBytes int64
}

// CheckoutResult describes a finished Checkout.
type CheckoutResult struct {
	// Commit is the full id of the commit checked out; Tree its tree.
	Commit, Tree string
	// Branch is the local branch base named: the branch HEAD is on for
	// "" and HEAD ("" when detached), the branch for a branch name, ""
	// for a tag or a commit id.
	Branch string
	// Files and Bytes are the entries and blob bytes written.
	Files int
	Bytes int64
}

// maxCheckoutDepth bounds the nesting of trees a checkout descends.
const maxCheckoutDepth = 256

// maxSymlinkTarget is the longest symlink target written (PATH_MAX).
const maxSymlinkTarget = 4095

// copyChunk is how much of a blob is copied between two checks of the
// request's context.
const copyChunk = 1 << 20

// Checkout writes the tree of rev (as Log's Rev: "" or HEAD, a local
// branch, a tag or a commit id) into the empty directory open at dirfd,
// as git checkout would write it without filters: regular files with
// their content (0644, or 0755 when executable), symlinks as symlinks
// whose target is the blob (never followed: every entry is created
// beneath its parent's descriptor with O_NOFOLLOW|O_EXCL), submodules
// (gitlinks) as empty directories. It reads objects in process and
// streams each blob to its file, so a blob of any size costs a copy
// buffer, not its size in memory. A tree entry git on Linux refuses to
// check out (pathrule.Checkout: ".", "..", ".git" in any case or NTFS
// spelling, also after a backslash; an empty name, or one with '/')
// refuses the whole checkout, as does going past lim
// (WORKSPACE_TOO_LARGE) or ctx. On error the directory holds a partial
// checkout the caller removes.
func (r *Repo) Checkout(ctx context.Context, rev string, dirfd int, lim CheckoutLimits) (*CheckoutResult, error) {
	h, id, c, done, err := r.historyAt(rev, false)
	if err != nil {
		return nil, err
	}
	defer done()
	res := &CheckoutResult{Commit: id.String(), Tree: c.TreeHash.String(), Branch: r.checkoutBranch(rev)}
	co := &checkout{r: r, h: h, ctx: ctx, lim: lim, res: res, buf: make([]byte, 64<<10)}
	if err := co.tree(c.TreeHash, dirfd, "", 0); err != nil {
		return nil, err
	}
	return res, nil
}

// checkoutBranch is CheckoutResult.Branch for rev.
func (r *Repo) checkoutBranch(rev string) string {
	if rev == "" || rev == "HEAD" {
		hd, err := r.head()
		if err != nil {
			return ""
		}
		return hd.branch
	}
	name := strings.TrimPrefix(rev, "refs/heads/")
	if name != rev {
		return name
	}
	if _, err := r.storage.Reference(plumbing.ReferenceName("refs/tags/" + rev)); err == nil {
		return "" // a tag wins over a branch of the same name
	}
	if _, err := r.storage.Reference(plumbing.ReferenceName("refs/heads/" + rev)); err == nil {
		return rev
	}
	return ""
}

type checkout struct {
	r   *Repo
	h   *history
	ctx context.Context
	lim CheckoutLimits
	res *CheckoutResult
	buf []byte
}

func (co *checkout) tooLarge(msg string) error {
	return errs.At(errs.WorkspaceTooLarge, co.r.w.Alias(), "", msg)
}

func (co *checkout) refuse(path, why string) error {
	return errs.At(errs.RepoUnsupported, co.r.w.Alias(), "", fmt.Sprintf("has a tree entry %q that git refuses to check out (%s)", displayName(path), why))
}

// displayName bounds a tree path for a message.
func displayName(p string) string {
	if len(p) > 200 {
		p = p[:200] + "..."
	}
	return strings.ToValidUTF8(p, "\uFFFD")
}

// checkoutName reports why a tree entry name cannot be written, or "":
// git reads neither an empty name nor one holding NUL, and a '/' would
// write beneath another directory. The rest of what git refuses is
// pathrule.Checkout's.
func checkoutName(name string) string {
	switch {
	case name == "":
		return "an empty name"
	case strings.ContainsAny(name, "/\x00"):
		return "a name with '/' or NUL"
	}
	return ""
}

func (co *checkout) count() error {
	co.res.Files++
	if co.lim.MaxFiles > 0 && co.res.Files > co.lim.MaxFiles {
		return co.tooLarge(fmt.Sprintf("has more than %d files and directories at this commit (SERVERFS_WORKSPACE_MAX_FILES)", co.lim.MaxFiles))
	}
	return nil
}

// tree writes the entries of tree id into the directory open at dirfd,
// which is path ("" for the root).
func (co *checkout) tree(id plumbing.Hash, dirfd int, path string, depth int) error {
	if depth > maxCheckoutDepth {
		return co.refuse(path, fmt.Sprintf("trees nested deeper than %d", maxCheckoutDepth))
	}
	t, err := co.h.tree(id)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		if err := co.ctx.Err(); err != nil {
			return errs.At(errs.Canceled, co.r.w.Alias(), "", "the checkout was cancelled or ran out of time").Wrap(err)
		}
		p := e.Name
		if path != "" {
			p = path + "/" + e.Name
		}
		if why := checkoutName(e.Name); why != "" {
			return co.refuse(p, why)
		}
		if r := pathrule.Checkout(p, gitobject.CanonicalMode(e.Mode)); r != nil {
			return co.refuse(p, r.ID+": "+r.Why)
		}
		if err := co.count(); err != nil {
			return err
		}
		if err := co.entry(e.Mode, e.Hash, dirfd, e.Name, p, depth); err != nil {
			return err
		}
	}
	return nil
}

func (co *checkout) entry(mode filemode.FileMode, id plumbing.Hash, dirfd int, name, path string, depth int) error {
	switch gitobject.CanonicalMode(mode) {
	case filemode.Dir:
		fd, err := co.mkdir(dirfd, name, path)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return co.tree(id, fd, path, depth+1)
	case filemode.Submodule:
		// git leaves an uninitialised submodule an empty directory.
		fd, err := co.mkdir(dirfd, name, path)
		if err == nil {
			unix.Close(fd)
		}
		return err
	case filemode.Symlink:
		return co.symlink(id, dirfd, name, path)
	case filemode.Regular:
		return co.file(id, dirfd, name, path, 0o644)
	case filemode.Executable:
		return co.file(id, dirfd, name, path, 0o755)
	}
	return co.refuse(path, fmt.Sprintf("mode %o", uint32(mode)))
}

func (co *checkout) sysErr(path string, err error) error {
	if errors.Is(err, unix.EEXIST) {
		return co.refuse(path, "a name the tree holds twice")
	}
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return errs.At(errs.NoSpace, co.r.w.Alias(), "", "the workspace storage is full").Wrap(err)
	}
	return errs.At(errs.Internal, co.r.w.Alias(), "", "writing the checkout failed").Wrap(err)
}

func (co *checkout) mkdir(dirfd int, name, path string) (int, error) {
	if err := unix.Mkdirat(dirfd, name, 0o755); err != nil {
		return -1, co.sysErr(path, err)
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, co.sysErr(path, err)
	}
	return fd, nil
}

// open opens blob id, its size (from its header) counted against
// MaxBytes before anything of it is read; a blob over limit is
// objectTooLarge.
func (co *checkout) open(id plumbing.Hash, limit int64) (*blobReader, error) {
	room := int64(math.MaxInt64)
	if co.lim.MaxBytes > 0 {
		room = co.lim.MaxBytes - co.res.Bytes
	}
	b, err := co.r.openBlob(id, min(limit, room))
	if size, ok := tooLargeSize(err); ok && size > room {
		return nil, co.tooLarge(fmt.Sprintf("holds more than %d bytes of files at this commit (SERVERFS_WORKSPACE_MAX_BYTES)", co.lim.MaxBytes))
	}
	if err != nil {
		return nil, err
	}
	co.res.Bytes += b.size
	return b, nil
}

func (co *checkout) symlink(id plumbing.Hash, dirfd int, name, path string) error {
	b, err := co.open(id, maxSymlinkTarget)
	if _, ok := tooLargeSize(err); ok {
		return co.refuse(path, "a symlink target that is empty or longer than PATH_MAX")
	}
	if err != nil {
		return err
	}
	defer b.Close()
	if b.size == 0 {
		return co.refuse(path, "a symlink target that is empty or longer than PATH_MAX")
	}
	target, err := b.readAll()
	if err != nil {
		return err
	}
	if strings.IndexByte(string(target), 0) >= 0 {
		return co.refuse(path, "a symlink target with NUL")
	}
	if err := unix.Symlinkat(string(target), dirfd, name); err != nil {
		return co.sysErr(path, err)
	}
	return nil
}

func (co *checkout) file(id plumbing.Hash, dirfd int, name, path string, perm uint32) error {
	rd, err := co.open(id, math.MaxInt64)
	if err != nil {
		return err
	}
	defer rd.Close()
	n := rd.size
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return co.sysErr(path, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if err := unix.Fchmod(fd, perm); err != nil {
		return co.sysErr(path, err)
	}
	var written int64
	for {
		if err := co.ctx.Err(); err != nil {
			return errs.At(errs.Canceled, co.r.w.Alias(), "", "the checkout was cancelled or ran out of time").Wrap(err)
		}
		k, err := io.CopyBuffer(f, io.LimitReader(rd, copyChunk), co.buf)
		written += k
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return co.sysErr(path, pe.Err)
			}
			return err
		}
		if k < copyChunk {
			break
		}
	}
	if written != n {
		return co.r.objectErr("blob", id, damaged("%d bytes of %d", written, n))
	}
	return nil
}
