package git

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// Repository diffs and commits learn a file's size
// before reading it, stream what they read, and keep to the call's time
// cap. The 1 GiB cases run in a re-executed test binary so that the peak
// RSS (VmHWM) of the operation alone can be read.

// hostileChildEnv carries the operation a re-executed test binary runs.
const hostileChildEnv = "SERVERFS_GIT_HOSTILE_CHILD"

// maxHostileGrowthKiB is the RSS growth every hostile case stays under.
const maxHostileGrowthKiB = 64 << 10

type hostileOp struct {
	Dir string `json:"dir"`
	// Op is status, diff, staged_diff, commit, log, show, blame,
	// checkout (into a new directory) or submit (Workspace's files, a
	// checkout of Rev, committed and merged strict onto main).
	Op        string   `json:"op"`
	Paths     []string `json:"paths"`
	Rev       string   `json:"rev,omitempty"`
	Workspace string   `json:"workspace,omitempty"`
}

type hostileOut struct {
	BeforeKiB int64           `json:"before_kib"`
	AfterKiB  int64           `json:"after_kib"`
	Elapsed   time.Duration   `json:"elapsed"`
	Result    json.RawMessage `json:"result,omitempty"`
	Code      string          `json:"code,omitempty"`
	Err       string          `json:"err,omitempty"`
}

// TestHostileChild is the child side of runHostile: it does nothing in an
// ordinary run.
func TestHostileChild(t *testing.T) {
	spec := os.Getenv(hostileChildEnv)
	if spec == "" {
		return
	}
	var op hostileOp
	if err := json.Unmarshal([]byte(spec), &op); err != nil {
		t.Fatal(err)
	}
	specs := []string{"wd=" + op.Dir + ":rw:repo"}
	if op.Workspace != "" {
		specs = append(specs, "ws="+op.Workspace+":rw")
	}
	f := newWorkdirFS(t, specs...)
	var checkoutDir int
	if op.Op == "checkout" {
		fd, err := unix.Open(t.TempDir(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		checkoutDir = fd
	}
	out := hostileOut{BeforeKiB: vmHWM(t)}
	start := time.Now()
	ctx := context.Background()
	var res any
	r, err := Open(f, "wd")
	if err == nil {
		switch op.Op {
		case "status":
			res, err = r.Status(ctx, 100)
		case "diff", "staged_diff":
			res, err = r.Diff(ctx, op.Op == "staged_diff", op.Paths, 0)
		case "commit":
			res, err = r.Commit(ctx, op.Paths, "hostile")
		case "log":
			res, err = r.Log(ctx, LogOptions{Files: true, Rev: op.Rev, Paths: op.Paths})
		case "show":
			res, err = r.Show(ctx, op.Rev, op.Paths, 0)
		case "blame":
			res, err = r.BlameLines(ctx, op.Rev, op.Paths[0], 1, MaxBlameLines)
		case "checkout":
			res, err = r.Checkout(ctx, op.Rev, checkoutDir, CheckoutLimits{})
		case "submit":
			w, werr := f.Workdir("ws")
			if werr != nil {
				t.Fatal(werr)
			}
			var p *Patch
			if p, err = r.CommitWorkspace(ctx, w, op.Rev, "hostile submit"); err == nil {
				res, err = r.Submit(ctx, "main", p, MergeStrict, "")
			}
		default:
			t.Fatalf("unknown op %q", op.Op)
		}
	}
	out.Elapsed = time.Since(start)
	out.AfterKiB = vmHWM(t)
	if err != nil {
		out.Err, out.Code = err.Error(), string(errs.CodeOf(err))
	} else {
		out.Result, _ = json.Marshal(res)
	}
	b, _ := json.Marshal(out)
	fmt.Printf("\nHOSTILE-RESULT %s\n", b)
}

// vmHWM is this process's peak resident set size in KiB.
func vmHWM(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// runHostile runs op in a child process (this test binary, re-executed),
// with the same HOME, and returns what it measured.
func runHostile(t *testing.T, op hostileOp) hostileOut {
	t.Helper()
	spec, _ := json.Marshal(op)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostileChild$", "-test.count=1")
	// A race-enabled child would sleep a second at exit (the race
	// runtime's atexit_sleep_ms).
	cmd.Env = append(os.Environ(), hostileChildEnv+"="+string(spec), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %s: %v\n%s\n%s", op.Op, err, stdout, stderr.Bytes())
	}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, len(stdout)+1) // an answer's line may be long
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "HOSTILE-RESULT "); ok {
			var out hostileOut
			if err := json.Unmarshal([]byte(rest), &out); err != nil {
				t.Fatal(err)
			}
			res := out.Result
			if len(res) > 512 {
				res = append(res[:512:512], "..."...)
			}
			t.Logf("%s %v: RSS peak %d -> %d KiB (+%d KiB) in %v: %s%s", op.Op, op.Paths, out.BeforeKiB, out.AfterKiB, out.AfterKiB-out.BeforeKiB, out.Elapsed.Round(time.Millisecond), out.Code, res)
			return out
		}
	}
	t.Fatalf("child %s printed no result:\n%s\n%s", op.Op, stdout, stderr.Bytes())
	return hostileOut{}
}

