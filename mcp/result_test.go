package mcp

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/serverfs/serverfs/mcp/internal/rawjson"
	"github.com/serverfs/serverfs/mcp/transport"
)

// TestEncodedResultMatches: encodedResult writes the bytes go-sdk's
// CallToolResult.MarshalJSON writes, for hostile texts (quotes,
// backslashes, HTML, control characters, U+2028, invalid UTF-8), with and
// without structured content, _meta and isError.
func TestEncodedResultMatches(t *testing.T) {
	texts := []string{"", "plain", `a"b\c`, "<a href=\"x\">&amp;</a>", "tab\there\nnew\r\x00\x01\x1f\x7f",
		"ünïcødé ✓ 😀", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", strings.Repeat("line 01: the quick brown fox\n", 200)}
	rng := rand.New(rand.NewPCG(20, 20))
	alphabet := []byte("ab\"\\<>&\n\t\x00\x1f\xe2\x80\xa8\xa9\xff\xc3\xbc ")
	for range 200 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		texts = append(texts, string(b))
	}
	impl := &sdk.Implementation{Name: "serverfs", Title: "ServerFS", Version: "1<2>&"}
	for _, text := range texts {
		sc, err := json.Marshal(map[string]any{"content": text, "n": 1})
		if err != nil {
			t.Fatal(err)
		}
		errRes := &sdk.CallToolResult{}
		errRes.SetError(errors.New(text))
		for _, r := range []*sdk.CallToolResult{
			{Content: []sdk.Content{&sdk.TextContent{Text: text}}},
			{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: encodedJSON(sc)},
			{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: encodedJSON(nil)},
			{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: encodedJSON(sc), Meta: sdk.Meta{"io.modelcontextprotocol/serverInfo": impl, "content": nil}},
			{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: encodedJSON(sc), Meta: sdk.Meta{sdk.MetaKeyServerInfo: impl}},
			{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: true, Meta: sdk.Meta{sdk.MetaKeyServerInfo: impl}},
			errRes,
			{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: true, RequestState: text},
		} {
			if _, _, ok := splicedContent(r); !ok {
				t.Fatalf("%+v: not spliced", r)
			}
			want, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(&encodedResult{CallToolResult: r})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("text %q:\n got %s\nwant %s", text, got, want)
			}
			// With a splicer: the same bytes once the held content is
			// put in place of the token.
			sp := &recordSplicer{}
			tokd, err := json.Marshal(&encodedResult{CallToolResult: r, splicer: sp})
			if err != nil {
				t.Fatal(err)
			}
			if got := sp.splice(t, tokd); got != string(want) {
				t.Errorf("text %q, spliced:\n got %s\nwant %s", text, got, want)
			}
		}
	}
	for _, r := range []*sdk.CallToolResult{
		{},
		{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}},
		{Content: []sdk.Content{&sdk.TextContent{Text: "a", Meta: sdk.Meta{"k": 1}}}},
		{Content: []sdk.Content{&sdk.TextContent{Text: "a", Annotations: &sdk.Annotations{Priority: 1}}}},
		{Content: []sdk.Content{&sdk.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}},
		{Content: []sdk.Content{&sdk.TextContent{Text: "a"}}, StructuredContent: json.RawMessage(`{}`)},
		{Content: []sdk.Content{&sdk.TextContent{Text: "a"}}, StructuredContent: map[string]any{"a": 1}},
	} {
		if _, _, ok := splicedContent(r); ok {
			t.Errorf("%+v: spliced", r)
		}
	}
}

