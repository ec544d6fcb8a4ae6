package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/search"
)

// fullSurface serves every tool.
var fullSurface = surface{readOnly: true, write: true, inspect: true, commit: true, actions: true, push: true, grants: true}

// TestArgDecoderDefaultsAreNotShared: a call that sets case_sensitive must
// not change the default the next call gets (a shared *bool default would),
// even with calls decoding concurrently.
func TestArgDecoderDefaultsAreNotShared(t *testing.T) {
	var schema *jsonschema.Schema
	for _, tl := range inventory(sfs.DefaultLimits(), fullSurface) {
		if tl.def.Name == "search_text" {
			schema = tl.def.InputSchema.(*jsonschema.Schema)
		}
	}
	a := newArgDecoder[searchTextIn](schema)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, _, err := a.decodeNotes(json.RawMessage(`{"workdir":"w","query":"q","case_sensitive":false}`))
			if err != nil || in.CaseSensitive {
				t.Errorf("explicit false: %+v %v", in, err)
			}
			in, _, err = a.decodeNotes(json.RawMessage(`{"workdir":"w","query":"q"}`))
			if err != nil || !in.CaseSensitive || in.Limit != 50 {
				t.Errorf("defaults: case_sensitive %v limit %d, %v", in.CaseSensitive, in.Limit, err)
			}
		}()
	}
	wg.Wait()
	for _, bad := range []string{`{"workdir":"w","query":"q","limit":0}`, `{"workdir":"w","query":"q","extra":1}`, `{"query":"q"}`, `{"workdir":"w","query":"q","limit":"5"}`, `[1]`} {
		if _, _, err := a.decodeNotes(json.RawMessage(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestArgDecoderWording: type errors name the property and the JSON type
// expected, never Go types.
func TestArgDecoderWording(t *testing.T) {
	var schema *jsonschema.Schema
	for _, tl := range inventory(sfs.DefaultLimits(), fullSurface) {
		if tl.def.Name == "list_directory" {
			schema = tl.def.InputSchema.(*jsonschema.Schema)
		}
	}
	a := newArgDecoder[listDirectoryIn](schema)
	for raw, want := range map[string]string{
		`{"workdir":"w","limit":1.5}`:  `property "limit" must be a whole number, not number`,
		`{"workdir":"w","limit":"5"}`:  `"limit"`,
		`{"workdir":7}`:                `property "workdir" must be a string, not number`,
		`{"workdir":"w","path":["x"]}`: `property "path" must be a string, not array`,
	} {
		_, _, err := a.decodeNotes(json.RawMessage(raw))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "listDirectoryIn") {
			t.Errorf("%s: %v (want %q)", raw, err, want)
		}
	}
}

// TestLimitsClamped: a number above its maximum is clamped to the
// maximum, the answer saying so (a line of the text, notes in the
// structured content); below the minimum it stays refused.
func TestLimitsClamped(t *testing.T) {
	e := newEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	lim := e.deps.FS.Limits()
	for _, c := range []struct {
		tool string
		args map[string]any
		note string
	}{
		{"list_directory", map[string]any{"workdir": "wd", "limit": lim.MaxListEntries + 1}, fmt.Sprintf("limit clamped to %d", lim.MaxListEntries)},
		{"find_files", map[string]any{"workdir": "wd", "pattern": "*.txt", "limit": 1e12}, fmt.Sprintf("limit clamped to %d", lim.MaxSearchResults)},
		{"search_text", map[string]any{"workdir": "wd", "query": "line", "limit": lim.MaxSearchResults * 10, "context": 1000}, fmt.Sprintf("context clamped to %d", search.MaxContext)},
		{"read_text_file", map[string]any{"workdir": "wd", "path": "big.txt", "max_lines": lim.MaxReadLines + 1}, fmt.Sprintf("max_lines clamped to %d", lim.MaxReadLines)},
		{"read_text_files", map[string]any{"workdir": "wd", "paths": []string{"big.txt"}, "tail": 1e300}, fmt.Sprintf("tail clamped to %d", lim.MaxReadLines)},
	} {
		res := e.call(t, cs, c.tool, c.args)
		if res.IsError {
			t.Fatalf("%s %v: %s", c.tool, c.args, resultText(res))
		}
		// An answer whose text is its JSON has the notes there.
		if text := resultText(res); !strings.Contains(text, "note: "+c.note+"\n") && !(strings.HasPrefix(text, "{") && strings.Contains(text, c.note)) {
			t.Errorf("%s: text does not say %q:\n%s", c.tool, c.note, text)
		}
		sc := structured[map[string]any](t, res)
		if notes, _ := sc["notes"].([]any); !slices.Contains(notes, any(c.note)) {
			t.Errorf("%s: notes %v, want %q", c.tool, sc["notes"], c.note)
		}
	}
	toolErr(t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "big.txt", "max_lines": 0}), "INVALID_ARGUMENT: ")
	// Within bounds: no notes.
	res := e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "limit": 5})
	if sc := structured[map[string]any](t, res); sc["notes"] != nil || strings.Contains(resultText(res), "note:") {
		t.Errorf("notes on an answer within bounds: %v", sc["notes"])
	}
}
