// Package unidiff renders line diffs as unified-diff hunks that git apply
// and patch -p1 accept, the lines matched as git diff matches them (the
// xdiff port of diff3). It is leaf code shared by fs (the diff a write
// returns) and git (patches of the work tree, the index and commits).
package unidiff

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/serverfs/serverfs/internal/diff3"
)

const diffContext = 3

// Unified renders the change from old to new of the file at path as a
// unified diff (git's "a/" and "b/" prefixes, the names quoted as git
// quotes them; /dev/null for a created file) that `git apply` and `patch
// -p1` accept. It returns at most
// maxBytes of it, cut at a line boundary, and whether it was cut.
// Identical contents, and a created empty file, give "".
func Unified(path string, old, new []byte, created bool, maxBytes int) (string, bool) {
	if bytes.Equal(old, new) {
		return "", false
	}
	var out strings.Builder
	if created {
		out.WriteString("--- /dev/null\n")
	} else {
		fmt.Fprintf(&out, "--- %s\n", QuotePath("a/"+path))
	}
	fmt.Fprintf(&out, "+++ %s\n", QuotePath("b/"+path))
	out.WriteString(Hunks(old, new))
	s := out.String()
	if len(s) <= maxBytes {
		return s, false
	}
	cut := strings.LastIndexByte(s[:maxBytes], '\n')
	return s[:cut+1], true
}

// Hunks is the body of a unified diff from old to new: its "@@"
// hunks with three lines of context, without file headers ("" when equal).
// The lines are matched as git diff matches them (diff3.LineDiff), so the
// hunks are git's.
func Hunks(old, new []byte) string {
	h, _, _ := HunksStat(old, new)
	return h
}

// HunksStat is Hunks with the numbers of lines added and deleted, as
// git diff --numstat counts them.
func HunksStat(old, new []byte) (hunks string, added, deleted int) {
	if bytes.Equal(old, new) {
		return "", 0, 0
	}
	a, b := splitLines(old), splitLines(new)
	ops, _ := diffLines(context.Background(), a, b)
	for _, op := range ops {
		switch op {
		case opInsert:
			added++
		case opDelete:
			deleted++
		}
	}
	var out strings.Builder
	writeHunks(&out, a, b, ops, -1, nil)
	return out.String(), added, deleted
}

// HunksBounded is Hunks for a caller with a deadline and a budget:
// it gives up with ctx's error when ctx is done (checked at every step of
// the edit search), and stops writing once more than
// maxBytes are written (cut: the text is then incomplete, and longer
// than maxBytes).
// funcName, when not nil, gives each hunk header the function context git
// prints after it (see FuncName).
func HunksBounded(ctx context.Context, old, new []byte, maxBytes int, funcName FuncName) (hunks string, cut bool, err error) {
	if bytes.Equal(old, new) {
		return "", false, nil
	}
	a, b := splitLines(old), splitLines(new)
	ops, err := diffLines(ctx, a, b)
	if err != nil {
		return "", false, err
	}
	var out strings.Builder
	cut = writeHunks(&out, a, b, ops, maxBytes, funcName)
	return out.String(), cut, nil
}

// splitLines splits b into lines that keep their "\n"; the last line may
// lack one. The lines are slices of b.
func splitLines(b []byte) [][]byte {
	lines := make([][]byte, 0, bytes.Count(b, []byte{'\n'})+1)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lines = append(lines, b)
			break
		}
		lines = append(lines, b[:i+1:i+1])
		b = b[i+1:]
	}
	return lines
}

type diffOp byte

const (
	opEqual  diffOp = ' '
	opDelete diffOp = '-'
	opInsert diffOp = '+'
)

