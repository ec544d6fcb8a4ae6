package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	sfs "github.com/serverfs/serverfs/fs"
)

// Inside an action the work tree's deny-listed paths (the server's
// list: the built-in credential names and SERVERFS_EXTRA_DENY_GLOBS)
// and, unless the server serves them, its hidden paths are masked, as
// the MCP tools refuse them: an action that printed .env or copied it
// to leak.txt would hand the agent what DENIED_PATH withholds. The
// helper finds them itself (a bounded walk of the tree, per run: no
// index), before anything of the action runs.
//
// In its mount namespace it mounts over each one: a directory gets an
// empty tmpfs of mode 0 (read-only), any other file /dev/null's node
// on a nodev, read-only bind, so that opening either fails with EACCES
// and a mount point can be neither renamed, removed nor hard-linked.
// Where the kernel refuses the namespace, Landlock grants the tree
// entry by entry instead (treeRules): each directory on the way to a
// masked path may only be listed, its other entries get their rights,
// the masked ones none. A run whose paths cannot be masked either way
// is refused; it never runs unmasked.

// MaskSpec says what the helper masks in the tree.
type MaskSpec struct {
	// Hidden: hidden paths are served, so they are not masked.
	Hidden bool     `json:"hidden,omitempty"`
	Deny   []string `json:"deny,omitempty"`   // extra deny globs
	Reveal []string `json:"reveal,omitempty"` // the action's reveal list
}

// Bounds of the mask walk: the entries it visits and the paths it may
// mask (each a mount, or a directory granted entry by entry).
const (
	maxMaskWalk = 1 << 20
	MaxMasks    = 4096
)

// maskedPath is one path of the tree the action must not read.
type maskedPath struct {
	rel string // slash-separated, relative to the root
	dir bool
}

// compileMasks builds the matchers of m: the deny list (built-in plus
// m.Deny, hidden paths unless m.Hidden) and the reveal list.
func compileMasks(m MaskSpec) (deny, reveal *sfs.Policy, err error) {
	if deny, err = sfs.NewPolicy(m.Hidden, m.Deny); err != nil {
		return nil, nil, err
	}
	if len(m.Reveal) > 0 {
		if reveal, err = sfs.NewPatterns(m.Reveal); err != nil {
			return nil, nil, err
		}
	}
	return deny, reveal, nil
}

// findMasks walks root (without following symlinks) and returns the
// paths to mask: each deny-listed or (unless m.Hidden) hidden entry the
// reveal list does not name. A masked directory is not entered; a
// symlink is never masked (what it names is judged where it lies).
func findMasks(root string, m MaskSpec) ([]maskedPath, error) {
	deny, reveal, err := compileMasks(m)
	if err != nil {
		return nil, err
	}
	rootFD, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the work tree: %w", err)
	}
	w := maskWalk{deny: deny, reveal: reveal}
	err = w.dir(rootFD, nil)
	sort.Slice(w.masks, func(i, j int) bool { return w.masks[i].rel < w.masks[j].rel })
	return w.masks, err
}

type maskWalk struct {
	deny, reveal *sfs.Policy
	visited      int
	masks        []maskedPath
}

// dir walks the directory fd (comps below the root) and closes it.
func (w *maskWalk) dir(fd int, comps []string) error {
	f := os.NewFile(uintptr(fd), "tree")
	defer f.Close()
	for {
		ents, err := f.ReadDir(1024)
		for _, e := range ents {
			if w.visited++; w.visited > maxMaskWalk {
				return fmt.Errorf("the work tree has more than %d entries to check", maxMaskWalk)
			}
			name := e.Name()
			child := append(comps[:len(comps):len(comps)], name)
			typ := e.Type()
			if typ&os.ModeSymlink != 0 {
				continue
			}
			masked := w.deny.Denied(child) || !w.deny.AllowHidden() && sfs.IsHidden(name)
			if masked && (w.reveal == nil || !w.reveal.Denied(child)) {
				if len(w.masks) >= MaxMasks {
					return fmt.Errorf("the work tree holds more than %d of them; reveal what the action needs, or allow hidden paths", MaxMasks)
				}
				w.masks = append(w.masks, maskedPath{rel: strings.Join(child, "/"), dir: typ.IsDir()})
				continue
			}
			if !typ.IsDir() {
				continue
			}
			cfd, err := unix.Openat(int(f.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
				continue // gone or replaced since it was listed
			}
			if err != nil {
				return fmt.Errorf("opening %s: %w", sfs.DisplayPath(strings.Join(child, "/")), err)
			}
			if err := w.dir(cfd, child); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || err == nil && len(ents) == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", sfs.DisplayPath(strings.Join(comps, "/")+"/"), err)
		}
	}
}

// beneath opens rel below rootFD as an O_PATH descriptor, following no
// symlink and never leaving the root.
func beneath(rootFD int, rel string, flags uint64) (int, error) {
	return unix.Openat2(rootFD, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC | flags,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV,
	})
}

// mountMasks (in the helper's mount namespace) mounts over each masked
// path of the tree at rootFD: an empty, read-only tmpfs of mode 0 over a
// directory, a nodev, read-only bind of /dev/null over anything else.
func mountMasks(rootFD int, masks []maskedPath) error {
	if len(masks) == 0 {
		return nil
	}
	null, err := unix.OpenTree(unix.AT_FDCWD, "/dev/null", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("cloning /dev/null: %w", err)
	}
	defer unix.Close(null)
	shut := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC}
	if err := unix.MountSetattr(null, "", unix.AT_EMPTY_PATH, &shut); err != nil {
		return fmt.Errorf("making /dev/null's bind unopenable: %w", err)
	}
	for _, m := range masks {
		if err := mountMask(rootFD, m, null); err != nil {
			return fmt.Errorf("masking %s: %w", sfs.DisplayPath(m.rel), err)
		}
	}
	return nil
}

