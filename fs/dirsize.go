package fs

// DirSize is the st_size of the directory raw in workdir alias, without
// following a final symlink: on Linux filesystems it grows with the number
// of entries (tmpfs counts 20 bytes per entry, ext4 and xfs the blocks of
// their name lists), so it tells a huge directory from a small one without
// reading it. ok is false when raw is not a reachable directory.
func (f *FS) DirSize(alias, raw string) (size int64, ok bool) {
	w, err := f.Workdir(alias)
	if err != nil {
		return 0, false
	}
	_, st, err := w.lstatPath(raw)
	if err != nil || typeOfMode(st.Mode) != TypeDirectory {
		return 0, false
	}
	return st.Size, true
}
