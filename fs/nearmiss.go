package fs

import (
	"errors"
	"slices"
	"strings"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// A PATH_NOT_FOUND of the read tools names up to maxNearMisses entries
// whose name differs from the missing component only in case (notes.md
// for NOTES.md), so that the agent's next call can be the right one.
// Finding them is bounded: one directory, at most nearMissEntries of its
// entries read, the missing component looked for among the first
// nearMissDepth components only. Only names a listing would show are
// named: hidden and denied entries stay unnamed.
const (
	maxNearMisses   = 3
	nearMissEntries = 4096
	nearMissDepth   = 8
)

// withNearMisses adds the near misses of rp to err when it is a
// PATH_NOT_FOUND.
func (w *Workdir) withNearMisses(err error, rp relPath) error {
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != errs.PathNotFound || len(rp.comps) == 0 {
		return err
	}
	if near := w.nearMisses(rp); len(near) > 0 {
		e.Msg += "; differs only in case: " + strings.Join(near, ", ")
	}
	return err
}

// nearMisses are the workdir-relative paths, in name order, that differ
// from rp only in the case of its first missing component: the last one
// when its parent exists, else the first of the first nearMissDepth that
// does not.
func (w *Workdir) nearMisses(rp relPath) []string {
	comps := rp.comps
	i := len(comps) - 1 // the first missing component
	fd, err := w.open(w.rootFD, comps[:i], flagsDir)
	if err != nil {
		i = -1
		for j := range min(len(comps)-1, nearMissDepth) {
			if fd, err = w.open(w.rootFD, comps[:j+1], flagsPath); err != nil {
				i = j
				break
			}
			unix.Close(fd)
		}
		if i < 0 {
			return nil
		}
		if fd, err = w.open(w.rootFD, comps[:i], flagsDir); err != nil {
			return nil
		}
	}
	defer unix.Close(fd)
	ents, _, err := readDirents(fd, nearMissEntries)
	if err != nil {
		return nil
	}
	dir, missing := relPath{comps: comps[:i]}, comps[i]
	var near []string
	for _, e := range ents {
		if e.name == missing || !strings.EqualFold(e.name, missing) || !w.policy.visible(dir, e.name) {
			continue
		}
		c := append(append(append(make([]string, 0, len(comps)), comps[:i]...), e.name), comps[i+1:]...)
		if code, _ := w.policy.check(relPath{comps: c}); code != "" {
			continue
		}
		near = append(near, strings.Join(c, "/"))
	}
	slices.Sort(near)
	if len(near) > maxNearMisses {
		near = near[:maxNearMisses]
	}
	return near
}
