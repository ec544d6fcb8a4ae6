package fs

import "golang.org/x/sys/unix"

// sweepTemporaries removes the temporary files interrupted writes left in
// the workdir (a crash between creating one and renaming it). It walks
// only directories the policy shows, as writes only happen there, reads at
// most maxEntries directory entries and removes only regular files named
// like a temporary. It returns how many it removed.
func (w *Workdir) sweepTemporaries(maxEntries int) (int, error) {
	root, err := openatRetry(w.rootFD, ".", flagsDir)
	if err != nil {
		return 0, err
	}
	defer unix.Close(root)
	budget := maxEntries
	return w.sweepDir(root, relPath{}, &budget), nil
}

// sweepDir sweeps one directory and, depth first, the visible directories
// below it: one descriptor per level is open at a time.
func (w *Workdir) sweepDir(fd int, rel relPath, budget *int) int {
	if *budget <= 0 || len(rel.comps) > MaxWalkDepth {
		return 0
	}
	ents, _, _ := readDirents(fd, *budget)
	*budget -= len(ents)
	removed, here := 0, 0
	for _, d := range ents {
		if isTempName(d.name) {
			var st unix.Stat_t
			if unix.Fstatat(fd, d.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && typeOfMode(st.Mode) == TypeFile &&
				unix.Unlinkat(fd, d.name, 0) == nil {
				here++
			}
			continue
		}
		if !w.policy.visible(rel, d.name) || direntType(fd, d) != TypeDirectory {
			continue
		}
		if sub, err := openatRetry(fd, d.name, flagsDir); err == nil {
			removed += w.sweepDir(sub, rel.join(d.name), budget)
			unix.Close(sub)
		}
	}
	if here > 0 {
		syncDir(fd)
	}
	return removed + here
}
