package git

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// diffRepos is how many repositories TestDiffAppliesWithGit makes, times
// SERVERFS_GIT_SCALE (two states each: the work-tree diff and the staged
// diff).
const diffRepos = 40

// TestDiffAppliesWithGit: git is the oracle. For random states, our
// work-tree diff of every changed path, applied with `git apply --cached`
// to the index of a copy, makes that index hold the work tree (git diff
// is then empty for those paths); our staged diff, applied with `git apply
// --cached` after `git reset`, rebuilds the same index tree. The states
// hold odd names (backslash, tab, quotes, '#', unicode), git rm --cached,
// files replaced by directories and back, and submodules added (staged)
// and moved to other commits (staged or not).
//
// SERVERFS_DIFF_SEED=n replays a run.
func TestDiffAppliesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required (CI installs it)")
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("SERVERFS_DIFF_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (replay with SERVERFS_DIFF_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewSource(seed))
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = a\n\temail = a@example.invalid\n[protocol \"file\"]\n\tallow = always\n"), 0o644)
	// The repository submodules are cloned from: three commits.
	subsrc := filepath.Join(t.TempDir(), "subsrc")
	os.MkdirAll(subsrc, 0o755)
	gitCLI(t, subsrc, "init", "-q")
	for i := range 3 {
		os.WriteFile(filepath.Join(subsrc, "s.txt"), []byte(fmt.Sprintf("s %d\n", i)), 0o644)
		gitCLI(t, subsrc, "add", "s.txt")
		gitCLI(t, subsrc, "commit", "-qm", fmt.Sprintf("s%d", i))
	}
	names := []string{"a.txt", "b c.txt", "ünï.txt", "tab\there", `q"uote`, "bin.dat", "x.sh", "empty", `back\slash`, "#hash", "日本.md",
		`n\git~2`, `a\.gitx`}
	content := func() []byte {
		switch rng.Intn(7) {
		case 0:
			return nil
		case 1:
			return []byte("bin\x00ary" + fmt.Sprint(rng.Intn(3)))
		case 2:
			return []byte("no newline " + fmt.Sprint(rng.Intn(3)))
		case 3: // text git shows, not UTF-8: a PNG signature, Latin-1
			return []byte(fmt.Sprintf("\x89PNG\r\n\x1a\ncaf\xe9 %d\nline\n", rng.Intn(3)))
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
	kinds := map[string]int{}
	for repo, repos := 0, scaled(t, diffRepos); repo < repos; repo++ {
		dir := filepath.Join(t.TempDir(), "w")
		os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
		gitCLI(t, dir, "init", "-q")
		var ops []string
		pick := func() string {
			n := names[rng.Intn(len(names))]
			if rng.Intn(2) == 0 {
				return "sub/" + n
			}
			return n
		}
		mutate := func() {
			for range 3 + rng.Intn(5) {
				rel := pick()
				p := filepath.Join(dir, rel)
				switch k := rng.Intn(14); {
				case k == 0: // deleted
					os.RemoveAll(p)
					ops = append(ops, "rm "+rel)
				case k == 1:
					os.RemoveAll(p)
					os.Symlink("a.txt", p)
					ops = append(ops, "symlink "+rel)
				case k == 2: // a staged deletion, the file left in the work tree
					if _, err := gitOut(dir, "rm", "-q", "--cached", "--", rel); err == nil {
						ops = append(ops, "git rm --cached "+rel)
						kinds["git rm --cached"]++
					}
				case k == 3: // a file becomes a directory
					if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
						os.Remove(p)
						os.MkdirAll(p, 0o755)
						os.WriteFile(filepath.Join(p, "inside.txt"), content(), 0o644)
						ops = append(ops, "file -> directory "+rel)
						kinds["file->dir"]++
					}
				case k == 4: // the directory sub becomes a file, or comes back
					os.RemoveAll(filepath.Join(dir, "sub"))
					if rng.Intn(2) == 0 {
						os.WriteFile(filepath.Join(dir, "sub"), content(), 0o644)
						ops = append(ops, "directory sub -> file")
						kinds["dir->file"]++
					} else {
						os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
						ops = append(ops, "directory sub emptied")
					}
				case k == 5: // a submodule added (embedded clone, staged), or moved
					m := filepath.Join(dir, "mod")
					if _, err := os.Lstat(filepath.Join(m, ".git")); err != nil {
						os.RemoveAll(m)
						if _, err := gitOut(filepath.Dir(subsrc), "clone", "-q", subsrc, m); err == nil {
							gitCLI(t, dir, "add", "mod")
							ops = append(ops, "submodule mod added")
							kinds["submodule added"]++
						}
						continue
					}
					_, err := gitOut(m, "checkout", "-q", "--detach", []string{"HEAD~1", "HEAD~2", "master", "main"}[rng.Intn(4)])
					ops = append(ops, fmt.Sprintf("submodule mod moved (ok %v)", err == nil))
					kinds["submodule moved"]++
				default:
					if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
						os.RemoveAll(p)
					}
					if os.WriteFile(p, content(), os.FileMode(0o644|rng.Intn(2)*0o111)) == nil {
						ops = append(ops, "write "+rel)
					}
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
		paths := []string{"mod", "sub"}
		for _, n := range names {
			paths = append(paths, n, "sub/"+n, n+"/inside.txt", "sub/"+n+"/inside.txt")
		}
		for _, staged := range []bool{false, true} {
			desc := fmt.Sprintf("seed %d repo %d staged=%v (replay: SERVERFS_DIFF_SEED=%d)\noperations: %q", seed, repo, staged, seed, ops)
			res, err := r.Diff(context.Background(), staged, paths, MaxDiffBytes)
			if err != nil {
				t.Fatalf("%s: %v", desc, err)
			}
			if res.Truncated {
				t.Fatalf("%s: truncated at 1 MiB", desc)
			}
			// The answer travels as JSON: every byte of the patch must
			// survive it, and a file it cannot carry says so.
			var back string
			if j, _ := json.Marshal(res.Patch); json.Unmarshal(j, &back) != nil || back != res.Patch {
				t.Fatalf("%s: the patch does not survive JSON:\n%q", desc, res.Patch)
			}
			omitted := false
			for _, f := range res.Files {
				if f.NotUTF8 {
					kinds["not UTF-8"]++
					if !strings.Contains(res.Patch, "diff --git "+quotePath("a/"+f.Path)+" ") {
						t.Fatalf("%s: %s is not UTF-8 and not in the patch (Latin-1):\n%s", desc, f.Path, res.Patch)
					}
				}
			}
			// Binary patches ("Binary files differ") are not appliable;
			// drop those files from the check (git would need --binary).
			// Sections in Latin-1 are encoded back to git's bytes.
			patch := dropBinary(fromLatin1(res.Patch, res.Files), res.Files)
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
					t.Fatalf("%s: git apply --cached: %v\n%s\npatch:\n%s\nHEAD:\n%s\nindex:\n%s", desc, err, out, patch,
						gitCLI(t, dir, "ls-tree", "-r", "HEAD"), gitCLI(t, dir, "ls-files", "-s"))
				}
			}
			omitted = omitted || strings.Contains(res.Patch, "Binary files")
			if staged {
				if got := strings.TrimSpace(gitCLI(t, copyDir, "write-tree")); got != want && !omitted {
					t.Fatalf("%s: staged patch rebuilt tree %s, index was %s\npatch:\n%s", desc, got, want, patch)
				}
			} else if left := gitCLI(t, copyDir, append([]string{"diff", "--name-only", "--ignore-submodules=dirty", "--"}, paths...)...); left != "" && !omitted {
				t.Fatalf("%s: after applying our work-tree patch git diff still shows:\n%s\npatch:\n%s", desc, left, patch)
			}
			checked++
		}
	}
	t.Logf("%d patches applied by git; generated %v", checked, kinds)
}