// writeZeroBlob stores, as a loose object of the repository in dir, a blob
// of size zero bytes except the bytes of patch (offset -> byte), and
// returns its id. It is fast for any size: only SHA-1 runs over the whole
// content; the zlib stream is made of independently compressed 1 MiB
// chunks (byte-aligned by a sync flush, so they concatenate), the one of
// zeros computed once, and the Adler-32 computed arithmetically.
func writeZeroBlob(t *testing.T, dir string, size int64, patch map[int64]byte) string {
	t.Helper()
	return writeZeroObject(t, dir, "blob", size, patch)
}

// writeZeroObject is writeZeroBlob for an object of any type (its content
// need not be well formed: a reader refuses it from its size first).
func writeZeroObject(t *testing.T, dir, typ string, size int64, patch map[int64]byte) string {
	t.Helper()
	const chunk = 1 << 20
	deflate := func(b []byte) []byte {
		var out bytes.Buffer
		w, _ := flate.NewWriter(&out, flate.BestSpeed)
		w.Write(b)
		w.Flush()
		return out.Bytes()
	}
	header := []byte(fmt.Sprintf("%s %d\x00", typ, size))
	zeros := make([]byte, chunk)
	zeroChunk := deflate(zeros)
	offsets := make([]int64, 0, len(patch))
	for off := range patch {
		offsets = append(offsets, off)
	}
	sort.Slice(offsets, func(i, j int) bool { return offsets[i] < offsets[j] })

	// Adler-32: a run of n zeros leaves A and adds n*A to B.
	const mod = 65521
	a, b := uint64(1), uint64(0)
	feed := func(p []byte) {
		for _, c := range p {
			a = (a + uint64(c)) % mod
			b = (b + a) % mod
		}
	}
	feedZeros := func(n int64) { b = (b + uint64(n%mod)*a) % mod }

	h := sha1.New()
	h.Write(header)
	feed(header)
	var z bytes.Buffer
	z.Write([]byte{0x78, 0x01})
	z.Write(deflate(header))
	buf := make([]byte, chunk)
	for off := int64(0); off < size; off += chunk {
		n := min(chunk, size-off)
		p := zeros[:n]
		var here []int64
		for _, o := range offsets {
			if o >= off && o < off+n {
				here = append(here, o)
			}
		}
		if len(here) > 0 {
			copy(buf, zeros[:n])
			p = buf[:n]
			last := int64(0)
			for _, o := range here {
				p[o-off] = patch[o]
				feedZeros(o - off - last)
				feed(p[o-off : o-off+1])
				last = o - off + 1
			}
			feedZeros(n - last)
			z.Write(deflate(p))
		} else {
			feedZeros(n)
			if n == chunk {
				z.Write(zeroChunk)
			} else {
				z.Write(deflate(p))
			}
		}
		h.Write(p)
	}
	var fin bytes.Buffer
	w, _ := flate.NewWriter(&fin, flate.BestSpeed)
	w.Close()
	z.Write(fin.Bytes())
	sum := uint32(b<<16 | a)
	z.Write([]byte{byte(sum >> 24), byte(sum >> 16), byte(sum >> 8), byte(sum)})
	id := hex.EncodeToString(h.Sum(nil))
	obj := filepath.Join(dir, ".git", "objects", id[:2], id[2:])
	os.MkdirAll(filepath.Dir(obj), 0o755)
	if err := os.WriteFile(obj, z.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	return id
}

// sparseFile makes a sparse file of size bytes with the bytes of patch.
func sparseFile(t *testing.T, path string, size int64, patch map[int64]byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for off, c := range patch {
		if _, err := f.WriteAt([]byte{c}, off); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOneGiBFileDiffAndCommit: a 1 GiB tracked file, changed in HEAD ->
// index and in index -> work tree, through diff, staged_diff and commit:
// each answers too_large (or refuses the commit) without reading it, with
// RSS growth under 64 MiB; a commit of a file below the commit cap
// streams it.
func TestOneGiBFileDiffAndCommit(t *testing.T) {
	const gib = 1 << 30
	dir, _ := newCommitRepo(t)
	inHead := writeZeroBlob(t, dir, gib, map[int64]byte{123: 'A'})
	inIndex := writeZeroBlob(t, dir, gib, map[int64]byte{600 << 20: 'B'})
	if got := strings.TrimSpace(gitCLI(t, dir, "cat-file", "-s", inIndex)); got != strconv.Itoa(gib) {
		t.Fatalf("git reads the blob's size as %s", got)
	}
	// The same blob is also a sparse checkout's sub/.gitignore: absent
	// from the work tree, read from the index by the ignore rules.
	gitCLI(t, dir, "update-index", "--add", "--cacheinfo", "100644,"+inHead+",big.bin", "--cacheinfo", "100644,"+inHead+",sub/.gitignore")
	gitCLI(t, dir, "commit", "-qm", "big")
	gitCLI(t, dir, "update-index", "--skip-worktree", "sub/.gitignore")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	gitCLI(t, dir, "update-index", "--cacheinfo", "100644,"+inIndex+",big.bin")
	sparseFile(t, filepath.Join(dir, "big.bin"), gib, map[int64]byte{900 << 20: 'C'})

	check := func(op hostileOp, wantChange, wantCode string) hostileOut {
		t.Helper()
		out := runHostile(t, op)
		if g := out.AfterKiB - out.BeforeKiB; g > maxHostileGrowthKiB {
			t.Errorf("%s: RSS grew by %d KiB (more than %d)", op.Op, g, maxHostileGrowthKiB)
		}
		if out.Elapsed > sfs.DefaultLimits().SearchTimeout {
			t.Errorf("%s took %v, more than the advertised %v", op.Op, out.Elapsed, sfs.DefaultLimits().SearchTimeout)
		}
		if out.Code != wantCode {
			t.Errorf("%s: code %q (%s), want %q", op.Op, out.Code, out.Err, wantCode)
		}
		if wantChange != "" {
			var res DiffResult
			json.Unmarshal(out.Result, &res)
			if len(res.Files) != 1 || res.Files[0].Change != wantChange || res.Patch != "" {
				t.Errorf("%s: %s, want one file %s", op.Op, out.Result, wantChange)
			}
		}
		return out
	}
	check(hostileOp{Dir: dir, Op: "diff", Paths: []string{"big.bin"}}, "too_large", "")
	check(hostileOp{Dir: dir, Op: "staged_diff", Paths: []string{"big.bin"}}, "too_large", "")

	// The commit: the index back at HEAD, the work tree's 1 GiB change is
	// refused before it is read; a 72 MiB file below the cap is committed
	// streaming (its bytes never held whole), after the ignore rules of
	// sub/ (the 1 GiB .gitignore, too large to be rules) are consulted.
	gitCLI(t, dir, "update-index", "--cacheinfo", "100644,"+inHead+",big.bin")
	check(hostileOp{Dir: dir, Op: "commit", Paths: []string{"big.bin"}}, "", string(errs.WriteLimitExceeded))
	const mid = 72 << 20
	sparseFile(t, filepath.Join(dir, "sub/mid.bin"), mid, map[int64]byte{0: 'm', 40 << 20: 'M', mid - 1: '\n'})
	check(hostileOp{Dir: dir, Op: "commit", Paths: []string{"sub/mid.bin"}}, "", "")
	if got := strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD:sub/mid.bin")); got != strings.TrimSpace(gitCLI(t, dir, "hash-object", "sub/mid.bin")) {
		t.Fatalf("committed blob %s is not git's", got)
	}
	gitCLI(t, dir, "fsck", "--no-dangling", "--connectivity-only")

	// More than a commit takes in all, each file below the cap: refused
	// from the sizes, nothing read, nothing changed.
	head := headOf(t, dir)
	var many []string
	for i := range maxCommitBytes/maxStagedFileSize + 1 {
		p := fmt.Sprintf("sub/part%02d.bin", i)
		sparseFile(t, filepath.Join(dir, p), maxStagedFileSize, map[int64]byte{int64(i): 'p'})
		many = append(many, p)
	}
	out := check(hostileOp{Dir: dir, Op: "commit", Paths: many}, "", string(errs.WriteLimitExceeded))
	if out.Elapsed > time.Second || headOf(t, dir) != head {
		t.Errorf("commit of %d bytes: %v, HEAD %s -> %s", len(many)*maxStagedFileSize, out.Elapsed, head, headOf(t, dir))
	}
}

// TestDiffManyLargePathsKeepsTheCaps: 21 paths of ~8 MB in one diff call
// (each below the per-file limit) stop at the call's read limit, and 100
// paths of text whose edit search is slow stop at the time cap: the answer
// comes within the cap (here 1 s), truncated with the reason.
func TestDiffManyLargePathsKeepsTheCaps(t *testing.T) {
	setup := func(t *testing.T, timeout, n int, indexContent []byte, worktree func(i int) []byte) (*Repo, []string) {
		t.Helper()
		dir, _ := newCommitRepo(t)
		write(t, filepath.Join(dir, "blob"), string(indexContent))
		h := strings.TrimSpace(gitCLI(t, dir, "hash-object", "-w", "blob"))
		os.Remove(filepath.Join(dir, "blob"))
		args := []string{"update-index", "--add"}
		var paths []string
		for i := range n {
			p := fmt.Sprintf("f%02d.txt", i)
			paths = append(paths, p)
			args = append(args, "--cacheinfo", "100644,"+h+","+p)
			if err := os.WriteFile(filepath.Join(dir, p), worktree(i), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gitCLI(t, dir, args...)
		f := newWorkdirFSEnv(t, []string{fmt.Sprintf("SERVERFS_SEARCH_TIMEOUT_SECONDS=%d", timeout)}, "wd="+dir+":ro:repo")
		r, err := Open(f, "wd")
		if err != nil {
			t.Fatal(err)
		}
		return r, paths
	}
	run := func(t *testing.T, r *Repo, paths []string, reason string) *DiffResult {
		t.Helper()
		start := time.Now()
		res, err := r.Diff(context.Background(), false, paths, MaxDiffBytes)
		elapsed := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d paths: %d compared, truncated %v (%s), %d patch bytes, in %v", len(paths), len(res.Files), res.Truncated, res.TruncatedReason, len(res.Patch), elapsed.Round(time.Millisecond))
		if !res.Truncated || res.TruncatedReason != reason || len(res.Files) >= len(paths) {
			t.Errorf("truncated %v (%q) after %d of %d files, want a cut for %q", res.Truncated, res.TruncatedReason, len(res.Files), len(paths), reason)
		}
		// Within the cap: twice it, and slack for a loaded CI machine.
		if cap := r.fs.Limits().SearchTimeout; elapsed > 2*cap+time.Second {
			t.Errorf("took %v, more than the %v cap allows", elapsed, cap)
		}
		return res
	}

	t.Run("read limit", func(t *testing.T) {
		// Binary content, cheap to compare, and a time cap that does not
		// come first: the read limit decides.
		const size = 8_000_000
		base := make([]byte, size)
		r, paths := setup(t, 60, 21, base, func(i int) []byte {
			b := bytes.Clone(base)
			b[size/2] = byte('a' + i)
			return b
		})
		res := run(t, r, paths, DiffCutReadLimit)
		if len(res.Files) > 0 && !res.Files[0].Binary {
			t.Errorf("first file %+v, want binary", res.Files[0])
		}
	})
	t.Run("timeout", func(t *testing.T) {
		// 260,000 equal lines, 260 of them changed in the work tree, in
		// each of the most paths a diff takes. The time cap ends at the
		// diff's third look at it (an injected clock: on any machine, idle,
		// loaded or under -race), which is at the latest the look before
		// the second file: the diff answers what it compared by then.
		const lines, changes = 260_000, 260
		base := []byte(strings.Repeat("s\n", lines))
		r, paths := setup(t, 60, MaxDiffPaths, base, func(i int) []byte {
			b := bytes.Clone(base)
			for k := range changes {
				b[2*(k*lines/changes+i)] = 'x'
			}
			return b
		})
		looks := &atomic.Int64{}
		diffDeadline = func(ctx context.Context, _ time.Duration) (context.Context, context.CancelFunc) {
			return &countdownCtx{Context: ctx, left: 2, looks: looks}, func() {}
		}
		t.Cleanup(func() { diffDeadline = context.WithTimeout })
		res := run(t, r, paths, sfs.TruncatedTimeout)
		if len(res.Files) > 1 {
			t.Errorf("%d files compared after the cap ended before the second", len(res.Files))
		}
	})
}

// countdownCtx is a context whose deadline passes at the left+1-th call
// of Err: a time cap that ends at a chosen step of the code under test.
type countdownCtx struct {
	context.Context
	left  int64
	looks *atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.looks.Add(1) > c.left {
		return context.DeadlineExceeded
	}
	return c.Context.Err()
}

// TestContentScanAcrossWrites: what commit checks while streaming a file
// is found wherever the writes split it.
func TestContentScanAcrossWrites(t *testing.T) {
	for _, parts := range [][]string{{"a$Id"}, {"a$", "Id"}, {"$I", "d"}, {"$", "I", "d"}, {"x$", "", "Id"}} {
		s := &contentScan{}
		for _, p := range parts {
			s.Write([]byte(p))
		}
		if !s.id || s.cr {
			t.Errorf("%q: id %v cr %v", parts, s.id, s.cr)
		}
	}
	s := &contentScan{}
	for _, p := range []string{"$", "x", "Id", "a\r"} {
		s.Write([]byte(p))
	}
	if s.id || !s.cr {
		t.Errorf("$xId: id %v cr %v", s.id, s.cr)
	}
}

// TestStatusHashesLargeFilesWithinTheCap: status hashes a work-tree file
// whose stat data differs from the index streaming; four 1 GiB files stop
// at the time cap (here 1 s) inside the hashing, not after it.
func TestStatusHashesLargeFilesWithinTheCap(t *testing.T) {
	dir, _ := newCommitRepo(t)
	args := []string{"update-index", "--add", "--info-only"}
	for i := range 4 {
		p := fmt.Sprintf("big%d.bin", i)
		sparseFile(t, filepath.Join(dir, p), 1<<30, map[int64]byte{int64(i) << 20: 'x'})
		// Size 0 in the index: only the content can tell.
		args = append(args, "--cacheinfo", "100644,"+strings.Repeat(strconv.Itoa(i+1), 40)+","+p)
	}
	gitCLI(t, dir, args...)
	f := newWorkdirFSEnv(t, []string{"SERVERFS_SEARCH_TIMEOUT_SECONDS=1"}, "wd="+dir+":ro:repo")
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	st, err := r.Status(context.Background(), 100)
	elapsed := time.Since(start)
	t.Logf("status of 4 GiB to hash: %v in %v", err, elapsed.Round(time.Millisecond))
	if elapsed > 3*time.Second {
		t.Errorf("status took %v, more than the 1 s cap allows", elapsed)
	}
	if errs.CodeOf(err) != errs.Canceled {
		t.Errorf("status: %+v, %v; want the time cap's CANCELED", st, err)
	}
}

// TestHeaderSizeMatchesGit: object sizes from headers alone agree with
// git cat-file for loose objects, packed ones, deltas (both kinds) and
// entries at 64-bit offsets.
func TestHeaderSizeMatchesGit(t *testing.T) {
	dir, _ := newCommitRepo(t)
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "line %d of a file that changes a little each commit\n", i)
	}
	text := b.String()
	for round := range 4 {
		text = strings.Replace(text, fmt.Sprintf("line %d ", round*997), "changed line ", 1)
		write(t, filepath.Join(dir, "f.txt"), text)
		gitCLI(t, dir, "add", "f.txt")
		gitCLI(t, dir, "commit", "-qm", fmt.Sprint(round))
	}
	gitCLI(t, dir, "repack", "-adfq", "--depth=10")
	// The pack's index again, with every offset past 0x100 in the 64-bit table.
	packs, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	os.Remove(strings.TrimSuffix(packs[0], ".pack") + ".idx")
	gitCLI(t, dir, "index-pack", "--index-version=2,0x100", packs[0])
	write(t, filepath.Join(dir, "loose.txt"), "loose\n")
	gitCLI(t, dir, "add", "loose.txt")
	if !strings.Contains(gitCLI(t, dir, "verify-pack", "-v", packs[0]), "chain length = ") {
		t.Fatal("the pack has no deltas")
	}
	r, _ := openRW(t, dir)
	checked := 0
	for _, l := range strings.Split(strings.TrimSpace(gitCLI(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objectsize)")), "\n") {
		id, want, _ := strings.Cut(l, " ")
		got, err := r.objs.HeaderSize(plumbing.NewHash(id))
		if err != nil || strconv.FormatInt(got, 10) != want {
			t.Errorf("%s: %d, %v; git says %s", id, got, err, want)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d objects", checked)
	}
}

// writeDeltaPack writes a pack (and its index) holding a one-byte blob and
// a blob of chunks*8192*127 zero bytes stored as a REF_DELTA against it
// whose delta data is all insertions, as large as the blob: what a hostile
// remote can send. It returns the large blob's id and size.
func writeDeltaPack(t *testing.T, dir string, chunks int) (string, int64) {
	t.Helper()
	uvarint := func(v int64) []byte { // the delta header's varint
		var out []byte
		for {
			c := byte(v & 0x7f)
			if v >>= 7; v > 0 {
				out = append(out, c|0x80)
				continue
			}
			return append(out, c)
		}
	}
	entryHeader := func(typ byte, size int64) []byte {
		out := []byte{typ<<4 | byte(size&15)}
		for size >>= 4; size > 0; size >>= 7 {
			out[len(out)-1] |= 0x80
			out = append(out, byte(size&0x7f))
		}
		return out
	}
	deflate := func(b []byte, final bool) []byte {
		var out bytes.Buffer
		w, _ := flate.NewWriter(&out, flate.BestSpeed)
		w.Write(b)
		if final {
			w.Close()
		} else {
			w.Flush()
		}
		return out.Bytes()
	}
	chunk := bytes.Repeat(append([]byte{0x7f}, make([]byte, 127)...), 8192)
	size := int64(chunks) * 8192 * 127
	deltaHead := append(uvarint(1), uvarint(size)...)
	ad := adler32.New()
	ad.Write(deltaHead)
	var z bytes.Buffer
	z.Write([]byte{0x78, 0x01})
	z.Write(deflate(deltaHead, false))
	zc := deflate(chunk, false)
	for range chunks {
		z.Write(zc)
		ad.Write(chunk)
	}
	z.Write(deflate(nil, true))
	z.Write(ad.Sum(nil))

	oid := func(content func(io.Writer), n int64) []byte {
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", n)
		content(h)
		return h.Sum(nil)
	}
	base := oid(func(w io.Writer) { w.Write([]byte("x")) }, 1)
	big := oid(func(w io.Writer) {
		zeros := make([]byte, 127*8192)
		for range chunks {
			w.Write(zeros)
		}
	}, size)
	var baseZ bytes.Buffer
	zw := zlib.NewWriter(&baseZ)
	zw.Write([]byte("x"))
	zw.Close()

	var pack bytes.Buffer
	pack.WriteString("PACK\x00\x00\x00\x02\x00\x00\x00\x02")
	type entry struct {
		id  []byte
		off int64
		crc uint32
	}
	add := func(id, raw []byte) entry {
		e := entry{id: id, off: int64(pack.Len()), crc: crc32.ChecksumIEEE(raw)}
		pack.Write(raw)
		return e
	}
	e1 := add(base, append(entryHeader(3, 1), baseZ.Bytes()...))
	e2 := add(big, append(append(entryHeader(7, int64(len(deltaHead)+chunks*len(chunk))), base...), z.Bytes()...))
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])

	es := []entry{e1, e2}
	sort.Slice(es, func(i, j int) bool { return bytes.Compare(es[i].id, es[j].id) < 0 })
	var idx bytes.Buffer
	idx.WriteString("\377tOc\x00\x00\x00\x02")
	for b := range 256 {
		n := 0
		for _, e := range es {
			if int(e.id[0]) <= b {
				n++
			}
		}
		binary.Write(&idx, binary.BigEndian, uint32(n))
	}
	for _, e := range es {
		idx.Write(e.id)
	}
	for _, e := range es {
		binary.Write(&idx, binary.BigEndian, e.crc)
	}
	for _, e := range es {
		binary.Write(&idx, binary.BigEndian, uint32(e.off))
	}
	idx.Write(sum[:])
	isum := sha1.Sum(idx.Bytes())
	idx.Write(isum[:])
	name := filepath.Join(dir, ".git/objects/pack/pack-"+hex.EncodeToString(sum[:]))
	os.MkdirAll(filepath.Dir(name), 0o755)
	if err := os.WriteFile(name+".pack", pack.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name+".idx", idx.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(big), size
}

// TestPackedDeltaDiffReadsHeadersOnly: a staged 260 MB blob packed as a
// delta of inserted bytes (delta data as large as the blob) is too_large
// from the delta's header, its data not inflated: RSS growth under 64 MiB.
func TestPackedDeltaDiffReadsHeadersOnly(t *testing.T) {
	dir, _ := newCommitRepo(t)
	id, size := writeDeltaPack(t, dir, 256)
	if got := strings.TrimSpace(gitCLI(t, dir, "cat-file", "-s", id)); got != strconv.FormatInt(size, 10) {
		t.Fatalf("git reads the delta's size as %s, want %d", got, size)
	}
	gitCLI(t, dir, "update-index", "--add", "--cacheinfo", "100644,"+id+",huge.bin")
	out := runHostile(t, hostileOp{Dir: dir, Op: "staged_diff", Paths: []string{"huge.bin"}})
	if g := out.AfterKiB - out.BeforeKiB; g > maxHostileGrowthKiB {
		t.Errorf("RSS grew by %d KiB (more than %d)", g, maxHostileGrowthKiB)
	}
	var res DiffResult
	json.Unmarshal(out.Result, &res)
	if out.Err != "" || len(res.Files) != 1 || res.Files[0].Change != "too_large" {
		t.Errorf("staged_diff: %s %s, want huge.bin too_large", out.Err, out.Result)
	}
}
