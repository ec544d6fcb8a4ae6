package git

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDiffAppliesWithGit: git is the oracle. For random states, our
// work-tree diff of every changed path, applied with `git apply --cached`
// to the index of a copy, makes that index hold the work tree (git diff
// is then empty for those paths); our staged diff, applied with `git apply
// --cached` after `git reset`, rebuilds the same index tree.
func TestDiffAppliesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required (CI installs it)")
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = a\n\temail = a@example.invalid\n"), 0o644)
	names := []string{"a.txt", "b c.txt", "ünï.txt", "tab\there", `q"uote`, "bin.dat", "x.sh", "empty"}
	content := func() []byte {
		switch rng.Intn(6) {
		case 0:
			return nil
		case 1:
			return []byte("bin\x00ary" + fmt.Sprint(rng.Intn(3)))
		case 2:
			return []byte("no newline " + fmt.Sprint(rng.Intn(3)))
		default:
			var b strings.Builder
			for i := range 5 + rng.Intn(40) {
				eol := "\n"
				if rng.Intn(8) == 0 {
					eol = "\r\n"
				}
				fmt.Fprintf(&b, "line %d %d%s", i, rng.Intn(3), eol)
			}
			return []byte(b.String())
		}
	}
	checked := 0
	for repo := 0; repo < 40; repo++ {
		dir := filepath.Join(t.TempDir(), "w")
		os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
		gitCLI(t, dir, "init", "-q")
		pick := func() string {
			n := names[rng.Intn(len(names))]
			if rng.Intn(2) == 0 {
				return "sub/" + n
			}
			return n
		}
		mutate := func() {
			for range 3 + rng.Intn(5) {
				p := filepath.Join(dir, pick())
				os.Remove(p)
				switch rng.Intn(6) {
				case 0: // deleted
				case 1:
					os.Symlink("a.txt", p)
				default:
					os.WriteFile(p, content(), os.FileMode(0o644|rng.Intn(2)*0o111))
				}
			}
		}
		mutate()
		gitCLI(t, dir, "add", "-A")
		gitCLI(t, dir, "commit", "-qm", "base", "--allow-empty")
		mutate()
		gitCLI(t, dir, "add", "-A")
		mutate()
		r, _ := openRW(t, dir)
		var paths []string
		for _, n := range names {
			paths = append(paths, n, "sub/"+n)
		}
		for _, staged := range []bool{false, true} {
			res, err := r.Diff(context.Background(), staged, paths, MaxDiffBytes)
			if err != nil {
				t.Fatalf("seed %d repo %d: %v", seed, repo, err)
			}
			if res.Truncated {
				t.Fatalf("truncated at 1 MiB")
			}
			// Binary patches ("Binary files differ") are not appliable;
			// drop those files from the check (git would need --binary).
			patch := dropBinary(res.Patch)
			copyDir := filepath.Join(t.TempDir(), "c")
			if out, err := exec.Command("cp", "-a", dir, copyDir).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			want := strings.TrimSpace(gitCLI(t, copyDir, "write-tree"))
			if staged {
				gitCLI(t, copyDir, "reset", "-q")
			}
			os.WriteFile(filepath.Join(copyDir, ".git/p.diff"), []byte(patch), 0o644)
			if patch != "" {
				cmd := exec.Command("git", "apply", "--cached", ".git/p.diff")
				cmd.Dir = copyDir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("seed %d repo %d staged=%v: git apply --cached: %v\n%s\npatch:\n%s", seed, repo, staged, err, out, patch)
				}
			}
			if staged {
				if got := strings.TrimSpace(gitCLI(t, copyDir, "write-tree")); got != want && !strings.Contains(res.Patch, "Binary files") {
					t.Fatalf("seed %d repo %d: staged patch rebuilt tree %s, index was %s\npatch:\n%s", seed, repo, got, want, patch)
				}
			} else if left := gitCLI(t, copyDir, "diff", "--name-only"); left != "" && !strings.Contains(res.Patch, "Binary files") {
				t.Fatalf("seed %d repo %d: after applying our work-tree patch git diff still shows:\n%s\npatch:\n%s", seed, repo, left, patch)
			}
			checked++
		}
	}
	t.Logf("%d patches applied by git", checked)
}

// dropBinary removes every section of a file that has a binary part
// (a type change is two sections: drop both).
func dropBinary(patch string) string {
	var secs []string
	for _, sec := range strings.SplitAfter(patch, "\ndiff --git ") {
		secs = append(secs, sec)
	}
	// Re-attach the separators: each section but the first starts with
	// "diff --git ", which SplitAfter left on the previous one.
	var clean []string
	for i, sec := range secs {
		if i > 0 {
			sec = "diff --git " + sec
		}
		if i < len(secs)-1 {
			sec = strings.TrimSuffix(sec, "diff --git ")
		}
		clean = append(clean, sec)
	}
	binary := map[string]bool{}
	header := func(sec string) string { return strings.SplitN(sec, "\n", 2)[0] }
	for _, sec := range clean {
		if strings.Contains(sec, "\nBinary files ") {
			binary[header(sec)] = true
		}
	}
	var out strings.Builder
	for _, sec := range clean {
		if !binary[header(sec)] {
			out.WriteString(sec)
		}
	}
	return out.String()
}

func TestDiffBoundsAndRefusals(t *testing.T) {
	dir, r := newCommitRepo(t)
	var big strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	write(t, filepath.Join(dir, "a.txt"), big.String())
	write(t, filepath.Join(dir, "b.txt"), "b\n")
	gitCLI(t, dir, "add", "b.txt")
	res, err := r.Diff(context.Background(), false, []string{"a.txt"}, 1000)
	if err != nil || !res.Truncated || len(res.Patch) > 1000 || !strings.HasSuffix(res.Patch, "\n") {
		t.Fatalf("cap: %v truncated=%v %d bytes", err, res.Truncated, len(res.Patch))
	}
	res, err = r.Diff(context.Background(), true, []string{"b.txt", "a.txt", "nope.txt"}, 0)
	if err != nil || res.Truncated || len(res.Files) != 3 || res.Files[0].Change != "unchanged" || res.Files[1].Change != "added" || res.Files[2].Change != "unchanged" {
		t.Fatalf("staged: %+v %v", res, err)
	}
	for _, bad := range [][]string{nil, {"-p"}, {":(top)x"}, {".git/config"}, {"../x"}, make([]string, MaxDiffPaths+1)} {
		if _, err := r.Diff(context.Background(), false, bad, 0); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
