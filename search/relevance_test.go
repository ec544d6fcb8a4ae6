package search

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// relevanceSet is what a model asks of Go's net tree ($(go env
// GOROOT)/src/net, net/http among it), with the files that answer, each
// checked by reading the code; more than one where more than one is
// right. Paths are relative to net.
var relevanceSet = []struct {
	q   string
	ans []string
}{
	{"how long does the hosts file cache last", []string{"hosts.go"}},
	{"where is the default HTTP client timeout set", []string{"http/client.go", "http/transport.go"}},
	{"how does the server handle Expect: 100-continue", []string{"http/server.go"}},
	{"what is the maximum header size", []string{"http/server.go"}},
	{"how are cookies parsed", []string{"http/cookie.go"}},
	{"how are cookies serialized into a Set-Cookie header", []string{"http/cookie.go"}},
	{"how does the cookie jar store cookies per domain", []string{"http/cookiejar/jar.go"}},
	{"how does punycode encoding work in the cookie jar", []string{"http/cookiejar/punycode.go"}},
	{"how does the client follow redirects and how many", []string{"http/client.go"}},
	{"how does the transport reuse idle connections", []string{"http/transport.go"}},
	{"what is the maximum number of idle connections per host", []string{"http/transport.go"}},
	{"how is the proxy chosen from environment variables", []string{"http/transport.go"}},
	{"how does the transport decompress gzip responses", []string{"http/transport.go"}},
	{"when does the transport retry a request after a connection error", []string{"http/transport.go"}},
	{"how does the server shut down gracefully", []string{"http/server.go"}},
	{"how does http.Error write an error response", []string{"http/server.go"}},
	{"how does ServeMux match a request to a handler pattern", []string{"http/server.go", "http/pattern.go", "http/routing_tree.go"}},
	{"where are HTTP status codes and their text defined", []string{"http/status.go"}},
	{"how is the content type of a response sniffed", []string{"http/sniff.go"}},
	{"how does FileServer handle range requests", []string{"http/fs.go"}},
	{"how does the file server check If-Modified-Since", []string{"http/fs.go"}},
	{"how is basic auth parsed from the Authorization header", []string{"http/request.go"}},
	{"how does the server limit the size of a request body", []string{"http/request.go", "http/server.go"}},
	{"how is a chunked transfer encoding body read", []string{"http/internal/chunked.go", "http/transfer.go"}},
	{"how are trailers written after a chunked body", []string{"http/transfer.go", "http/server.go", "http/internal/chunked.go"}},
	{"how is the canonical form of a header key computed", []string{"textproto/reader.go", "http/header.go"}},
	{"how does the reverse proxy remove hop-by-hop headers", []string{"http/httputil/reverseproxy.go"}},
	{"how is a request dumped for debugging", []string{"http/httputil/dump.go"}},
	{"how does httptest start a TLS server", []string{"http/httptest/server.go"}},
	{"how does ResponseRecorder capture the status code", []string{"http/httptest/recorder.go"}},
	{"how does pprof serve the CPU profile", []string{"http/pprof/pprof.go"}},
	{"what hooks does the client trace provide for DNS lookups", []string{"http/httptrace/trace.go"}},
	{"how does the CGI handler set environment variables for the child process", []string{"http/cgi/host.go"}},
	{"how are FastCGI records read", []string{"http/fcgi/fcgi.go"}},
	{"how does the resolver read resolv.conf options like ndots", []string{"dnsconfig_unix.go", "dnsconfig.go"}},
	{"how does the DNS client build the list of names to try from search domains", []string{"dnsclient_unix.go"}},
	{"how are SRV records sorted by priority and weight", []string{"dnsclient.go"}},
	{"how does the resolver choose between the hosts file and DNS", []string{"conf.go", "nss.go"}},
	{"how is nsswitch.conf parsed", []string{"nss.go"}},
	{"how does Dial race IPv4 and IPv6 connections", []string{"dial.go"}},
	{"what is the default TCP keep-alive idle time", []string{"dial.go", "tcpsock.go", "tcpsockopt_unix.go"}},
	{"how does net.Pipe create an in-memory connection", []string{"pipe.go"}},
	{"how are service port names looked up in /etc/services", []string{"port_unix.go", "lookup.go"}},
	{"how does ParseCIDR parse an address and network mask", []string{"ip.go"}},
	{"how is a MAC address parsed", []string{"mac.go"}},
	{"does a unix socket listener remove its socket file on close", []string{"unixsock_posix.go", "unixsock.go"}},
	{"how are IPv4-mapped IPv6 addresses unmapped", []string{"netip/netip.go"}},
	{"how are URL query strings parsed into values", []string{"url/url.go"}},
	{"how does URL resolve a relative reference", []string{"url/url.go"}},
	{"how are mail addresses parsed", []string{"mail/message.go"}},
	{"how is the date header of a mail message parsed", []string{"mail/message.go"}},
	{"how does smtp PLAIN authentication work", []string{"smtp/auth.go"}},
	{"how does the smtp client start TLS", []string{"smtp/smtp.go"}},
	{"how does textproto read MIME headers", []string{"textproto/reader.go"}},
	{"how does textproto read dot-encoded lines", []string{"textproto/reader.go"}},
	{"how does net/rpc register the methods of a service", []string{"rpc/server.go"}},
}

