package fs

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/serverfs/serverfs/internal/faultfs"
)

// The power-cut harness: a workdir on a faultfs mount, a seeded random
// sequence of writes, a cut after a random number of file system
// operations, and checks of what survived. Every write that answered ok
// must be there in full, the write in flight at the cut all or nothing,
// no file torn, no temporary visible once the server has started again.
// DURABILITY_CUTS sets the number of cuts, DURABILITY_SEED the first seed
// (cut i uses seed+i; a failure names its seed).

// durState is a workdir's tree: file contents and directories by path.
type durState struct {
	files map[string]string
	dirs  map[string]bool
}

func (s durState) clone() durState {
	c := durState{files: map[string]string{}, dirs: map[string]bool{}}
	for k, v := range s.files {
		c.files[k] = v
	}
	for k := range s.dirs {
		c.dirs[k] = true
	}
	return c
}

func (s durState) equal(o durState) bool {
	if len(s.files) != len(o.files) || len(s.dirs) != len(o.dirs) {
		return false
	}
	for k, v := range s.files {
		if w, ok := o.files[k]; !ok || w != v {
			return false
		}
	}
	for k := range s.dirs {
		if !o.dirs[k] {
			return false
		}
	}
	return true
}

// durOp is one write: its kind (the table's row), how to run it and its
// effect on the expected state. partial, when set, lists the states a
// cut in the middle of it may leave besides before and after.
type durOp struct {
	kind    string
	desc    string
	run     func(f *FS) error
	apply   func(s *durState)
	partial func(s durState) []durState
}

var durKinds = []string{"write_new", "write_replace", "edit", "move_file", "move_dir", "delete_file", "delete_dir", "create_dir"}

// durContent is 1 to 400 lines, each unique (an edit's old_text occurs once).
func durContent(rng *rand.Rand) string {
	var b strings.Builder
	for i, n := 0, 1+rng.Intn(400); i < n; i++ {
		fmt.Fprintf(&b, "L%03d %016x%08x\n", i, rng.Uint64(), rng.Uint32())
	}
	return b.String()
}

// durChildren lists the parents a new entry may go in: the root and every
// directory not deeper than 2.
func (s durState) parents() []string {
	ps := []string{""}
	for d := range s.dirs {
		if strings.Count(d, "/") < 2 {
			ps = append(ps, d)
		}
	}
	sort.Strings(ps)
	return ps
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// freeName is a name in parent that is neither a file nor a directory.
func (s durState) freeName(rng *rand.Rand, parent, prefix string) (string, bool) {
	for range 8 {
		p := join(parent, prefix+strconv.Itoa(rng.Intn(4)))
		if _, f := s.files[p]; !f && !s.dirs[p] {
			return p, true
		}
	}
	return "", false
}

func pick[T any](rng *rand.Rand, m map[string]T) (string, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return "", false
	}
	sort.Strings(keys)
	return keys[rng.Intn(len(keys))], true
}

