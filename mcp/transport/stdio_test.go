package transport

import (
	"encoding/json"
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
		got, ok := appendResponse(nil, resp)
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
		if _, ok := appendResponse(nil, &jsonrpc.Response{ID: id, Result: json.RawMessage(result)}); ok {
			t.Errorf("%q: taken by the fast path", result)
		}
	}
}