// diffLines returns git's edit script turning a into b: one op per line
// of a (equal or delete) and per inserted line of b, in order, a change's
// deletions before its insertions; ctx (nil for none) bounds the search.
func diffLines(ctx context.Context, a, b [][]byte) ([]diffOp, error) {
	changes, err := diff3.LineDiff(ctx, a, b)
	if err != nil {
		return nil, err
	}
	ops := make([]diffOp, 0, len(a)+len(b))
	i := 0
	for _, c := range changes {
		for ; i < c.Old; i++ {
			ops = append(ops, opEqual)
		}
		for range c.OldLines {
			ops = append(ops, opDelete)
		}
		for range c.NewLines {
			ops = append(ops, opInsert)
		}
		i += c.OldLines
	}
	for ; i < len(a); i++ {
		ops = append(ops, opEqual)
	}
	return ops, nil
}

// writeHunks groups ops into hunks with diffContext lines of context. With
// limit >= 0 it stops once more than limit bytes are written, and says so.
func writeHunks(out *strings.Builder, a, b [][]byte, ops []diffOp, limit int, funcName FuncName) (cut bool) {
	// Positions (in a and b) at the start of each op.
	type pos struct{ i, j int }
	at := make([]pos, len(ops)+1)
	i, j := 0, 0
	for k, op := range ops {
		at[k] = pos{i, j}
		switch op {
		case opEqual:
			i, j = i+1, j+1
		case opDelete:
			i++
		case opInsert:
			j++
		}
	}
	at[len(ops)] = pos{i, j}
	fc := funcContext{name: funcName, old: a, searched: -1}
	for k := 0; k < len(ops); {
		if limit >= 0 && out.Len() > limit {
			return true
		}
		if ops[k] == opEqual {
			k++
			continue
		}
		// A hunk: from diffContext equal lines before the change to
		// diffContext after the last change that is no further than
		// 2*diffContext equal lines from the previous one.
		start := max(0, k-diffContext)
		end := k
		for end < len(ops) {
			if ops[end] != opEqual {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run] == opEqual {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(run, end+diffContext)
				break
			}
			end = run
		}
		s, e := at[start], at[end]
		fmt.Fprintf(out, "@@ -%s +%s @@%s\n", hunkRange(s.i, e.i-s.i), hunkRange(s.j, e.j-s.j), fc.before(s.i))
		for x := start; x < end; x++ {
			if limit >= 0 && out.Len() > limit {
				return true
			}
			p := at[x]
			var line []byte
			switch ops[x] {
			case opEqual, opDelete:
				line = a[p.i]
			case opInsert:
				line = b[p.j]
			}
			out.WriteByte(byte(ops[x]))
			out.Write(line)
			if !bytes.HasSuffix(line, []byte{'\n'}) {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = end
	}
	return false
}

// hunkRange renders "start,count" as diff does: a 1-based start, or the
// line before an empty range.
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// Block is a run of lines the edit script keeps: old lines [Old, Old+Len)
// are new lines [New, New+Len) (0-based).
type Block struct{ Old, New, Len int }

// Matches returns the runs of lines an edit script from old to new (the
// one Hunks renders) keeps, in order; ctx (nil for none) bounds the
// search as in HunksBounded.
func Matches(ctx context.Context, old, new []byte) ([]Block, error) {
	a, b := splitLines(old), splitLines(new)
	ops, err := diffLines(ctx, a, b)
	if err != nil {
		return nil, err
	}
	var out []Block
	i, j := 0, 0
	for _, op := range ops {
		switch op {
		case opEqual:
			if n := len(out); n > 0 && out[n-1].Old+out[n-1].Len == i && out[n-1].New+out[n-1].Len == j {
				out[n-1].Len++
			} else {
				out = append(out, Block{Old: i, New: j, Len: 1})
			}
			i, j = i+1, j+1
		case opDelete:
			i++
		case opInsert:
			j++
		}
	}
	return out, nil
}

// QuotePath is git's quote_c_style with core.quotePath on: a name with a
// control character, '"', '\\' or a byte >= 0x80 is quoted and escaped.
func QuotePath(s string) string {
	needs := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			needs = true
			break
		}
	}
	if !needs {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, "\\%03o", c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
