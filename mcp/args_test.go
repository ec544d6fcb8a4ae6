package mcp

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sfs "github.com/serverfs/serverfs/fs"
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
			in, err := a.decode(json.RawMessage(`{"workdir":"w","query":"q","case_sensitive":false}`))
			if err != nil || in.CaseSensitive {
				t.Errorf("explicit false: %+v %v", in, err)
			}
			in, err = a.decode(json.RawMessage(`{"workdir":"w","query":"q"}`))
			if err != nil || !in.CaseSensitive || in.Limit != 50 {
				t.Errorf("defaults: case_sensitive %v limit %d, %v", in.CaseSensitive, in.Limit, err)
			}
		}()
	}
	wg.Wait()
	for _, bad := range []string{`{"workdir":"w","query":"q","limit":0}`, `{"workdir":"w","query":"q","extra":1}`, `{"query":"q"}`, `{"workdir":"w","query":"q","limit":"5"}`, `[1]`} {
		if _, err := a.decode(json.RawMessage(bad)); err == nil {
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
		_, err := a.decode(json.RawMessage(raw))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "listDirectoryIn") {
			t.Errorf("%s: %v (want %q)", raw, err, want)
		}
	}
}
