package search

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// teddyMatch is one start and the needles matching there.
type teddyMatch struct {
	pos   int
	which uint8
}

// naiveTeddy is the oracle: every start at or after from where some needle
// matches, compared byte by byte (ASCII letters folded when fold).
func naiveTeddy(needles []string, fold bool, b []byte, from int) []teddyMatch {
	var out []teddyMatch
	for s := max(from, 0); s < len(b); s++ {
		var w uint8
		for i, n := range needles {
			if s+len(n) > len(b) {
				continue
			}
			h := b[s : s+len(n)]
			if bytes.Equal(h, []byte(n)) || (fold && asciiEqualFold(h, n)) {
				w |= 1 << i
			}
		}
		if w != 0 {
			out = append(out, teddyMatch{s, w})
		}
	}
	return out
}

// asciiEqualFold is ASCII-only case folding written apart from the
// code under test.
func asciiEqualFold(h []byte, n string) bool {
	lower := func(c byte) byte {
		if c >= 'A' && c <= 'Z' {
			return c | 0x20
		}
		return c
	}
	for i := range h {
		if lower(h[i]) != lower(n[i]) {
			return false
		}
	}
	return true
}

// collectTeddy calls indexAll with batches of len(pos) until a short
// batch, resuming after the last match of a full one, and checks each
// batch's order.
func collectTeddy(t testing.TB, td *teddy, b []byte, from int, pos []int, which []uint8) []teddyMatch {
	t.Helper()
	var out []teddyMatch
	for {
		n := td.indexAll(b, from, pos, which)
		if n < 0 || n > len(pos) {
			t.Fatalf("indexAll returned %d for %d slots", n, len(pos))
		}
		for k := 0; k < n; k++ {
			if pos[k] < from || (k > 0 && pos[k] <= pos[k-1]) {
				t.Fatalf("from %d: starts out of order: %v", from, pos[:n])
			}
			out = append(out, teddyMatch{pos[k], which[k]})
		}
		if n < len(pos) {
			return out
		}
		from = pos[n-1] + 1
	}
}

// skipWithoutTeddyScan skips where teddyBlocks is the vector scan but
// the CPU lacks AVX2; elsewhere it is the generic scan and runs anywhere.
func skipWithoutTeddyScan(t testing.TB) {
	if runtime.GOARCH == "amd64" && !haveVectorPair {
		t.Skip("this CPU has no AVX2 (or GODEBUG=cpu.avx2=off): teddyBlocks is the AVX2 scan and cannot run here; TestNewTeddyNil proves no search reaches it (newTeddy is nil), and the differential tests run the generic paths")
	}
}

// testSeed is a fresh seed per run, or TEDDY_SEED to replay a failure.
func testSeed(t testing.TB) uint64 {
	seed := rand.Uint64()
	if s := os.Getenv("TEDDY_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (TEDDY_SEED=%d replays it)", seed, seed)
	return seed
}

// TestTeddyAgainstNaive: indexAll, resumed batch after batch, lists what
// the oracle lists, for 1 to 8 needles of 1 to 12 bytes (prefixes of
// each other and duplicates among them), on haystacks of small alphabets
// with both cases of the needles' letters and bytes >= 0x80, of lengths
// around the 32- and 64-byte blocks, from random starts.
func TestTeddyAgainstNaive(t *testing.T) {
	skipWithoutTeddyScan(t)
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0x7edd1))
	iters := 20000
	if testing.Short() {
		iters = 3000
	}
	for iter := 0; iter < iters; iter++ {
		fold := rng.IntN(2) == 0
		needles := randomNeedles(rng, fold)
		b := randomHaystack(rng, needles, fold)
		from := rng.IntN(len(b)+3) - 1
		batch := 1 + rng.IntN(3)
		if rng.IntN(4) == 0 {
			batch = 32
		}
		td := buildTeddy(needles, fold)
		if td == nil {
			t.Fatalf("seed %d: buildTeddy(%q, %v) = nil", seed, needles, fold)
		}
		got := collectTeddy(t, td, b, from, make([]int, batch), make([]uint8, batch))
		want := naiveTeddy(needles, fold, b, from)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d iter %d: needles %q fold=%v from %d batch %d in %q (%d bytes):\ngot  %v\nwant %v",
				seed, iter, needles, fold, from, batch, b, len(b), got, want)
		}
	}
}