// dropBinary removes every section of a file that has a binary part
// (a type change is two sections: drop both), and the sections of the
// paths a directory/file replacement ties to it (x and x/...: git apply
// would not add one without the other's removal).
func dropBinary(patch string, files []DiffFile) string {
	secs := strings.SplitAfter(patch, "\ndiff --git ")
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
	header := func(sec string) string { return strings.SplitN(sec, "\n", 2)[0] }
	headerOf := func(p string) string { return "diff --git " + quotePath("a/"+p) + " " + quotePath("b/"+p) }
	binary := map[string]bool{}
	for _, sec := range clean {
		if strings.Contains(sec, "\nBinary files ") {
			binary[header(sec)] = true
		}
	}
	related := func(p, q string) bool {
		return p == q || strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/")
	}
	for grew := true; grew; { // to a fixed point: x/a ties x, x ties x/b
		grew = false
		for _, f := range files {
			if !binary[headerOf(f.Path)] {
				continue
			}
			for _, g := range files {
				if h := headerOf(g.Path); related(f.Path, g.Path) && !binary[h] {
					binary[h], grew = true, true
				}
			}
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

// fromLatin1 is patch with the sections of the files NotUTF8 encoded
// back from Latin-1 (each character one byte): the bytes git writes.
func fromLatin1(patch string, files []DiffFile) string {
	latin := map[string]bool{}
	for _, f := range files {
		if f.NotUTF8 {
			latin["diff --git "+quotePath("a/"+f.Path)+" "+quotePath("b/"+f.Path)] = true
		}
	}
	if len(latin) == 0 {
		return patch
	}
	var out strings.Builder
	for i, sec := range strings.Split(patch, "\ndiff --git ") {
		if i > 0 {
			sec = "diff --git " + sec
			out.WriteByte('\n')
		}
		if !latin[strings.SplitN(sec, "\n", 2)[0]] {
			out.WriteString(sec)
			continue
		}
		for _, r := range sec {
			out.WriteByte(byte(r))
		}
	}
	return out.String()
}