// genOp returns a write that is valid in s (so that it succeeds unless
// the power is cut), or false.
func genOp(rng *rand.Rand, s durState) (durOp, bool) {
	kind := durKinds[rng.Intn(len(durKinds))]
	switch kind {
	case "write_new":
		ps := s.parents()
		p, ok := s.freeName(rng, ps[rng.Intn(len(ps))], "x")
		c := durContent(rng)
		return durOp{kind, "write_text_file " + p, func(f *FS) error { _, err := f.WriteFile(bg, "wd", p, c, ""); return err },
			func(s *durState) { s.files[p] = c }, nil}, ok
	case "write_replace", "edit", "delete_file":
		p, ok := pick(rng, s.files)
		return fileOp(rng, kind, p, s.files[p]), ok
	case "move_file":
		from, ok := pick(rng, s.files)
		ps := s.parents()
		to, ok2 := s.freeName(rng, ps[rng.Intn(len(ps))], "x")
		rev := ""
		if rng.Intn(2) == 0 {
			rev = Revision([]byte(s.files[from]))
		}
		return durOp{kind, "move_path " + from + " " + to, func(f *FS) error { _, err := f.MovePath(bg, "wd", from, to, rev); return err },
			func(s *durState) { s.files[to] = s.files[from]; delete(s.files, from) }, nil}, ok && ok2
	case "move_dir":
		return moveDirOp(rng, s)
	case "delete_dir":
		d, ok := pick(rng, s.dirs)
		for p := range s.files {
			ok = ok && !strings.HasPrefix(p, d+"/")
		}
		for p := range s.dirs {
			ok = ok && !strings.HasPrefix(p, d+"/")
		}
		return durOp{kind, "delete_path " + d, func(f *FS) error { _, err := f.DeletePath(bg, "wd", d, ""); return err },
			func(s *durState) { delete(s.dirs, d) }, nil}, ok
	default: // create_dir, with a missing parent at times
		ps := s.parents()
		p, ok := s.freeName(rng, ps[rng.Intn(len(ps))], "d")
		if ok && rng.Intn(3) == 0 && strings.Count(p, "/") < 2 {
			p = join(p, "d"+strconv.Itoa(rng.Intn(4)))
		}
		mkdirs := func(s *durState, p string) {
			for q := p; q != "." && q != ""; q = filepath.Dir(q) {
				s.dirs[q] = true
			}
		}
		// Like mkdir -p, it creates the missing parents one by one: a
		// cut may leave some of them.
		partial := func(s durState) (states []durState) {
			for q := filepath.Dir(p); q != "."; q = filepath.Dir(q) {
				n := s.clone()
				mkdirs(&n, q)
				states = append(states, n)
			}
			return states
		}
		return durOp{kind, "create_directory " + p, func(f *FS) error { _, err := f.CreateDirectory(bg, "wd", p); return err },
			func(s *durState) { mkdirs(s, p) }, partial}, ok
	}
}

// fileOp replaces, edits or deletes the file p whose content is old.
func fileOp(rng *rand.Rand, kind, p, old string) durOp {
	rev := Revision([]byte(old))
	switch kind {
	case "write_replace":
		c := durContent(rng)
		return durOp{kind, "write_text_file " + p, func(f *FS) error { _, err := f.WriteFile(bg, "wd", p, c, rev); return err },
			func(s *durState) { s.files[p] = c }, nil}
	case "edit":
		lines := strings.SplitAfter(old, "\n")
		i := rng.Intn(len(lines) - 1) // the last is empty
		nl := fmt.Sprintf("E%03d %016x\n", i, rng.Uint64())
		edits := []Edit{{OldText: lines[i], NewText: nl}}
		c := strings.Replace(old, lines[i], nl, 1)
		return durOp{kind, "edit_text_file " + p, func(f *FS) error { _, err := f.EditFile(bg, "wd", p, edits, rev); return err },
			func(s *durState) { s.files[p] = c }, nil}
	default:
		return durOp{kind, "delete_path " + p, func(f *FS) error { _, err := f.DeletePath(bg, "wd", p, rev); return err },
			func(s *durState) { delete(s.files, p) }, nil}
	}
}

// moveDirOp moves a directory (and what it holds) to a free name.
func moveDirOp(rng *rand.Rand, s durState) (durOp, bool) {
	from, ok := pick(rng, s.dirs)
	ps := s.parents()
	to, ok2 := s.freeName(rng, ps[rng.Intn(len(ps))], "d")
	if !ok || !ok2 || strings.HasPrefix(to+"/", from+"/") || strings.Count(to, "/")+durDepth(s, from) > 2 {
		return durOp{}, false
	}
	rebase := func(p string) (string, bool) {
		if p == from || strings.HasPrefix(p, from+"/") {
			return to + p[len(from):], true
		}
		return p, false
	}
	return durOp{"move_dir", "move_path " + from + " " + to, func(f *FS) error { _, err := f.MovePath(bg, "wd", from, to, ""); return err },
		func(s *durState) {
			n := s.clone()
			clear(s.files)
			clear(s.dirs)
			for p, c := range n.files {
				q, _ := rebase(p)
				s.files[q] = c
			}
			for p := range n.dirs {
				q, _ := rebase(p)
				s.dirs[q] = true
			}
		}, nil}, true
}

// durDepth is how many directory levels hang below d.
func durDepth(s durState, d string) int {
	depth := 0
	for p := range s.dirs {
		if strings.HasPrefix(p, d+"/") {
			depth = max(depth, strings.Count(p[len(d):], "/"))
		}
	}
	return depth
}

