package faultfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// mountT mounts an empty tree for a test and unmounts it at cleanup. It
// skips only when this machine cannot mount FUSE.
func mountT(t *testing.T) (*FS, string) {
	t.Helper()
	mnt, backing := t.TempDir(), t.TempDir()
	fsys, err := Mount(mnt, backing, 1)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("FUSE cannot be mounted here (%v); no other test proves the durability model", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fsys.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return fsys, mnt
}

// pages is n pages, each filled with its own letter.
func pages(n int, from byte) []byte {
	b := make([]byte, 0, n*PageSize)
	for i := range n {
		b = append(b, bytes.Repeat([]byte{from + byte(i)}, PageSize)...)
	}
	return b
}

func writeSync(t *testing.T, path string, data []byte, fsync bool) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if fsync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func syncDir(t *testing.T, path string) {
	t.Helper()
	d, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// eachSeed runs scenario from an empty durable tree once per seed, cuts
// the power, and hands the result to check.
func eachSeed(t *testing.T, fsys *FS, mnt string, scenario func(), check func(seed int64)) {
	t.Helper()
	for seed := int64(0); seed < 32; seed++ {
		ents, _ := os.ReadDir(mnt)
		for _, e := range ents {
			os.RemoveAll(filepath.Join(mnt, e.Name()))
		}
		fsys.Sync()
		fsys.SetSeed(seed)
		scenario()
		if err := fsys.PowerCut(); err != nil {
			t.Fatal(err)
		}
		check(seed)
	}
}

// tornOf reports whether got is want torn at page granularity: the
// durable or the full size, each page either want's or zeros.
func tornOf(got, want []byte) bool {
	if len(got) != 0 && len(got) != len(want) {
		return false
	}
	for i := 0; i < len(got); i += PageSize {
		end := min(i+PageSize, len(got))
		if !bytes.Equal(got[i:end], want[i:end]) && !bytes.Equal(got[i:end], make([]byte, end-i)) {
			return false
		}
	}
	return true
}

func TestFaultUnsyncedWriteIsLost(t *testing.T) {
	fsys, mnt := mountT(t)
	path, want := filepath.Join(mnt, "f"), pages(3, 'a')
	gone, torn := 0, 0
	eachSeed(t, fsys, mnt, func() { writeSync(t, path, want, false) }, func(seed int64) {
		got, err := os.ReadFile(path)
		switch {
		case os.IsNotExist(err):
			gone++
		case err != nil:
			t.Fatal(err)
		case !tornOf(got, want):
			t.Fatalf("seed %d: %d bytes survived that are not a page-torn copy of what was written", seed, len(got))
		case !bytes.Equal(got, want):
			torn++
		}
	})
	if gone == 0 || torn == 0 {
		t.Fatalf("an unsynced new file should vanish for some seeds and tear for others: gone %d, torn %d of 32", gone, torn)
	}
	// Named durably, data never synced: the file is there, torn or empty.
	empty := 0
	eachSeed(t, fsys, mnt, func() {
		writeSync(t, path, nil, false)
		syncDir(t, mnt)
		writeSync(t, path, want, false)
	}, func(seed int64) {
		got, err := os.ReadFile(path)
		if err != nil || !tornOf(got, want) {
			t.Fatalf("seed %d: %v, %d bytes", seed, err, len(got))
		}
		if len(got) == 0 {
			empty++
		}
	})
	if empty == 0 {
		t.Fatal("unsynced data never lost in 32 seeds")
	}
}

func TestFaultNameNeedsDirectoryFsync(t *testing.T) {
	fsys, mnt := mountT(t)
	path, want := filepath.Join(mnt, "f"), pages(2, 'a')
	gone := -1
	eachSeed(t, fsys, mnt, func() { writeSync(t, path, want, true) }, func(seed int64) {
		got, err := os.ReadFile(path)
		switch {
		case os.IsNotExist(err):
			if gone < 0 {
				gone = int(seed)
			}
		case err != nil || !bytes.Equal(got, want):
			t.Fatalf("seed %d: a file fsynced survived incomplete: %v, %d bytes", seed, err, len(got))
		}
	})
	if gone < 0 {
		t.Fatal("a file fsynced without its directory survived every seed")
	}
	t.Logf("seed %d shows the name lost", gone)
}

func TestFaultRenameOverOldIsOldOrNew(t *testing.T) {
	fsys, mnt := mountT(t)
	path, tmp := filepath.Join(mnt, "f"), filepath.Join(mnt, "f.tmp")
	old, want := pages(2, 'a'), pages(3, 'n')
	seen := map[string]int{}
	eachSeed(t, fsys, mnt, func() {
		writeSync(t, path, old, true)
		fsys.Sync()
		writeSync(t, tmp, want, true)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}, func(seed int64) {
		got, err := os.ReadFile(path)
		switch {
		case err != nil:
			t.Fatalf("seed %d: %v", seed, err)
		case bytes.Equal(got, old):
			seen["old"]++
		case bytes.Equal(got, want):
			seen["new"]++
		default:
			t.Fatalf("seed %d: %d bytes, neither the old nor the new content", seed, len(got))
		}
	})
	if seen["old"] == 0 || seen["new"] == 0 {
		t.Fatalf("want both outcomes over 32 seeds, got %v", seen)
	}
}

func TestFaultFsyncedFileAndDirectorySurvive(t *testing.T) {
	fsys, mnt := mountT(t)
	sub := filepath.Join(mnt, "sub")
	path, want := filepath.Join(sub, "f"), pages(3, 'a')
	eachSeed(t, fsys, mnt, func() {
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		syncDir(t, mnt)
		writeSync(t, path, want, true)
		syncDir(t, sub)
		writeSync(t, filepath.Join(sub, "unsynced"), want, false)
	}, func(seed int64) {
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("seed %d: fsynced file and directories lost: %v, %d bytes", seed, err, len(got))
		}
	})
}

func TestFaultCutAfter(t *testing.T) {
	fsys, mnt := mountT(t)
	path := filepath.Join(mnt, "f")
	writeSync(t, path, []byte("durable"), true)
	syncDir(t, mnt)
	before := fsys.Ops()
	writeSync(t, path, []byte("second"), false)
	perWrite := fsys.Ops() - before
	if perWrite < 2 {
		t.Fatalf("an open(O_TRUNC) and a write counted as %d operations", perWrite)
	}
	fsys.Sync()
	fsys.CutAfter(1)
	if err := os.WriteFile(path, []byte("third"), 0o644); err == nil {
		t.Fatal("the write after the armed cut succeeded")
	}
	if !fsys.Tripped() {
		t.Fatal("not tripped")
	}
	if _, err := os.ReadFile(path); !errors.Is(err, syscall.EIO) {
		t.Fatalf("a read after the cut: %v, want EIO", err)
	}
	if err := fsys.PowerCut(); err != nil {
		t.Fatal(err)
	}
	// The truncate of the cut write is the operation that completed: the
	// synced content survives, or is torn by the truncate.
	if got, err := os.ReadFile(path); err != nil || !tornOf(got, []byte("second")) {
		t.Fatalf("after the cut: %q, %v", got, err)
	}
}
