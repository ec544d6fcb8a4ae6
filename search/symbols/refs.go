package symbols

import (
	"bytes"
	"context"
	"strings"
)

// CodeLines returns, for each line of src (1-based; index 0 unused),
// whether name occurs there as an identifier in code: not inside a
// comment or a string, and not as part of a longer word. It is what
// tells a reference from a mention.
func CodeLines(ctx context.Context, lang Lang, src []byte, name string) ([]bool, error) {
	if len(src) > DefaultLimits.MaxBytes {
		return nil, ErrTooLarge
	}
	if isBinary(src) {
		return nil, ErrBinary
	}
	n := bytes.Count(src, newline) + 1
	out := make([]bool, n+1)
	switch lang {
	case "":
		return nil, ErrLanguage
	case Python, Ruby:
		var lx pyLexer
		for i, line := range bytes.Split(src, newline) {
			if i&0x3ff == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if lang == Ruby {
				lx.brackets, lx.cont, lx.triple = 0, false, ""
			}
			out[i+1] = hasWord(lx.scan(line), name)
		}
		return out, nil
	}
	var cur strings.Builder
	line := 1
	sc := braceScan{syn: braceSyntax(lang), src: src, lim: DefaultLimits, line: 1}
	sc.code = func(c byte) {
		if c == '\n' {
			if line < len(out) {
				out[line] = hasWord(cur.String(), name)
			}
			cur.Reset()
			line++
			return
		}
		cur.WriteByte(c)
	}
	if _, err := sc.run(ctx); err != nil {
		return nil, err
	}
	if line < len(out) {
		out[line] = hasWord(cur.String(), name)
	}
	return out, nil
}

// hasWord reports whether w occurs in s with no identifier character on
// either side.
func hasWord(s, w string) bool {
	for i := 0; w != ""; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		a, b := i+j, i+j+len(w)
		if (a == 0 || !identByte(s[a-1])) && (b == len(s) || !identByte(s[b])) {
			return true
		}
		i = a + 1
	}
	return false
}

func identByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z' || c >= 0x80
}