// durInitial is the durable tree every cut starts from.
func durInitial(rng *rand.Rand) durState {
	s := durState{files: map[string]string{}, dirs: map[string]bool{"d0": true, "d1": true, "d1/d2": true}}
	for _, p := range []string{"x0", "x1", "d0/x0", "d1/x1", "d1/d2/x2"} {
		s.files[p] = durContent(rng)
	}
	return s
}

// durEnv is the mount the cuts run on.
type durEnv struct {
	fsys    *faultfs.FS
	mnt     string
	backing string
}

func newDurEnv(t *testing.T) *durEnv {
	t.Helper()
	mnt, backing := t.TempDir(), t.TempDir()
	fsys, err := faultfs.Mount(mnt, backing, 1)
	if errors.Is(err, faultfs.ErrUnavailable) {
		t.Skipf("FUSE cannot be mounted here (%v): no other test cuts the power under fs's writes (TestWriteCrashSafety only kills a process)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fsys.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return &durEnv{fsys: fsys, mnt: mnt, backing: backing}
}

// reset makes s the workdir's durable tree.
func (e *durEnv) reset(t *testing.T, s durState) {
	t.Helper()
	root := filepath.Join(e.mnt, "wd")
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	for d := range s.dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range s.files {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.fsys.Sync()
}

// open serves the workdir, read-write, as the server would.
func (e *durEnv) open(t *testing.T) *FS {
	t.Helper()
	cfg, err := LoadConfig(nil, []string{"wd=" + filepath.Join(e.mnt, "wd") + ":rw"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// scan reads the tree under dir (host paths); temporaries are counted,
// not listed.
func scan(dir string) (durState, int, error) {
	s := durState{files: map[string]string{}, dirs: map[string]bool{}}
	temps := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel := filepath.ToSlash(p[len(dir)+1:])
		switch {
		case isTempName(d.Name()):
			temps++
		case d.IsDir():
			s.dirs[rel] = true
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s.files[rel] = string(b)
		}
		return nil
	})
	return s, temps, err
}

// listTemps lists every directory of the workdir through the tool and
// counts the temporaries it shows.
func listTemps(f *FS, dirs map[string]bool) (int, error) {
	n := 0
	for _, d := range append([]string{""}, slices.Sorted(func(yield func(string) bool) {
		for d := range dirs {
			if !yield(d) {
				return
			}
		}
	})...) {
		l, err := f.List("wd", d, 0, 500)
		if err != nil {
			return n, err
		}
		for _, e := range l.Entries {
			if strings.HasPrefix(e.Name, tempPrefix) {
				n++
			}
		}
	}
	return n, nil
}

// cutOutcome is what one cut found.
type cutOutcome struct {
	inflight     string   // kind of the write in flight at the cut; "none": after the last
	lost         []string // kinds of the acknowledged writes whose effect is gone
	torn         int      // files neither old nor new content
	tempsLeft    int      // temporaries the cut left, before the start-up sweep
	tempsVisible int      // temporaries still there after the sweep
	problems     []string
}

// durOpsPerCut is the length of each cut's write sequence.
const durOpsPerCut = 6

// runCut runs one seeded cut: a write sequence from the initial tree, run
// once whole to count its file system operations, then again with the
// power cut after a random number of them.
func (e *durEnv) runCut(t *testing.T, seed int64) cutOutcome {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	init := durInitial(rng)
	var ops []durOp
	for s := init.clone(); len(ops) < durOpsPerCut; {
		if op, ok := genOp(rng, s); ok {
			op.apply(&s)
			ops = append(ops, op)
		}
	}
	e.reset(t, init)
	f := e.open(t)
	start := e.fsys.Ops()
	for _, op := range ops {
		if err := op.run(f); err != nil {
			f.Close()
			return cutOutcome{inflight: op.kind, problems: []string{fmt.Sprintf("%s failed without a cut: %v", op.desc, err)}}
		}
	}
	total := e.fsys.Ops() - start
	f.Close()

	e.reset(t, init)
	f = e.open(t)
	e.fsys.SetSeed(seed)
	e.fsys.CutAfter(1 + rng.Intn(total))
	acked, lastTouch := init.clone(), map[string]string{}
	written := map[string]bool{}
	for _, c := range init.files {
		written[c] = true
	}
	var inflight *durOp
	for i := range ops {
		next := acked.clone()
		ops[i].apply(&next)
		for _, c := range next.files {
			written[c] = true
		}
		if err := ops[i].run(f); err != nil {
			if !e.fsys.Tripped() {
				f.Close()
				return cutOutcome{inflight: ops[i].kind, problems: []string{fmt.Sprintf("%s failed before the cut: %v", ops[i].desc, err)}}
			}
			inflight = &ops[i]
			break
		}
		for _, p := range changedPaths(acked, next) {
			lastTouch[p] = ops[i].kind
		}
		acked = next
	}
	f.Close()
	return e.check(t, acked, inflight, lastTouch, written)
}

// changedPaths lists the files and directories that differ between a and b.
func changedPaths(a, b durState) []string {
	var ps []string
	for _, xy := range [2][2]durState{{a, b}, {b, a}} {
		x, y := xy[0], xy[1]
		for p, c := range x.files {
			if d, ok := y.files[p]; !ok || d != c {
				ps = append(ps, p)
			}
		}
		for p := range x.dirs {
			if !y.dirs[p] {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// check cuts the power, starts the server again (its start-up sweep
// included), cuts again (what the sweep did must be durable too) and
// compares what survived with what was acknowledged.
func (e *durEnv) check(t *testing.T, acked durState, inflight *durOp, lastTouch map[string]string, written map[string]bool) cutOutcome {
	t.Helper()
	out := cutOutcome{inflight: "none"}
	if inflight != nil {
		out.inflight = inflight.kind
	}
	root := filepath.Join(e.backing, "wd")
	if err := e.fsys.PowerCut(); err != nil {
		t.Fatal(err)
	}
	cut, left, err := scan(root)
	if err != nil {
		out.problems = append(out.problems, fmt.Sprintf("the surviving tree cannot be read: %v", err))
		return out
	}
	out.tempsLeft = left
	f := e.open(t)
	f.SweepTemporaries()
	vis, err := listTemps(f, cut.dirs)
	f.Close()
	if err != nil {
		out.problems = append(out.problems, fmt.Sprintf("list after restart: %v", err))
	}
	if err := e.fsys.PowerCut(); err != nil {
		t.Fatal(err)
	}
	got, temps, err := scan(root)
	if err != nil {
		out.problems = append(out.problems, fmt.Sprintf("the tree after the sweep cannot be read: %v", err))
		return out
	}
	if out.tempsVisible = vis + temps; out.tempsVisible > 0 {
		out.problems = append(out.problems, fmt.Sprintf("%d temporaries visible after the start-up sweep", out.tempsVisible))
	}
	after := acked.clone()
	if inflight != nil {
		inflight.apply(&after)
	}
	if got.equal(acked) || got.equal(after) {
		return out
	}
	if inflight != nil && inflight.partial != nil {
		for _, p := range inflight.partial(acked) {
			if got.equal(p) {
				return out
			}
		}
	}
	e.classify(&out, got, acked, after, lastTouch, written)
	return out
}

// classify names what differs: a torn file (content nobody wrote), or an
// acknowledged write lost; or, when every path is old or new, a write in
// flight that was applied in part.
func (e *durEnv) classify(out *cutOutcome, got, acked, after durState, lastTouch map[string]string, written map[string]bool) {
	paths := map[string]bool{}
	for _, s := range []durState{got, acked, after} {
		for p := range s.files {
			paths[p] = true
		}
		for p := range s.dirs {
			paths[p] = true
		}
	}
	same := func(a, b durState, p string) bool {
		ca, oka := a.files[p]
		cb, okb := b.files[p]
		return oka == okb && ca == cb && a.dirs[p] == b.dirs[p]
	}
	bad := 0
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range paths {
			if !yield(p) {
				return
			}
		}
	}) {
		if same(got, acked, p) || same(got, after, p) {
			continue
		}
		bad++
		if c, ok := got.files[p]; ok && !written[c] {
			out.torn++
			out.problems = append(out.problems, fmt.Sprintf("%s is torn: %d bytes nobody wrote", p, len(c)))
			continue
		}
		kind := lastTouch[p]
		if kind == "" {
			kind = "initial"
		}
		out.lost = append(out.lost, kind)
		out.problems = append(out.problems, fmt.Sprintf("%s: the acknowledged %s is lost (present %v, want %v)", p, kind, got.has(p), acked.has(p)))
	}
	if bad == 0 {
		out.problems = append(out.problems, fmt.Sprintf("the %s in flight was applied in part", out.inflight))
	}
}

func (s durState) has(p string) bool {
	_, ok := s.files[p]
	return ok || s.dirs[p]
}

// durRow is one line of the table, per kind of write.
type durRow struct {
	cuts, lost, torn, tempsLeft, tempsVisible int
	seeds                                     []int64
}

// runCuts runs n cuts from seed base and returns the table and the seeds
// whose cut found a problem (with the problems).
func (e *durEnv) runCuts(t *testing.T, n int, base int64) (map[string]*durRow, map[int64][]string) {
	t.Helper()
	table, failed := map[string]*durRow{}, map[int64][]string{}
	row := func(k string) *durRow {
		if table[k] == nil {
			table[k] = &durRow{}
		}
		return table[k]
	}
	for i := range n {
		seed := base + int64(i)
		out := e.runCut(t, seed)
		r := row(out.inflight)
		r.cuts++
		r.torn += out.torn
		r.tempsLeft += out.tempsLeft
		r.tempsVisible += out.tempsVisible
		for _, k := range out.lost {
			row(k).lost++
		}
		if len(out.problems) > 0 {
			r.seeds = append(r.seeds, seed)
			failed[seed] = out.problems
		}
	}
	return table, failed
}

func formatTable(table map[string]*durRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %6s %10s %6s %11s %14s  %s\n", "in flight", "cuts", "acked lost", "torn", "temps left", "temps visible", "failing seeds")
	for _, k := range append(slices.Clone(durKinds), "none", "initial") {
		if r := table[k]; r != nil {
			fmt.Fprintf(&b, "%-14s %6d %10d %6d %11d %14d  %v\n", k, r.cuts, r.lost, r.torn, r.tempsLeft, r.tempsVisible, r.seeds)
		}
	}
	return b.String()
}

// durSettings reads DURABILITY_CUTS and DURABILITY_SEED.
func durSettings(t *testing.T, defCuts int) (int, int64) {
	n, base := defCuts, int64(1)
	if v := os.Getenv("DURABILITY_CUTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("DURABILITY_CUTS=%q: want a positive count", v)
		}
	}
	if v := os.Getenv("DURABILITY_SEED"); v != "" {
		var err error
		if base, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("DURABILITY_SEED=%q: want an integer", v)
		}
	}
	return n, base
}

// TestDurabilityPowerCuts cuts the power under fs's writes: nothing
// acknowledged may be lost, nothing torn, no temporary left visible.
func TestDurabilityPowerCuts(t *testing.T) {
	e := newDurEnv(t)
	n, base := durSettings(t, 60)
	table, failed := e.runCuts(t, n, base)
	t.Logf("%d cuts from seed %d (the row is the write in flight; acked lost counts the write whose effect is gone):\n%s", n, base, formatTable(table))
	for _, seed := range slices.Sorted(func(yield func(int64) bool) {
		for s := range failed {
			if !yield(s) {
				return
			}
		}
	}) {
		t.Errorf("seed %d (DURABILITY_SEED=%d DURABILITY_CUTS=1): %s", seed, seed, strings.Join(failed[seed], "; "))
	}
}

// TestDurabilityHarnessFindsPlantedBug shows that the harness can fail:
// with the directory fsyncs of fs's writes removed, acknowledged writes
// are lost.
func TestDurabilityHarnessFindsPlantedBug(t *testing.T) {
	e := newDurEnv(t)
	fsyncDir = func(int) error { return nil }
	t.Cleanup(func() { fsyncDir = unix.Fsync })
	_, base := durSettings(t, 1) // 30 cuts, however many DURABILITY_CUTS asks of the real run
	n := 30
	table, failed := e.runCuts(t, n, base)
	lost, first := 0, int64(-1)
	for _, r := range table {
		lost += r.lost
	}
	for seed := range failed {
		if first < 0 || seed < first {
			first = seed
		}
	}
	if lost == 0 {
		t.Fatalf("with directory fsyncs removed, %d cuts lost no acknowledged write:\n%s", n, formatTable(table))
	}
	t.Logf("planted bug found: %d acknowledged writes lost; first seed %d: %s\n%s", lost, first, strings.Join(failed[first], "; "), formatTable(table))
}
