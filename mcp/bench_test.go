package mcp

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkHTTPCall is one stat_file call per op over real HTTP on each
// lane, from a bare client (one keep-alive connection, no GET stream) so
// that the server's share dominates -benchmem and -memprofile: the
// session lane at 2025-11-25 (a priming event, the event store) and at
// 2025-06-18 (the tunnel's version), and the stateless lane. bench/mcp
// measures the server's CPU per call from outside against the reference
// server; this one is for profiles of the request path.
func BenchmarkHTTPCall(b *testing.B) {
	// "+headers": the stateless lane with SERVERFS_MCP_PARAM_HEADERS=true,
	// where go-sdk checks Mcp-Param-Workdir against the body on every call.
	for _, name := range []string{"2025-06-18", "2025-11-25", "2026-07-28", "2026-07-28+headers"} {
		version, withHeaders := strings.CutSuffix(name, "+headers")
		b.Run(name, func(b *testing.B) {
			e := newEnvMode(b, false)
			e.deps.ParamHeaders = withHeaders
			url := e.serveHTTP(b)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			post := func(body string, headers ...string) (*http.Response, []byte) {
				resp, err := client.Do(mcpRequest(b, b.Context(), url, body, headers...))
				if err != nil {
					b.Fatal(err)
				}
				data, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode >= 300 {
					b.Fatalf("status %d, %v: %s", resp.StatusCode, err, data)
				}
				return resp, data
			}
			headers := []string{protocolVersionHeader, version}
			call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"stat_file","arguments":{"workdir":"wd","path":"big.txt"}}}`
			if version >= statelessVersion {
				headers = append(headers, "Mcp-Method", "tools/call", "Mcp-Name", "stat_file", "Mcp-Param-Workdir", "=?base64?d2Q=?=")
				call = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"stat_file","arguments":{"workdir":"wd","path":"big.txt"},` +
					`"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
			} else {
				resp, _ := post(strings.Replace(initBody, "2025-06-18", version, 1))
				headers = append(headers, sessionHeader, resp.Header.Get(sessionHeader))
				post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers...)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				_, data := post(fmt.Sprintf(call, i+2), headers...)
				if !bytes.Contains(data, []byte(`"path":"big.txt"`)) || bytes.Contains(data, []byte(`"isError":true`)) {
					b.Fatalf("answer: %s", data)
				}
			}
		})
	}
}