// relevanceRoot is $(go env GOROOT)/src/net, served read-only as it is.
func relevanceRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src", "net")
	if _, err := os.Stat(filepath.Join(root, "http", "server.go")); err != nil {
		t.Skipf("no net tree: %v", err)
	}
	return root
}

// firstRank is the 1-based place of the first acceptable file in paths
// (at most MaxRankResults considered), 0 when none is.
func firstRank(paths, ans []string) int {
	for i, p := range paths[:min(len(paths), MaxRankResults)] {
		if slices.Contains(ans, p) {
			return i + 1
		}
	}
	return 0
}

// rgOrder is the files `rg -l -i -F` lists for terms, in its output order
// (--sort path: ripgrep's order is otherwise its threads').
func rgOrder(t *testing.T, root string, terms []string) []string {
	args := []string{"-l", "-i", "-F", "--sort", "path"}
	for _, term := range terms {
		args = append(args, "-e", term)
	}
	cmd := exec.Command("rg", append(args, ".")...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("rg: %v", err)
	}
	var paths []string
	for l := range strings.Lines(string(out)) {
		paths = append(paths, strings.TrimPrefix(strings.TrimSpace(l), "./"))
	}
	return paths
}

// relevanceScore is recall@5 and the mean reciprocal rank of ranks.
func relevanceScore(ranks []int) (recall5, mrr float64) {
	for _, r := range ranks {
		if r > 0 {
			mrr += 1 / float64(r)
			if r <= 5 {
				recall5++
			}
		}
	}
	n := float64(len(ranks))
	return recall5 / n, mrr / n
}

// TestRelevance ranks the question set with the ranked search as it is,
// with the plain term-count order it replaced (better) and with rg -l -i
// order, prints the place of the first right file for each question and
// recall@5 and MRR for each, and holds the new ranking to recall@5 ≥ 0.9:
//
//	go test ./search -run Relevance -v
func TestRelevance(t *testing.T) {
	if len(relevanceSet) < 40 {
		t.Fatalf("%d questions, want at least 40", len(relevanceSet))
	}
	root := relevanceRoot(t)
	e := newTenvAt(t, "net", root).eng
	_, rgErr := exec.LookPath("rg")
	var newRanks, oldRanks, rgRanks []int
	var b strings.Builder
	fmt.Fprintf(&b, "%-4s %-4s %-4s  %-72s %s\n", "new", "old", "rg", "question", "new: first (line) | 2nd, 3rd")
	for _, c := range relevanceSet {
		terms := QueryTerms(c.q)
		top := ""
		rank := func(plain bool) []string {
			r, err := e.Rank(context.Background(), RankRequest{Workdirs: []string{"net"}, Terms: terms, plain: plain})
			if err != nil {
				t.Fatalf("%q: %v", c.q, err)
			}
			var paths []string
			for _, f := range r.Files {
				paths = append(paths, f.Path)
			}
			if !plain && len(r.Files) > 0 {
				top = fmt.Sprintf("%s:%d: %.50s", r.Files[0].Path, r.Files[0].Line, r.Files[0].Text)
			}
			return paths
		}
		got := rank(false)
		n, o := firstRank(got, c.ans), firstRank(rank(true), c.ans)
		newRanks, oldRanks = append(newRanks, n), append(oldRanks, o)
		g := "-"
		if rgErr == nil {
			rr := firstRank(rgOrder(t, root, terms), c.ans)
			rgRanks = append(rgRanks, rr)
			g = fmt.Sprint(rr)
		}
		fmt.Fprintf(&b, "%-4d %-4d %-4s  %-72s %s | %s\n", n, o, g, c.q, top, strings.Join(got[1:min(3, len(got))], " "))
	}
	fmt.Fprintf(&b, "(0: no right file among the first %d)\n\n| ranking | recall@5 | MRR |\n|---|---|---|\n", MaxRankResults)
	r5, mrr := relevanceScore(newRanks)
	fmt.Fprintf(&b, "| new (BM25, boilerplate, names) | %.3f | %.3f |\n", r5, mrr)
	or5, omrr := relevanceScore(oldRanks)
	fmt.Fprintf(&b, "| old (plain term count) | %.3f | %.3f |\n", or5, omrr)
	if rgErr == nil {
		gr5, gmrr := relevanceScore(rgRanks)
		fmt.Fprintf(&b, "| rg -l -i --sort path | %.3f | %.3f |\n", gr5, gmrr)
	} else {
		fmt.Fprintf(&b, "| rg -l -i | (rg not found: %v) | |\n", rgErr)
	}
	t.Logf("%d questions over %s:\n%s", len(relevanceSet), root, b.String())
	if r5 < 0.9 {
		t.Errorf("recall@5 %.3f, want at least 0.9", r5)
	}
}
