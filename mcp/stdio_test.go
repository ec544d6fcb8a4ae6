package mcp

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/serverfs/serverfs/mcp/internal/rawjson"
	"github.com/serverfs/serverfs/mcp/transport"
)

// stdioStep is one line sent and how many lines it must be answered with.
type stdioStep struct {
	line    string
	answers int
}

// stdioTranscript runs steps against a server on transport (over real
// pipes, as stdin and stdout) and returns every line it wrote and the
// error its Run returned.
func stdioTranscript(t *testing.T, e *testEnv, transport func(r *os.File, w *os.File) sdk.Transport, steps []stdioStep) ([]string, string) {
	t.Helper()
	return serverTranscript(t, NewServer(e.deps, testVer), transport, steps)
}

// serverTranscript is stdioTranscript for a given server.
func serverTranscript(t *testing.T, srv *sdk.Server, transport func(r *os.File, w *os.File) sdk.Transport, steps []stdioStep) ([]string, string) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer outR.Close()
	done := make(chan error, 1)
	go func() {
		tr := transport(inR, outW)
		ctx := t.Context()
		if s, ok := tr.(rawjson.Splicer); ok {
			ctx = rawjson.WithSplicer(ctx, s) // as StdioTransport.Run
		}
		err := srv.Run(ctx, tr)
		outW.Close()
		done <- err
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out []string
	for i, s := range steps {
		if _, err := inW.WriteString(s.line + "\n"); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		first := len(out)
		for n := 0; n < s.answers; n++ {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("step %d (%s): output ended", i, s.line)
				}
				out = append(out, l)
			case <-time.After(10 * time.Second):
				t.Fatalf("step %d (%s): no answer", i, s.line)
			}
		}
		// Calls sent together are answered in either order.
		slices.Sort(out[first:])
	}
	inW.Close()
	var runErr error
	select {
	case runErr = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
	for l := range lines {
		out = append(out, l)
	}
	if runErr == nil {
		return out, ""
	}
	return out, runErr.Error()
}

// prevStdioTransport is serve --stdio's transport before transport.Stdio
// took messages apart itself: go-sdk's IOTransport behind a filter that
// reads each message whole and answers batches. transport.Stdio must
// behave as it does.
func prevStdioTransport(stdin io.Reader, stdout io.Writer) sdk.Transport {
	out := &lockedWriter{w: stdout}
	pr, pw := io.Pipe()
	go func() {
		dec := json.NewDecoder(stdin)
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if err == io.EOF {
					pw.Close()
				} else {
					pw.CloseWithError(err)
				}
				return
			}
			if len(raw) > 0 && raw[0] == '[' {
				out.Write([]byte(batchRefusal))
				continue
			}
			if _, err := pw.Write(append(raw, '\n')); err != nil {
				return
			}
		}
	}()
	return &sdk.IOTransport{Reader: pr, Writer: out}
}

