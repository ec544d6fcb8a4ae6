package symbols

import (
	"context"
	"testing"
)

// TestCodeLines: a name is a reference where it is a word of code, not
// in a comment, a string or a longer word, in each reader's language.
func TestCodeLines(t *testing.T) {
	for _, c := range []struct {
		lang Lang
		src  string
		want []int
	}{
		{Go, "x := dial() // dial\ns := \"dial\"\n/* dial\n dial */ dial()\nredial()\n`dial\ndial`\ndial\n", []int{1, 4, 8}},
		{Python, "dial()  # dial\n'''dial\ndial'''\nx = \"dial\"\nredial(dial)\n", []int{1, 5}},
		{C, "#define dial 1\nint x = dial; // dial\nchar c = 'd'; /* dial */\n", []int{2}},
		{Shell, "# dial\ndial() { echo 'dial'; }\necho \"$dial\" ${#dial}\n", []int{2, 3}},
		{Ruby, "dial # dial\nx = 'dial'\ndial_x\n", []int{1}},
	} {
		got, err := CodeLines(context.Background(), c.lang, []byte(c.src), "dial")
		if err != nil {
			t.Fatal(err)
		}
		var lines []int
		for i, ok := range got {
			if ok {
				lines = append(lines, i)
			}
		}
		if len(lines) != len(c.want) {
			t.Errorf("%s: lines %v, want %v", c.lang, lines, c.want)
			continue
		}
		for i := range lines {
			if lines[i] != c.want[i] {
				t.Errorf("%s: lines %v, want %v", c.lang, lines, c.want)
				break
			}
		}
	}
}
