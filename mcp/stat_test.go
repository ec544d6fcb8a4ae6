package mcp

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
)

// TestAppendFileInfoMatchesMarshal: stat_file's hand-written encoding is
// json.Marshal's, byte for byte, for every kind of string and field.
func TestAppendFileInfoMatchesMarshal(t *testing.T) {
	strs := []string{"", "a", "sub/a.txt", `q"b\s`, "<a&b>", "\x00\x01\x1f\b\f\n\r\t\x7f", "ünï 😀", "\u2028\u2029", "\xff\xfe", "a\xc3", "\xed\xa0\x80"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := rng.IntN(12)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(3) == 0 {
				specials := "<>&\"\\\n\x00\xe2\x80\xa8"
				b[i] = specials[rng.IntN(len(specials))]
			}
		}
		strs = append(strs, string(b))
	}
	size := int64(4096)
	for i, s := range strs {
		fi := sfs.FileInfo{Workdir: s, Path: strs[(i+1)%len(strs)], Type: sfs.EntryType(strs[(i+2)%len(strs)]), ModifiedAt: "2026-01-01T00:00:00Z", MIMEType: s, Revision: strs[(i+3)%len(strs)]}
		if i%2 == 0 {
			fi.Size = &size
		}
		want, err := json.Marshal(fi)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFileInfo(nil, &fi); string(got) != string(want) {
			t.Fatalf("%+v:\n got %s\nwant %s", fi, got, want)
		}
	}
}

// TestPlainStringArgsMatchDecode: arguments taken by the plain-string
// path decode to what the general path gives, defaults included; others
// are left to the general path.
func TestPlainStringArgsMatchDecode(t *testing.T) {
	stat := newArgDecoder[statFileIn](inputSchema[statFileIn](nil))
	read := newArgDecoder[readTextFileIn](inputSchema[readTextFileIn](map[string]bound{"start_line": {1, 1 << 30, 1}, "max_lines": {1, 500, 200}, "tail": {0, 500, 0}}))
	for _, c := range []struct {
		raw  string
		fast bool
	}{
		{`{"workdir":"wd","path":"small.txt"}`, true},
		{` { "path" : "a b/c.txt" , "workdir" : "wd" } `, true},
		{`{"workdir":"wd","path":""}`, true},
		{`{"workdir":"wd"}`, false},
		{`{"workdir":"wd","path":"a","path":"b"}`, false},
		{`{"workdir":"wd","path":"a\u0062"}`, false},
		{`{"workdir":"wd","path":"ü"}`, false},
		{`{"workdir":"wd","path":"a","max_lines":3}`, false},
		{`{"workdir":"wd","path":"a","x":"y"}`, false},
		{`{"Workdir":"wd","path":"a"}`, false},
		{`{"workdir":"wd","path":null}`, false},
	} {
		s1, ok1 := stat.plainStrings(json.RawMessage(c.raw))
		r1, ok2 := read.plainStrings(json.RawMessage(c.raw))
		if ok1 != c.fast || ok2 != c.fast {
			t.Errorf("%s: plain-string path %v/%v, want %v", c.raw, ok1, ok2, c.fast)
		}
		if !c.fast {
			continue
		}
		stat.strs, read.strs = nil, nil // the general path only
		s2, _, err1 := stat.decodeNotes(json.RawMessage(c.raw))
		r2, _, err2 := read.decodeNotes(json.RawMessage(c.raw))
		stat = newArgDecoder[statFileIn](inputSchema[statFileIn](nil))
		read = newArgDecoder[readTextFileIn](inputSchema[readTextFileIn](map[string]bound{"start_line": {1, 1 << 30, 1}, "max_lines": {1, 500, 200}, "tail": {0, 500, 0}}))
		if err1 != nil || err2 != nil || s1 != s2 || r1 != r2 {
			t.Errorf("%s: plain %+v %+v, general %+v %+v (%v %v)", c.raw, s1, r1, s2, r2, err1, err2)
		}
	}
}
