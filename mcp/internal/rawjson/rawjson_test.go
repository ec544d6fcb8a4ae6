package rawjson

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
)

// quoteCases: every kind of string the quoting must get right, and random
// bytes weighted towards the escapes.
func quoteCases() []string {
	strs := []string{"", "a", `q"b\s`, "<a&b>", "\x00\x01\x1f\b\f\n\r\t\x7f", "ünï 😀", "\u2028\u2029", "\xff\xfe", "a\xc3", "\xed\xa0\x80"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(3) == 0 {
				specials := "<>&\"\\\n\b\f\x00\xe2\x80\xa8"
				b[i] = specials[rng.IntN(len(specials))]
			}
		}
		strs = append(strs, string(b))
	}
	return strs
}

// TestAppendStringMatchesMarshal: AppendString is json.Marshal's quoting
// and AppendLogString log/slog's JSON handler's, byte for byte.
func TestAppendStringMatchesMarshal(t *testing.T) {
	for _, s := range quoteCases() {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key != "k" {
				return slog.Attr{}
			}
			return a
		}})).Info("", "k", s)
		line := strings.TrimSuffix(buf.String(), "}\n")
		wantLog := line[strings.Index(line, `"k":`)+4:]
		if got := AppendLogString(nil, s); string(got) != wantLog {
			t.Fatalf("AppendLogString(%q) = %s, want %s", s, got, wantLog)
		}
	}
}

// TestScannerSkipsValues: SkipValue ends exactly where each value of an
// object ends, and StringEnd finds closing quotes past escaped ones.
func TestScannerSkipsValues(t *testing.T) {
	members := []string{`"s"`, `"a\"b\\"`, `12.5e3`, `-1`, `true`, `null`, `{"x":[1,{"y":"}"}]}`, `[]`, `["]",{}]`}
	var b strings.Builder
	b.WriteString("{")
	for i, m := range members {
		if i > 0 {
			b.WriteString(" , ")
		}
		b.WriteString(`"k` + string(rune('a'+i)) + `" : ` + m)
	}
	b.WriteString(" }")
	p := Scanner{B: []byte(b.String())}
	if !p.Consume('{') {
		t.Fatal("no {")
	}
	for i, m := range members {
		if i > 0 && !p.Consume(',') {
			t.Fatalf("member %d: no comma at %d", i, p.I)
		}
		key, ok := p.Plain()
		if !ok || string(key) != "k"+string(rune('a'+i)) || !p.Consume(':') {
			t.Fatalf("member %d: key %q %v", i, key, ok)
		}
		p.Space()
		start := p.I
		if !p.SkipValue() || string(p.B[start:p.I]) != m {
			t.Fatalf("member %d: skipped %q, want %q", i, p.B[start:p.I], m)
		}
	}
	if !p.Consume('}') {
		t.Fatal("no }")
	}
	if _, ok := (&Scanner{B: []byte(`"a\u0041"`)}).Plain(); ok {
		t.Error("Plain took a string with an escape")
	}
	if end := StringEnd([]byte(`"a\\\"b\\"x`), 0); end != 9 {
		t.Errorf("StringEnd = %d, want 9", end)
	}
	if !Compact([]byte(`{"a b":[1,2]}`)) || Compact([]byte(`{"a": 1}`)) {
		t.Error("Compact misjudged white space")
	}
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if TooDeep([]byte(deep)) || !TooDeep([]byte("["+deep+"]")) || TooDeep([]byte(`"`+strings.Repeat("[", 2000)+`"`)) {
		t.Error("TooDeep misjudged nesting")
	}
}
