package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestParseRequestMatchesDecodeMessage: where the fast path takes a
// message apart, it gives what jsonrpc.DecodeMessage gives.
func TestParseRequestMatchesDecodeMessage(t *testing.T) {
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"b\"}"}}}`,
		`{"method":"ping","jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":"abc","method":"m","params":[1,{"a":[]},"]"]}`,
		`{"jsonrpc":"2.0","id":-0,"method":"m","params":  {"a" : 1}  }`,
		`{"jsonrpc":"2.0","id":999999999999999,"method":"m","params":"s"}`,
		`{"jsonrpc":"2.0","id":"","method":"","params":true}`,
	} {
		got, ok := parseRequest([]byte(raw))
		if !ok {
			t.Errorf("%s: not taken by the fast path", raw)
			continue
		}
		want, err := jsonrpc.DecodeMessage([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		w := want.(*jsonrpc.Request)
		if got.ID != w.ID || got.Method != w.Method || string(got.Params) != string(w.Params) {
			t.Errorf("%s: got %+v, DecodeMessage %+v", raw, got, w)
		}
	}
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":1.5,"method":"m"}`, `{"jsonrpc":"2.0","id":1e3,"method":"m"}`, `{"jsonrpc":"2.0","id":null,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, `{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"Jsonrpc":"2.0","id":1,"method":"m"}`, `{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}`, `{"jsonrpc":"2.0","id":1,"method":"m\u0020"}`,
		`{"jsonrpc":"2.0","id":1234567890123456,"method":"m"}`, `{"jsonrpc":"2.1","id":1,"method":"m"}`, `[{"jsonrpc":"2.0","method":"m"}]`,
	} {
		if _, ok := parseRequest([]byte(raw)); ok {
			t.Errorf("%s: taken by the fast path", raw)
		}
	}
}

// TestAppendResponseMatchesEncodeMessage: the fast path writes the bytes
// jsonrpc.EncodeMessage writes.
func TestAppendResponseMatchesEncodeMessage(t *testing.T) {
	for _, r := range []struct {
		id     any
		result string
	}{{float64(1), `{"a":"b c\"","d":[1,2]}`}, {"x-1", `{}`}, {float64(-7), `"s"`}} {
		id, _ := jsonrpc.MakeID(r.id)
		resp := &jsonrpc.Response{ID: id, Result: json.RawMessage(r.result)}
		got, ok := appendResponse(nil, resp, nil, 0, 0)
		if !ok {
			t.Fatalf("%+v: not taken", r)
		}
		want, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want)+"\n" {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	id, _ := jsonrpc.MakeID(float64(1))
	for _, result := range []string{`{"a": 1}`, "{\n}", ``} {
		if _, ok := appendResponse(nil, &jsonrpc.Response{ID: id, Result: json.RawMessage(result)}, nil, 0, 0); ok {
			t.Errorf("%q: taken by the fast path", result)
		}
	}
}

// TestStdioSplicesHeldContent: a response whose result holds a token is
// written with the held content in its place, byte for byte what
// jsonrpc.EncodeMessage writes of the whole result, on the fast path and
// off it; every path that writes nothing (a done context, a cancelled
// request) lets go of the content; a token nobody holds is left as is;
// the transport holds at most maxHeld.
func TestStdioSplicesHeldContent(t *testing.T) {
	var out bytes.Buffer
	tr := Stdio(strings.NewReader(""), &out)
	sc, err := tr.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	c := sc.(*stdioConn)
	held := `[{"type":"text","text":"a \"quoted\" \u003cline\u003e\n"}],"structuredContent":{"content":"x","n":1}`
	wire := func(id jsonrpc.ID, result string) string {
		data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: json.RawMessage(result)})
		if err != nil {
			t.Fatal(err)
		}
		return string(data) + "\n"
	}
	for _, raw := range []any{float64(7), "plain", "needs \"escapes\""} {
		id, _ := jsonrpc.MakeID(raw)
		tok, ok := tr.Hold([]byte(held))
		if !ok {
			t.Fatal("not held")
		}
		out.Reset()
		result := fmt.Sprintf(`{"_meta":{"content":1},"content":%d,"resultType":"complete"}`, tok)
		if err := c.Write(t.Context(), &jsonrpc.Response{ID: id, Result: json.RawMessage(result)}); err != nil {
			t.Fatal(err)
		}
		want := wire(id, `{"_meta":{"content":1},"content":`+held+`,"resultType":"complete"}`)
		if out.String() != want {
			t.Errorf("id %v:\n got %s\nwant %s", raw, out.String(), want)
		}
		if n := tr.holding.Load(); n != 0 {
			t.Errorf("id %v: %d still held", raw, n)
		}
	}
	id, _ := jsonrpc.MakeID(float64(8))
	tok, _ := tr.Hold([]byte(held))
	out.Reset()
	unheld := fmt.Sprintf(`{"content":%d}`, tok+1)
	if err := c.Write(t.Context(), &jsonrpc.Response{ID: id, Result: json.RawMessage(unheld)}); err != nil {
		t.Fatal(err)
	}
	if out.String() != wire(id, unheld) || tr.holding.Load() != 1 {
		t.Errorf("a token nobody holds: wrote %s (%d held)", out.String(), tr.holding.Load())
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Write(done, &jsonrpc.Response{ID: id, Result: json.RawMessage(fmt.Sprintf(`{"content":%d}`, tok))}); err == nil {
		t.Error("written with a done context")
	}
	if tr.holding.Load() != 0 {
		t.Error("held after a done context")
	}
	c.noteCancel(json.RawMessage(`{"requestId":9}`))
	id9, _ := jsonrpc.MakeID(float64(9))
	tok, _ = tr.Hold([]byte(held))
	out.Reset()
	if err := c.Write(t.Context(), &jsonrpc.Response{ID: id9, Result: json.RawMessage(fmt.Sprintf(`{"content":%d}`, tok))}); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 || tr.holding.Load() != 0 {
		t.Errorf("cancelled request: wrote %q, %d held", out.String(), tr.holding.Load())
	}
	for i := range maxHeld {
		if _, ok := tr.Hold(nil); !ok {
			t.Fatalf("hold %d refused", i)
		}
	}
	if _, ok := tr.Hold(nil); ok {
		t.Errorf("more than %d held", maxHeld)
	}
}
