package bridge

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Scrubbing outputs: the host paths a process printed (workdir roots,
// the bridge's own directories, $HOME) replaced by names an agent may
// see.

// scrubber replaces host paths in outputs: every workdir root (as
// configured and as resolved) by "alias:", the paths the bridge made or
// uses itself (an action's private HOME and TMPDIR, its state and socket
// directories, its policy and token files, the workspaces) by a
// placeholder, and then the user's home directory by "~".
type scrubber struct {
	olds []scrubPath // longest first
	home string
}

// scrubPath is one host path and what replaces it.
type scrubPath struct{ old, new string }

// newScrubber is the scrubber of a process run under lim in root, the
// root of workdir alias: lim.Replace first (every workdir, and a
// workspace's own name for its tree), then root as "alias:" and the
// bridge's directories as "<bridge>".
func newScrubber(root, alias string, lim RunLimits) *scrubber {
	s := &scrubber{}
	for _, r := range lim.Replace {
		s.add(r.Path, r.Name)
	}
	s.add(root, alias+":")
	for _, p := range lim.BridgePaths {
		s.add(p, scrubBridgePath)
	}
	if h := filepath.Clean(os.Getenv("HOME")); filepath.IsAbs(h) && h != "/" {
		s.home = h
	}
	return s
}

// add replaces p (as given and with its symlinks resolved) by repl.
func (s *scrubber) add(p, repl string) {
	if p == "" {
		return
	}
	clean := filepath.Clean(p)
	cands := []string{clean}
	if real, err := filepath.EvalSymlinks(clean); err == nil {
		cands = append(cands, real)
	}
next:
	for _, c := range cands {
		if c == "/" || c == "." || !filepath.IsAbs(c) {
			continue
		}
		for _, o := range s.olds {
			if o.old == c {
				continue next
			}
		}
		s.olds = append(s.olds, scrubPath{c, repl})
	}
	sort.SliceStable(s.olds, func(i, j int) bool { return len(s.olds[i].old) > len(s.olds[j].old) })
}

// replace scrubs b; more are further host strings (e.g. a remote's
// path) with their replacements, applied first.
func (s *scrubber) replace(b []byte, more ...[2]string) string {
	out := string(b)
	for _, m := range more {
		if m[0] != "" {
			out = strings.ReplaceAll(out, m[0], m[1])
		}
	}
	for _, o := range s.olds {
		out = strings.ReplaceAll(out, o.old, o.new)
	}
	if s.home != "" {
		out = strings.ReplaceAll(out, s.home+"/", "~/")
		out = strings.ReplaceAll(out, s.home, "~")
	}
	return out
}

// tail scrubs raw (the end of a stream, cut at an arbitrary byte when
// truncated) and returns at most keep bytes of its end as valid UTF-8.
// A host path cut at the start of raw is removed rather than shown in
// part.
func (s *scrubber) tail(raw []byte, truncated bool, keep int) (string, bool) {
	out := s.replace(raw)
	if len(out) > keep {
		out, truncated = out[len(out)-keep:], true
	}
	if truncated {
		out = s.dropCutPath(out)
		// Drop a rune cut in half at the start.
		for i := 0; i < utf8.UTFMax && i < len(out); i++ {
			if utf8.RuneStart(out[i]) {
				out = out[i:]
				break
			}
		}
	}
	return strings.ToValidUTF8(out, "\uFFFD"), truncated
}

// dropCutPath removes a proper suffix of a host path at the start of s.
func (s *scrubber) dropCutPath(out string) string {
	for _, p := range s.olds {
		o := p.old
		for k := len(o) - 1; k > 0; k-- {
			if strings.HasPrefix(out, o[len(o)-k:]) {
				return out[k:]
			}
		}
	}
	return out
}

// shortTail is the last line or so of out for an error message.
func shortTail(out string) string {
	out = strings.TrimSpace(out)
	const max = 300
	if len(out) > max {
		out = out[len(out)-max:]
		for i := 0; i < utf8.UTFMax && i < len(out); i++ {
			if utf8.RuneStart(out[i]) {
				out = out[i:]
				break
			}
		}
		out = "…" + out
	}
	return strings.ToValidUTF8(out, "\uFFFD")
}

// Placeholders for the bridge's own paths in outputs.
const (
	scrubActionHome = "$HOME"
	scrubBridgePath = "<bridge>"
)
