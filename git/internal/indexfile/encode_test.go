package indexfile

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// TestEncodeIndexMatchesGit: git is the oracle. For each index version,
// decoding the index git wrote and encoding it again gives git's bytes
// (entries section; git's extensions are not written back), including the
// assume-unchanged, skip-worktree and intent-to-add flags.
func TestEncodeIndexMatchesGit(t *testing.T) {
	for _, version := range []string{"2", "3", "4"} {
		t.Run("v"+version, func(t *testing.T) {
			dir := t.TempDir()
			gitCLI(t, dir, "init", "-q")
			for _, p := range []string{"a.txt", "dir/b.txt", "dir/sub/c.txt", "dir/sub/cd.txt", "long/" + string(bytes.Repeat([]byte("n"), 200)), "z"} {
				write(t, filepath.Join(dir, p), p+"\n")
			}
			gitCLI(t, dir, "add", "-A")
			write(t, filepath.Join(dir, "ita.txt"), "later\n")
			gitCLI(t, dir, "add", "-N", "ita.txt")
			gitCLI(t, dir, "update-index", "--assume-unchanged", "a.txt")
			if version != "2" {
				gitCLI(t, dir, "update-index", "--skip-worktree", "dir/b.txt")
			}
			gitCLI(t, dir, "update-index", "--index-version", version)
			raw, err := os.ReadFile(filepath.Join(dir, ".git/index"))
			if err != nil {
				t.Fatal(err)
			}
			idx := &index.Index{}
			if err := index.NewDecoder(bytes.NewReader(raw)).Decode(idx); err != nil {
				t.Fatal(err)
			}
			ours, err := Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			// Our decoder agrees with go-git's on every field it reads,
			// and reads the assume-unchanged bit go-git drops.
			if len(ours.Entries) != len(idx.Entries) {
				t.Fatalf("%d entries, go-git %d", len(ours.Entries), len(idx.Entries))
			}
			for i, e := range idx.Entries {
				o := *ours.Entries[i]
				if !o.CreatedAt.Equal(e.CreatedAt) || !o.ModifiedAt.Equal(e.ModifiedAt) {
					t.Fatalf("entry %s: times differ", e.Name)
				}
				o.CreatedAt, o.ModifiedAt = e.CreatedAt, e.ModifiedAt
				if !reflect.DeepEqual(o, *e) {
					t.Fatalf("entry %d:\n ours %+v\n go-git %+v", i, o, *e)
				}
				if ours.AssumeValid[i] != (e.Name == "a.txt") {
					t.Fatalf("entry %s: assume-valid %v", e.Name, ours.AssumeValid[i])
				}
			}
			entries := make([]Entry, len(idx.Entries))
			for i, e := range idx.Entries {
				entries[i] = Entry{Entry: e, AssumeValid: ours.AssumeValid[i]}
			}
			got := Encode(idx.Version, entries, nil)
			// git's entries end where its first extension (or the
			// trailer) starts: compare up to there.
			end := entriesEnd(t, raw, got)
			if !bytes.Equal(got[:end], raw[:end]) {
				d := firstDiff(got[:end], raw[:end])
				t.Fatalf("index v%s differs from git's at byte %d\n got %x\nwant %x", version, d, got[d-8:min(end, d+70)], raw[d-8:min(end, d+70)])
			}
			if binary.BigEndian.Uint32(got[4:8]) != binary.BigEndian.Uint32(raw[4:8]) {
				t.Fatal("version differs")
			}
			// Our file has no extensions: entries then the SHA-1 trailer.
			if len(got) != end+20 {
				t.Fatalf("our index has %d bytes after the entries", len(got)-end)
			}
		})
	}
}

// entriesEnd is the length of the common entries section: our encoding has
// only entries before its 20-byte trailer.
func entriesEnd(t *testing.T, raw, ours []byte) int {
	t.Helper()
	end := len(ours) - 20
	if end > len(raw) {
		t.Fatalf("our index is longer than git's")
	}
	return end
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// gitCLI runs the system git in dir with a clean, fixed environment.
func gitCLI(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