// TestEncodedResultsOnTheWire: over stdio, in a session (2025-11-25) and
// per request (2026-07-28, where go-sdk adds resultType and serverInfo),
// every tool answer is the same bytes with encodeResults as without.
func TestEncodedResultsOnTheWire(t *testing.T) {
	e := newRWEnv(t)
	if err := os.WriteFile(filepath.Join(e.root, "html.txt"), []byte("<a href=\"x\">&amp;</a> \u2028 ünï \\ \"q\"\n\tx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := []string{
		`{"name":"stat_file","arguments":{"workdir":"wd","path":"sub/a.txt"}}`,
		`{"name":"stat_file","arguments":{"workdir":"ro","path":"ro.txt"}}`,
		`{"name":"read_text_file","arguments":{"workdir":"wd","path":"sub/a.txt"}}`,
		`{"name":"read_text_file","arguments":{"workdir":"wd","path":"html.txt","max_lines":1}}`,
		`{"name":"read_text_file","arguments":{"workdir":"wd","path":"big.txt"}}`,
		`{"name":"read_text_file","arguments":{"workdir":"wd","path":"../secret.txt"}}`,
		`{"name":"read_text_file","arguments":{"workdir":"wd","path":"sub/a.txt","nope":1}}`,
		`{"name":"read_text_files","arguments":{"workdir":"wd","paths":["html.txt","id_rsa"]}}`,
		`{"name":"list_directory","arguments":{"workdir":"wd","path":""}}`,
		`{"name":"list_workdirs","arguments":{}}`,
	}
	session := []stdioStep{
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, 1},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
	}
	var modern []stdioStep
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}`
	for i, c := range calls {
		id := string(rune('a' + i))
		session = append(session, stdioStep{`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":` + c + `}`, 1})
		modern = append(modern, stdioStep{`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":` + c[:len(c)-1] + `,` + meta + `}}`, 1})
	}
	// One session answering both kinds of request (go-sdk adds serverInfo
	// but no resultType to the 2026-07-28 ones there).
	mixed := append([]stdioStep{}, session...)
	for i := range modern {
		mixed = append(mixed, modern[i], session[2+i])
	}
	ours := func(r, w *os.File) sdk.Transport { return transport.Stdio(r, w) }
	for name, steps := range map[string][]stdioStep{"2025-11-25": session, "2026-07-28": modern, "mixed": mixed} {
		t.Run(name, func(t *testing.T) {
			want, _ := serverTranscript(t, newServer(e.deps, testVer), ours, steps)
			var spliced countingStdio
			got, _ := serverTranscript(t, NewServer(e.deps, testVer), func(r, w *os.File) sdk.Transport {
				spliced.StdioTransport = transport.Stdio(r, w)
				return &spliced
			}, steps)
			if spliced.holds.Load() == 0 {
				t.Error("no result was spliced by the transport")
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("answers differ:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
			}
			if name == "2026-07-28" && !strings.Contains(strings.Join(got, "\n"), `"resultType":"complete"`) {
				t.Errorf("no resultType in %s", strings.Join(got, "\n"))
			}
		})
	}
}

// recordSplicer is a rawjson.Splicer that keeps what it holds.
type recordSplicer struct{ held [][]byte }

func (s *recordSplicer) Hold(b []byte) (int64, bool) {
	s.held = append(s.held, b)
	return int64(len(s.held)), true
}

// splice is b with the content it holds in place of the token (a
// transport's work), checking that b holds exactly one.
func (s *recordSplicer) splice(t *testing.T, b []byte) string {
	t.Helper()
	start, end, ok := rawjson.MemberValue(b, "content")
	if !ok {
		t.Fatalf("no content member in %s", b)
	}
	tok, ok := rawjson.Token(b[start:end])
	if !ok || tok != int64(len(s.held)) || len(s.held) != 1 {
		t.Fatalf("content %s of %s: not the one token held (%d held)", b[start:end], b, len(s.held))
	}
	return string(b[:start]) + string(s.held[0]) + string(b[end:])
}

// countingStdio is the stdio transport counting the results whose content
// it holds (and so splices).
type countingStdio struct {
	*transport.StdioTransport
	holds atomic.Int32
}

func (c *countingStdio) Hold(b []byte) (int64, bool) {
	c.holds.Add(1)
	return c.StdioTransport.Hold(b)
}
