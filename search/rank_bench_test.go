package search

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
)

// rankTerms are the 4 terms of the ranked-search benchmark: what
// QueryTerms makes of "how does the context deadline timeout cancel".
var rankTerms = []string{"context", "deadline", "timeout", "cancel"}

// copyGoroot copies $(go env GOROOT)/src into a temporary directory
// removed when b ends.
func copyGoroot(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "src")
	if err := exec.Command("cp", "-R", "--no-preserve=all", "--", filepath.Join(strings.TrimSpace(string(out)), "src"), dir).Run(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkRankGoroot times a 4-term ranked search (ChatGPT's search tool)
// over a copy of GOROOT/src beside ripgrep listing the files that hold any
// of the terms, in one run:
//
//	go test -run '^$' -bench RankGoroot -benchtime 10x ./search
//
// ripgrep stops reading a file at its first match (-l); the ranked search
// reads every file to its end to count each term, its lines and density.
func BenchmarkRankGoroot(b *testing.B) {
	dir := copyGoroot(b)
	cfg, err := sfs.LoadConfig(nil, []string{"go=" + dir})
	if err != nil {
		b.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	e := New(f)
	b.Run("serverfs-search", func(b *testing.B) {
		files := 0
		for b.Loop() {
			r, err := e.Rank(context.Background(), RankRequest{Workdirs: []string{"go"}, Terms: rankTerms})
			if err != nil {
				b.Fatal(err)
			}
			files = r.FilesScanned
			if len(r.Files) != MaxRankResults || r.Truncated {
				b.Fatalf("%d results, truncated %v", len(r.Files), r.Truncated)
			}
		}
		b.ReportMetric(float64(files), "files")
	})
	for _, variant := range []struct{ name, flag string }{{"rg-l", ""}, {"rg-l-i", "-i"}} {
		b.Run(variant.name, func(b *testing.B) {
			args := []string{"-l"}
			if variant.flag != "" {
				args = append(args, variant.flag)
			}
			for _, t := range rankTerms {
				args = append(args, "-e", t)
			}
			args = append(args, dir)
			lines := 0
			for b.Loop() {
				out, err := exec.Command("rg", args...).Output()
				if err != nil {
					b.Fatal(err)
				}
				lines = strings.Count(string(out), "\n")
			}
			b.ReportMetric(float64(lines), "files-listed")
		})
	}
}