func randomNeedles(rng *rand.Rand, fold bool) []string {
	letters := "abkAB_-"
	if !fold {
		letters += "\x80\xff"
	}
	needles := make([]string, 1+rng.IntN(8))
	for i := range needles {
		switch r := rng.IntN(6); {
		case i > 0 && r == 0: // a duplicate
			needles[i] = needles[rng.IntN(i)]
		case i > 0 && r == 1: // a prefix or an extension of another
			o := needles[rng.IntN(i)]
			if len(o) > 1 && rng.IntN(2) == 0 {
				needles[i] = o[:1+rng.IntN(len(o)-1)]
			} else {
				needles[i] = o + string(letters[rng.IntN(len(letters))])
			}
		default:
			n := make([]byte, 1+rng.IntN(12))
			if rng.IntN(2) == 0 {
				n = n[:min(len(n), 1+rng.IntN(3))] // short needles match often
			}
			for j := range n {
				n[j] = letters[rng.IntN(len(letters))]
			}
			needles[i] = string(n)
		}
		if len(needles[i]) > 12 {
			needles[i] = needles[i][:12]
		}
	}
	return needles
}

// randomHaystack draws from a few bytes (both cases of the needles'
// letters, bytes >= 0x80) and copies needles in, in random case when
// fold, so that matches are frequent.
func randomHaystack(rng *rand.Rand, needles []string, fold bool) []byte {
	alphabet := []byte("abkABK_-\x80\xff")
	var n int
	switch rng.IntN(3) {
	case 0:
		n = rng.IntN(301)
	default: // around 32- and 64-byte blocks
		n = 32*rng.IntN(10) + rng.IntN(7) - 3
		n = max(n, 0)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	for c := rng.IntN(8); c > 0; c-- {
		nd := needles[rng.IntN(len(needles))]
		if len(nd) > len(b) {
			continue
		}
		at := rng.IntN(len(b) - len(nd) + 1)
		for j := 0; j < len(nd); j++ {
			ch := nd[j]
			if fold && rng.IntN(2) == 0 && ('a' <= ch|0x20 && ch|0x20 <= 'z') {
				ch ^= 0x20
			}
			b[at+j] = ch
		}
	}
	return b
}

// TestTeddyBlocks: the vector scan hands over the blocks, masks and
// bucket sets that the generic one does and stops where it stops, for
// every fingerprint length, random (and needle-built) tables and lengths
// of 0 to 20 blocks (a batch holds 8).
func TestTeddyBlocks(t *testing.T) {
	skipWithoutTeddyScan(t)
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0xb10c))
	for iter := 0; iter < 20000; iter++ {
		m := 1 + rng.IntN(3)
		var tables [6][16]byte
		if r := rng.IntN(3); r < 2 {
			for k := range tables {
				for j := range tables[k] {
					if r == 0 {
						// Sparse: a candidate in some blocks, not all.
						tables[k][j] = uint8(rng.Uint32() & rng.Uint32() & rng.Uint32())
					} else {
						// Dense: candidates in most blocks, batches fill.
						tables[k][j] = uint8(rng.Uint32() | rng.Uint32())
					}
				}
			}
			// No candidate where the first byte's low nibble is 0: the
			// blocks made of such bytes below vary which blocks hold one.
			tables[0][0] = 0
		} else {
			fold := rng.IntN(2) == 0
			needles := randomNeedles(rng, fold)
			td := buildTeddy(needles, fold)
			tables, m = td.tables, td.m
		}
		n := 32 * rng.IntN(21)
		b := make([]byte, n+m-1+rng.IntN(3))
		for i := range b {
			b[i] = byte(rng.Uint32())
			if rng.IntN(2) == 0 {
				b[i] = "abkABK_\x80"[rng.IntN(8)]
			}
		}
		for blk := 0; blk+32 <= len(b); blk += 32 {
			if rng.IntN(3) == 0 {
				for i := blk; i < blk+32; i++ {
					b[i] = byte(rng.IntN(16)) << 4
				}
			}
		}
		var got, want teddyBatch
		c, next := teddyBlocks(b, n, &tables, m, &got)
		wantC, wantNext := teddyBlocksGeneric(b, n, &tables, m, &want)
		if c != wantC || next != wantNext || !slices.Equal(got.at[:c], want.at[:c]) ||
			!slices.Equal(got.mask[:c], want.mask[:c]) || !slices.Equal(got.sets[:c], want.sets[:c]) {
			t.Fatalf("seed %d iter %d: m=%d n=%d tables %v in %q:\ngot  %d blocks, next %d: %v %x %v\nwant %d blocks, next %d: %v %x %v",
				seed, iter, m, n, tables, b, c, next, got.at[:c], got.mask[:c], got.sets[:c],
				wantC, wantNext, want.at[:wantC], want.mask[:wantC], want.sets[:wantC])
		}
	}
}

