package mcp

import (
	"bytes"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
)

// TestCallLineMatchesHandler: the tool_call line NewJSONLogger encodes
// itself is byte for byte the line log/slog's JSON handler writes for the
// same call, for strings of every byte (quotes, backslashes, control
// characters, invalid UTF-8, U+2028, HTML characters, past logString's
// bound), times with and without trailing zeros in other zones, and both
// outcomes. The seed of a mismatch is printed.
func TestCallLineMatchesHandler(t *testing.T) {
	pieces := []string{"a", "Z", "/", " ", `"`, `\`, "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f", "<", ">", "&",
		"\xff", "\xc3", "é", "日本", "\u2028", "\u2029", "\U0001F600", "\xed\xa0\x80", strings.Repeat("x", 299)}
	str := func(r *rand.Rand) string {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	zones := []*time.Location{time.UTC, time.FixedZone("X", -(3*3600 + 1800)), time.FixedZone("Y", 14*3600)}
	for seed := uint64(1); seed <= 3000; seed++ {
		r := rand.New(rand.NewPCG(seed, 19))
		now := time.Date(2000+r.IntN(8000), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), []int{0, 1e8, 123456789, 5e5}[r.IntN(4)], zones[r.IntN(len(zones))])
		tool, d := str(r), time.Duration(r.Int64N(int64(time.Hour)))
		info := callInfo{workdir: str(r), path: str(r), bytes: r.IntN(1 << 30)}
		var code errs.Code
		if r.IntN(2) == 0 {
			code = errs.Code(str(r))
		}
		if code == "" && r.IntN(2) == 0 {
			code = errs.PathNotFound
		}
		var direct, handler bytes.Buffer
		NewJSONLogger(&direct, slog.LevelInfo).toolCallAt(now, tool, d, code, info)
		(&Logger{Logger: slog.New(slog.NewJSONHandler(&handler, nil))}).toolCallAt(now, tool, d, code, info)
		if direct.String() != handler.String() {
			t.Fatalf("seed %d:\n direct  %q\n handler %q", seed, direct.String(), handler.String())
		}
	}
	// Below the level: no line.
	var out bytes.Buffer
	NewJSONLogger(&out, slog.LevelWarn).toolCall("stat_file", time.Millisecond, "", callInfo{workdir: "wd"})
	if out.Len() != 0 {
		t.Errorf("INFO line at level WARN: %q", out.String())
	}
}