// lockedWriter serializes whole writes to w; Close does not close w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// TestStdioTransportMatches sends the same lines to a server on the
// previous stdio transport (go-sdk's IOTransport behind the batch filter)
// and on transport.Stdio: every answer must be the same bytes, and the
// session must end the same way, for the fast path's messages and for
// everything it hands to go-sdk (unusual ids, escapes, unknown keys,
// errors, refusals that end the session) or answers itself (batches).
func TestStdioTransportMatches(t *testing.T) {
	e := newEnv(t)
	prev := func(r, w *os.File) sdk.Transport { return prevStdioTransport(r, w) }
	ours := func(r, w *os.File) sdk.Transport { return transport.Stdio(r, w) }
	initialize := func(version string) stdioStep {
		return stdioStep{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, 1}
	}
	stat := `{"name":"stat_file","arguments":{"workdir":"wd","path":"sub/a.txt"}}`
	deep := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	scripts := map[string][]stdioStep{
		"2025-03-26": {
			initialize("2025-03-26"),
			{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
			{`{"jsonrpc":"2.0","id":"s-2","method":"tools/list"}`, 1},
			{` { "id" : 3 , "jsonrpc" : "2.0" , "method" : "tools/call" , "params" : ` + stat + ` }`, 1},
			{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_text_file","arguments":{"workdir":"wd","path":"sub/a.txt"}}}`, 1},
			{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":` + stat + `,"extra":1}`, 1},
			{`{"jsonrpc":"2.0","id":6.0,"method":"ping"}`, 1},
			{`{"jsonrpc":"2.0","id":"a\"b<","method":"ping"}`, 1},
			{`{"jsonrpc":"2.0","id":"ünï","method":"ping"}`, 1},
			{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope"}}`, 1},
			{`{"jsonrpc":"2.0","id":10,"method":"pi\u006eg"}`, 1},
			{`{"jsonrpc":"2.0","id":11,"method":"ping","params":null}`, 1},
			{`{"jsonrpc":"2.0","id":-12,"method":"ping"}`, 1},
			{`{"jsonrpc":"2.0","id":123456789012345678,"method":"ping"}`, 1},
			{`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"read_text_file","arguments":{"workdir":"wd","path":"sub/a.txt","max_lines":0}}}`, 1},
			{`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"read_text_file","arguments":{"workdir":"wd","path":"../secret.txt"}}}`, 1},
			{`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"stat_file","arguments":{"workdir":"wd","path":"sub/a.txt"},"_meta":{"progressToken":"p"}}}`, 1},
			{`[{"jsonrpc":"2.0","id":17,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},{"jsonrpc":"2.0","id":18,"method":"tools/call","params":` + stat + `}]`, 1},
			{`{"jsonrpc":"2.0","id":21,"method":"ping"}`, 1},
			{`{"jsonrpc":"2.0","id":19,"method":"ping","params":{"_meta":{"x":[` + deep[:20] + deep[len(deep)-20:] + `]}}}`, 1},
			{`{"jsonrpc":"1.0","id":20,"method":"ping"}`, 0},
		},
		"2025-06-18 batch": {
			initialize("2025-06-18"),
			{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
			{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + stat + `}`, 1},
			{` [{"jsonrpc":"2.0","id":3,"method":"ping"}]`, 1},
			{`{"jsonrpc":"2.0","id":4,"method":"ping"}`, 1},
		},
		"empty batch": {initialize("2025-03-26"), {`[]`, 1}, {`{"jsonrpc":"2.0","id":4,"method":"ping"}`, 1}},
		"null":        {initialize("2025-03-26"), {`null`, 0}},
		"string":      {initialize("2025-03-26"), {`"ping"`, 0}},
		"two on a line": {initialize("2025-03-26"), {`{"jsonrpc":"2.0","id":2,"method":"ping"} {"jsonrpc":"2.0","id":3,"method":"ping"}`, 2},
			{`{"jsonrpc":"2.0","id":4,"method":"ping"}`, 1}, {`{}`, 0}},
		"syntax":   {initialize("2025-03-26"), {`{"jsonrpc":"2.0","id":2,"method":"ping"`, 0}, {`x`, 0}},
		"too deep": {initialize("2025-03-26"), {`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":` + deep + `}}`, 0}},
		"at the depth limit": {initialize("2025-03-26"), {`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":` + deep[2:len(deep)-2] + `}}`, 1},
			{`{"jsonrpc":"2.0","id":3,"method":"ping"}`, 1}},
		"no initialize": {{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + stat + `}`, 1}},
		"latest": {
			initialize("2025-11-25"),
			{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
			{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + stat + `}`, 1},
		},
	}
	for name, steps := range scripts {
		t.Run(name, func(t *testing.T) {
			want, wantErr := stdioTranscript(t, e, prev, steps)
			got, gotErr := stdioTranscript(t, e, ours, steps)
			if gotErr != wantErr {
				t.Errorf("Run: %q, before: %q", gotErr, wantErr)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("answers differ:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
			}
		})
	}
}
