package office

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// randomWorkbook writes sheets of random cells from seed — shared and
// inline strings (unicode, tabs, newlines, markup characters), numbers,
// booleans, dates (numFmtId 14, 22 and a custom yyyy-mm-dd), formulas
// with cached values, errors, styled empty cells, gaps in rows and
// columns — and returns the workbook with the text Read must give: the
// values the generator wrote, as the package comment says they show.
func randomWorkbook(t testing.TB, seed uint64) ([]byte, string) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var shared []string
	var want strings.Builder
	var sheets []xsheet
	for s := range 1 + rng.IntN(4) {
		name := fmt.Sprintf("S%d %s", s, randText(rng, 6))
		fmt.Fprintf(&want, "# sheet %s\n", cleanLabel(name))
		var rows strings.Builder
		row, written := 0, 0
		for range rng.IntN(30) {
			row += 1 + gap(rng, 3, 250)
			var cells strings.Builder
			var fields []string
			col := 0
			for range rng.IntN(12) {
				col += 1 + gap(rng, 4, 30)
				ref := colName(col) + strconv.Itoa(row)
				xml, value := randomCell(rng, ref, &shared)
				cells.WriteString(xml)
				if value != "" {
					for len(fields) < col-1 {
						fields = append(fields, "")
					}
					fields = append(fields, value)
				}
			}
			fmt.Fprintf(&rows, `<row r="%d" spans="1:%d">%s</row>`, row, max(col, 1), cells.String())
			if len(fields) == 0 {
				continue
			}
			switch n := row - written - 1; {
			case n > 100:
				fmt.Fprintf(&want, "# … %d empty rows\n", n)
			default:
				want.WriteString(strings.Repeat("\n", n))
			}
			want.WriteString(strings.Join(fields, "\t") + "\n")
			written = row
		}
		sheets = append(sheets, xsheet{name, rows.String()})
	}
	return xlsxOf(t, shared, sheets...), want.String()
}

// gap is usually 0, sometimes up to small, rarely up to large.
func gap(rng *rand.Rand, small, large int) int {
	switch rng.IntN(10) {
	case 0:
		return rng.IntN(large)
	case 1, 2:
		return rng.IntN(small)
	}
	return 0
}

func colName(col int) string {
	s := ""
	for ; col > 0; col = (col - 1) / 26 {
		s = string(rune('A'+(col-1)%26)) + s
	}
	return s
}

var alphabet = []rune("abcXYZ019 äöüßéñ€中文字😀&<>\"'\t\n")

// randText is a non-empty string that is not only white space.
func randText(rng *rand.Rand, n int) string {
	r := []rune{'x'}
	for range rng.IntN(n) {
		r = append(r, alphabet[rng.IntN(len(alphabet))])
	}
	rng.Shuffle(len(r), func(i, j int) { r[i], r[j] = r[j], r[i] })
	return string(r)
}

// shown is a string as a cell shows it: tabs and newlines as spaces.
func shown(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }

// randomCell returns a cell's XML and the value Read must show for it.
func randomCell(rng *rand.Rand, ref string, shared *[]string) (string, string) {
	switch rng.IntN(11) {
	case 0:
		s := randText(rng, 12)
		*shared = append(*shared, s)
		return fmt.Sprintf(`<c r="%s" t="s"><v>%d</v></c>`, ref, len(*shared)-1), shown(s)
	case 1:
		s := randText(rng, 12)
		return fmt.Sprintf(`<c r="%s" t="inlineStr"><is><t xml:space="preserve">%s</t></is></c>`, ref, xmlEscape(s)), shown(s)
	case 2:
		v := strconv.FormatFloat((rng.Float64()-0.5)*math10(rng.IntN(12)), 'g', -1, 64)
		return fmt.Sprintf(`<c r="%s" s="4"><v>%s</v></c>`, ref, v), v
	case 3:
		v := strconv.Itoa(rng.IntN(1_000_000) - 500)
		return fmt.Sprintf(`<c r="%s"><v>%s</v></c>`, ref, v), v
	case 4:
		b := rng.IntN(2)
		return fmt.Sprintf(`<c r="%s" t="b"><v>%d</v></c>`, ref, b), [...]string{"FALSE", "TRUE"}[b]
	case 5, 6:
		day := time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(80_000))
		serial := int(day.Sub(time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)).Hours() / 24)
		style := []int{1, 3}[rng.IntN(2)]
		return fmt.Sprintf(`<c r="%s" s="%d"><v>%d</v></c>`, ref, style, serial), day.Format("2006-01-02")
	case 7:
		day := time.Date(1950, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(40_000))
		secs := rng.IntN(86400)
		serial := day.Sub(time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)).Hours()/24 + float64(secs)/86400
		at := day.Add(time.Duration(secs) * time.Second)
		return fmt.Sprintf(`<c r="%s" s="2"><v>%s</v></c>`, ref, strconv.FormatFloat(serial, 'g', -1, 64)), at.Format("2006-01-02 15:04:05")
	case 8:
		if rng.IntN(2) == 0 {
			v := strconv.Itoa(rng.IntN(1000))
			return fmt.Sprintf(`<c r="%s"><f>SUM(A1:A%s)</f><v>%s</v></c>`, ref, v, v), v
		}
		s := randText(rng, 8)
		return fmt.Sprintf(`<c r="%s" t="str"><f>CONCAT("%s")</f><v>%s</v></c>`, ref, "&quot;", xmlEscape(s)), shown(s)
	case 9:
		e := []string{"#DIV/0!", "#N/A", "#REF!", "#VALUE!"}[rng.IntN(4)]
		return fmt.Sprintf(`<c r="%s" t="e"><f>1/0</f><v>%s</v></c>`, ref, e), e
	}
	return fmt.Sprintf(`<c r="%s" s="%d"/>`, ref, rng.IntN(4)), ""
}

func math10(n int) float64 {
	f := 1.0
	for range n {
		f *= 10
	}
	return f
}

// TestXlsxRandom: Read gives back exactly the cells the generator wrote.
func TestXlsxRandom(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 30
	}
	for seed := range uint64(n) {
		b, want := randomWorkbook(t, seed)
		d, err := read(t, b, Xlsx, DefaultLimits())
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if d.Text != want {
			t.Fatalf("seed %d: the text differs at byte %d:\n%q\nwant\n%q", seed, firstDiff(d.Text, want), d.Text, want)
		}
		if strings.Count(want, "# sheet ") != len(d.Parts) || d.Truncated {
			t.Fatalf("seed %d: parts %v, truncated %v", seed, d.Parts, d.Truncated)
		}
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
