package office

import (
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestXlsxSoffice reads generated workbooks of strings and integers with
// LibreOffice too, when this machine has it (soffice on PATH), and
// compares its CSV with our rows. Skipped without it.
func TestXlsxSoffice(t *testing.T) {
	soffice, err := exec.LookPath("soffice")
	if err != nil {
		t.Skip("soffice is not installed: the generator's own values are the oracle (TestXlsxRandom)")
	}
	dir := t.TempDir()
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var rows strings.Builder
		var shared []string
		for r := 1; r <= 20; r++ {
			fmt.Fprintf(&rows, `<row r="%d">`, r)
			for c := 1; c <= 8; c++ {
				ref := colName(c) + fmt.Sprint(r)
				if rng.IntN(3) == 0 {
					shared = append(shared, fmt.Sprintf("s%d é😀", rng.IntN(1000)))
					fmt.Fprintf(&rows, `<c r="%s" t="s"><v>%d</v></c>`, ref, len(shared)-1)
				} else if rng.IntN(2) == 0 {
					fmt.Fprintf(&rows, `<c r="%s"><v>%d</v></c>`, ref, rng.IntN(100000))
				}
			}
			rows.WriteString(`</row>`)
		}
		b := xlsxOf(t, shared, xsheet{"s", rows.String()})
		path := filepath.Join(dir, fmt.Sprintf("w%d.xlsx", seed))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := exec.CommandContext(ctx, soffice, "--headless", "--convert-to", "csv", "--outdir", dir, path).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("soffice: %v %s", err, out)
		}
		f, err := os.Open(strings.TrimSuffix(path, ".xlsx") + ".csv")
		if err != nil {
			t.Fatal(err)
		}
		records, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		want.WriteString("# sheet s\n")
		for _, rec := range records {
			for len(rec) > 0 && rec[len(rec)-1] == "" {
				rec = rec[:len(rec)-1]
			}
			want.WriteString(strings.Join(rec, "\t") + "\n")
		}
		d := mustRead(t, b, Xlsx)
		if got := strings.TrimRight(d.Text, "\n"); got != strings.TrimRight(want.String(), "\n") {
			t.Errorf("seed %d: ours\n%s\nLibreOffice's\n%s", seed, got, want.String())
		}
	}
}