// TestTeddyBatchLayout: the offsets and slot count teddy_amd64.s writes
// a teddyBatch with.
func TestTeddyBatchLayout(t *testing.T) {
	var b teddyBatch
	if o, a, m := unsafe.Offsetof(b.sets), unsafe.Offsetof(b.at), unsafe.Offsetof(b.mask); o != 0 || (runtime.GOARCH == "amd64" && (a != 256 || m != 320)) {
		t.Errorf("teddyBatch offsets %d %d %d, the kernel writes 0 256 320", o, a, m)
	}
	if len(b.sets) != 8 || len(b.at) != 8 || len(b.mask) != 8 {
		t.Errorf("teddyBatch slots %d %d %d, the kernel fills 8", len(b.sets), len(b.at), len(b.mask))
	}
}

// TestNewTeddyNil: the needle sets Teddy does not take, and that it
// takes what it should where the CPU has the vector scan.
func TestNewTeddyNil(t *testing.T) {
	nine := strings.Split("a b c d e f g h i", " ")
	for _, c := range []struct {
		needles []string
		fold    bool
	}{
		{nil, false},
		{[]string{}, true},
		{nine, false},
		{nine, true},
		{[]string{"a", ""}, false},
		{[]string{""}, true},
		{[]string{"abc", "caf\u00e9"}, true},
		{[]string{"\x80"}, true},
	} {
		if td := newTeddy(c.needles, c.fold); td != nil {
			t.Errorf("newTeddy(%q, %v) = %+v, want nil", c.needles, c.fold, td)
		}
		if td := buildTeddy(c.needles, c.fold); td != nil {
			t.Errorf("buildTeddy(%q, %v) = %+v, want nil", c.needles, c.fold, td)
		}
	}
	for _, c := range []struct {
		needles []string
		fold    bool
	}{
		{nine[:8], false},
		{nine[:8], true},
		{[]string{"caf\u00e9"}, false}, // bytes, matched as they are
		{[]string{"x"}, true},
	} {
		if td := newTeddy(c.needles, c.fold); (td != nil) != haveVectorPair {
			t.Errorf("newTeddy(%q, %v) = %v with vector scan %v", c.needles, c.fold, td, haveVectorPair)
		}
		if td := buildTeddy(c.needles, c.fold); td == nil {
			t.Errorf("buildTeddy(%q, %v) = nil", c.needles, c.fold)
		}
	}
}

// TestTeddyNoAlloc: indexAll allocates nothing, the batch of the vector
// scan included.
func TestTeddyNoAlloc(t *testing.T) {
	skipWithoutTeddyScan(t)
	td := buildTeddy([]string{"func", "Return", "err", "string"}, true)
	b := bytes.Repeat([]byte("func f() error { return errString } // "), 40)
	var pos [4]int
	var which [4]uint8
	n := 0
	if allocs := testing.AllocsPerRun(20, func() {
		n = 0
		for from := 0; ; {
			c := td.indexAll(b, from, pos[:], which[:])
			n += c
			if c < len(pos) {
				break
			}
			from = pos[c-1] + 1
		}
	}); allocs != 0 {
		t.Errorf("%v allocations a pass", allocs)
	}
	if want := len(naiveTeddy([]string{"func", "Return", "err", "string"}, true, b, 0)); n != want {
		t.Errorf("%d matches, want %d", n, want)
	}
}