func mountMask(rootFD int, m maskedPath, null int) error {
	target, err := beneath(rootFD, m.rel, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil // removed since the walk: nothing to read
	}
	if err != nil {
		return err
	}
	defer unix.Close(target)
	var st unix.Stat_t
	if err := unix.Fstat(target, &st); err != nil {
		return err
	}
	if isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR; isDir != m.dir {
		return errors.New("it changed type since the walk")
	}
	src := null
	if m.dir {
		fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
		if err != nil {
			return fmt.Errorf("tmpfs: %w", err)
		}
		defer unix.Close(fsfd)
		for _, kv := range [][2]string{{"mode", "0"}, {"size", "4k"}, {"nr_inodes", "1"}} {
			if err := unix.FsconfigSetString(fsfd, kv[0], kv[1]); err != nil {
				return fmt.Errorf("tmpfs %s: %w", kv[0], err)
			}
		}
		if err := unix.FsconfigCreate(fsfd); err != nil {
			return fmt.Errorf("tmpfs: %w", err)
		}
		mnt, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC)
		if err != nil {
			return fmt.Errorf("tmpfs: %w", err)
		}
		defer unix.Close(mnt)
		src = mnt
	} else {
		clone, err := unix.OpenTree(null, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
		if err != nil {
			return err
		}
		defer unix.Close(clone)
		src = clone
	}
	return unix.MoveMount(src, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

// Landlock rights of treeRules: a file's and a directory's, read-only
// and read-write, within what the ruleset handles.
const (
	fileRO = llsyscall.AccessFSExecute | llsyscall.AccessFSReadFile
	dirRO  = fileRO | llsyscall.AccessFSReadDir
	fileRW = fileRO | llsyscall.AccessFSWriteFile | llsyscall.AccessFSTruncate
	dirRW  = fileRW | llsyscall.AccessFSReadDir | llsyscall.AccessFSRemoveDir | llsyscall.AccessFSRemoveFile |
		llsyscall.AccessFSMakeChar | llsyscall.AccessFSMakeDir | llsyscall.AccessFSMakeReg | llsyscall.AccessFSMakeSock |
		llsyscall.AccessFSMakeFifo | llsyscall.AccessFSMakeBlock | llsyscall.AccessFSMakeSym
)

// maxTreeRules bounds the rules treeRules adds.
const maxTreeRules = 1 << 16

// treeRules grants the tree at root without the masked paths, for
// Landlock alone (no mount namespace): each directory on the way to a
// masked path (the root always, when gitRO) may only be listed; each of
// its other entries gets the read (or, when write, read-write) rights,
// .git at the root (gitRO) only the read rights; a masked path gets
// none, nor does a symlink (Landlock judges its target where it lies).
// A writing process therefore cannot create, remove or rename an entry
// of such a directory.
func treeRules(rulesetFD int, handled landlock.AccessFSSet, root string, masks []maskedPath, write, gitRO bool) error {
	masked := map[string]bool{}
	onTheWay := map[string]bool{".": true}
	for _, m := range masks {
		masked[m.rel] = true
		for d := path.Dir(m.rel); ; d = path.Dir(d) {
			onTheWay[d] = true
			if d == "." {
				break
			}
		}
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the work tree: %w", err)
	}
	defer unix.Close(rootFD)
	dirs := make([]string, 0, len(onTheWay))
	for d := range onTheWay {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	rules := 0
	add := func(fd int, access uint64) error {
		if rules++; rules > maxTreeRules {
			return fmt.Errorf("the deny-listed and hidden paths cannot be masked: more than %d Landlock rules would be needed to grant the tree around them", maxTreeRules)
		}
		a := access & uint64(handled)
		if a == 0 {
			return nil
		}
		return llsyscall.LandlockAddPathBeneathRule(rulesetFD, &llsyscall.PathBeneathAttr{ParentFd: fd, AllowedAccess: a}, 0)
	}
	for _, d := range dirs {
		if err := treeDirRules(rootFD, d, masked, onTheWay, write, gitRO, add); err != nil {
			return err
		}
	}
	return nil
}

// treeDirRules adds the rules of one directory on the way to a masked
// path: listing it, and each entry's own rights.
func treeDirRules(rootFD int, d string, masked, onTheWay map[string]bool, write, gitRO bool, add func(int, uint64) error) error {
	dfd, err := beneath(rootFD, d, unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", sfs.DisplayPath(d+"/"), err)
	}
	defer unix.Close(dfd)
	if err := add(dfd, llsyscall.AccessFSReadDir); err != nil {
		return err
	}
	list, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("listing %s: %w", sfs.DisplayPath(d+"/"), err)
	}
	f := os.NewFile(uintptr(list), "dir")
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("listing %s: %w", sfs.DisplayPath(d+"/"), err)
	}
	for _, name := range names {
		rel := path.Join(d, name)
		if masked[rel] || onTheWay[rel] {
			continue
		}
		fd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("opening an entry of %s: %w", sfs.DisplayPath(d+"/"), err)
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		var access uint64
		ro := !write || gitRO && d == "." && name == ".git"
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
		case unix.S_IFDIR:
			access = map[bool]uint64{true: dirRO, false: dirRW}[ro]
		default:
			access = map[bool]uint64{true: fileRO, false: fileRW}[ro]
		}
		if err == nil && access != 0 {
			err = add(fd, access)
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("landlock rule for an entry of %s: %w", sfs.DisplayPath(d+"/"), err)
		}
	}
	return nil
}
