package mcp

import (
	"slices"
	"strings"
)

// paths are the workdir-relative paths of a find's matches (for tests and
// callers that want them whole), grouped as in the answer: files and
// directories, then symlinks, then other; each group in directory order.
func (o *findOut) paths() []string {
	var ps []string
	for _, g := range []map[string][]string{o.Matches, o.Symlinks, o.Other} {
		dirs := make([]string, 0, len(g))
		for d := range g {
			dirs = append(dirs, d)
		}
		slices.Sort(dirs)
		for _, d := range dirs {
			for _, n := range g[d] {
				p := strings.TrimSuffix(n, "/")
				if d != "" {
					p = d + "/" + p
				}
				if o.Path != "" {
					p = o.Path + "/" + p
				}
				ps = append(ps, p)
			}
		}
	}
	return ps
}
