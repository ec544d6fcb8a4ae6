package fs

import (
	"errors"
	"slices"
	"strings"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// A PATH_NOT_FOUND of the read tools names up to maxNearMisses entries
// whose name is near the missing component: the same but for case
// (notes.md for NOTES.md), or, case aside, one edit away (apps.log for
// app.log; two for names of 8 bytes or more): a letter added, dropped,
// changed or two neighbours swapped. Case-only misses come first, then
// by edits, then by name: the agent's next call can be the right one.
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
		e.Msg += "; similar: " + strings.Join(near, ", ")
	}
	return err
}

// nearMisses are the workdir-relative paths whose first missing
// component is near rp's (see nearName): the last one when its parent
// exists, else the first of the first nearMissDepth that does not.
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
	type miss struct {
		path  string
		edits int
	}
	var found []miss
	folded := strings.ToLower(missing)
	for _, e := range ents {
		edits, ok := nearName(e.name, missing, folded)
		if !ok || !w.policy.visible(dir, e.name) {
			continue
		}
		c := append(append(append(make([]string, 0, len(comps)), comps[:i]...), e.name), comps[i+1:]...)
		if code, _ := w.policy.check(relPath{comps: c}); code != "" {
			continue
		}
		found = append(found, miss{strings.Join(c, "/"), edits})
	}
	slices.SortFunc(found, func(a, b miss) int {
		if a.edits != b.edits {
			return a.edits - b.edits
		}
		return strings.Compare(a.path, b.path)
	})
	var near []string
	for _, m := range found[:min(len(found), maxNearMisses)] {
		near = append(near, m.path)
	}
	return near
}

// nearName reports whether name is a near miss of missing (folded is
// missing lower-cased) and how far: 0 edits when only case differs, else
// the edits between the lower-cased names, at most 1 (2 for a missing
// name of 8 bytes or more).
func nearName(name, missing, folded string) (int, bool) {
	if name == missing {
		return 0, false
	}
	if strings.EqualFold(name, missing) {
		return 0, true
	}
	bound := 1
	if len(missing) >= 8 {
		bound = 2
	}
	d := editDistance(strings.ToLower(name), folded, bound)
	return d, d <= bound
}

// editDistance is the optimal string alignment distance between a and b
// (insertions, deletions, substitutions and swaps of neighbours, by
// byte), or bound+1 once it is known to exceed bound: names differing in
// length by more are not compared, and a row whose every cell is past
// bound ends it. Memory is three rows of len(b)+1.
func editDistance(a, b string, bound int) int {
	if d := len(a) - len(b); d > bound || -d > bound {
		return bound + 1
	}
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > bound {
			return bound + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], bound+1)
}