// FuzzTeddy: indexAll against the oracle; needles are spec split at
// commas.
func FuzzTeddy(f *testing.F) {
	f.Add([]byte("Func return ERROR string\x80 funcfunc"), "func,return,error,string", true, 0, uint8(2))
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "a,aa,aaa", false, 3, uint8(1))
	f.Add([]byte("\x80\xff\x80\xffab"), "\x80\xff,b", false, -1, uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, spec string, fold bool, from int, batch uint8) {
		skipWithoutTeddyScan(t)
		needles := strings.Split(spec, ",")
		td := buildTeddy(needles, fold)
		if td == nil {
			valid := len(needles) <= 8
			for _, n := range needles {
				valid = valid && n != "" && (!fold || !strings.ContainsFunc(n, func(r rune) bool { return r >= 0x80 }))
			}
			if valid {
				t.Fatalf("buildTeddy(%q, %v) = nil", needles, fold)
			}
			return
		}
		size := 1 + int(batch%40)
		got := collectTeddy(t, td, b, from, make([]int, size), make([]uint8, size))
		if want := naiveTeddy(needles, fold, b, from); !slices.Equal(got, want) {
			t.Fatalf("needles %q fold=%v from %d batch %d in %q:\ngot  %v\nwant %v", needles, fold, from, size, b, got, want)
		}
	})
}

// teddyCorpus is 1 MiB of GOROOT/src/net/*.go, files in name order.
func teddyCorpus(b *testing.B) []byte {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "src", "net", "*.go"))
	if err != nil || len(files) == 0 {
		b.Fatalf("GOROOT/src/net: %v", err)
	}
	slices.Sort(files)
	const size = 1 << 20
	var buf []byte
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		buf = append(buf, data...)
		if len(buf) >= size {
			return buf[:size]
		}
	}
	b.Fatalf("GOROOT/src/net/*.go: %d bytes, want %d", len(buf), size)
	return nil
}

// BenchmarkTeddy: every match of 4 case-insensitive terms in 1 MiB of Go
// source, in batches of 32, with one Teddy pass against the current way,
// one foldASCII pass per term; rare terms and frequent ones.
//
//	go test -run '^$' -bench Teddy -benchtime 20x ./search
func BenchmarkTeddy(b *testing.B) {
	buf := teddyCorpus(b)
	for _, c := range []struct {
		name  string
		terms []string
	}{
		{"rare", []string{"kelvin", "quokka", "deadline", "exceeded"}},
		{"frequent", []string{"func", "return", "error", "string"}},
	} {
		b.Run(c.name+"/teddy", func(b *testing.B) {
			td := newTeddy(c.terms, true)
			if td == nil {
				b.Skip("no vector scan")
			}
			var pos [32]int
			var which [32]uint8
			matches := 0
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				matches = 0
				for from := 0; ; {
					n := td.indexAll(buf, from, pos[:], which[:])
					matches += n
					if n < len(pos) {
						break
					}
					from = pos[n-1] + 1
				}
			}
			b.ReportMetric(float64(matches), "starts")
		})
		b.Run(c.name+"/foldASCII", func(b *testing.B) {
			var ms []matcher
			for _, term := range c.terms {
				ms = append(ms, newFoldASCII(term).forChunk(buf))
			}
			var pos [32]int
			matches := 0
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				matches = 0
				for _, m := range ms {
					for from := 0; ; {
						n := indexAll(m, buf, from, pos[:])
						matches += n
						if n < len(pos) {
							break
						}
						from = pos[n-1] + 1
					}
				}
			}
			b.ReportMetric(float64(matches), "matches")
		})
	}
}
