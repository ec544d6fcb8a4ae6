package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/serverfs/serverfs/internal/settings"

	"github.com/serverfs/serverfs/git/workspace"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/mcp"
	"github.com/serverfs/serverfs/mcp/transport"
	"github.com/serverfs/serverfs/search"
)

func serve(args, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("serve", flag.ContinueOnError)
	fset.SetOutput(stderr)
	var flags configFlags
	flags.register(fset)
	stdio := fset.Bool("stdio", false, "serve one client over stdin/stdout")
	if code, ok := parseFlags(fset, args, stdout); !ok {
		return code
	}
	// go-sdk v1.8.0 allocates a 32 KiB JSON decoder buffer several times per
	// request; with the default GOGC the collector ran for a quarter of a
	// tool call's CPU. A live heap of a few MiB makes 400 cheap (measured:
	// stat_file at 64 clients, 325 -> 219 µs of server CPU per call).
	// An operator's GOGC wins.
	if _, set := settings.EnvMap(environ)["GOGC"]; !set {
		debug.SetGCPercent(400)
	}
	// The same validation check-config runs, so that it cannot pass a
	// configuration serve refuses.
	su, err := configure(environ, flags)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	cfg, toolsCfg, httpCfg, f := su.cfg, su.tools, su.http, su.fs
	defer f.Close()
	log := mcp.NewJSONLogger(stderr, toolsCfg.LogLevel)
	// GOGC=400 lets garbage grow to four times the live heap: with heavy
	// calls live (decompressor windows), that alone would pass the memory
	// budget. The runtime's soft limit keeps the heap, garbage included,
	// within it: 7/8 of the budget, the rest for what the limit does not
	// count (the binary's pages) and its overshoot. An operator's
	// GOMEMLIMIT wins.
	if _, set := settings.EnvMap(environ)["GOMEMLIMIT"]; !set {
		debug.SetMemoryLimit(mcp.RuntimeMemoryLimit(toolsCfg.Admission.MemoryBudget))
	}
	deps := su.deps()
	deps.Search, deps.Log, deps.Admit = search.New(f), log, mcp.NewAdmission(toolsCfg.Admission)
	if su.offerErr != nil {
		log.Warn("the host bridge did not answer at start-up; run_granted_command is not served", "event", "startup", "error_code", string(errs.CodeOf(su.offerErr)))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	attrs := []any{"event", "startup", "version", version, "workdirs", len(cfg.Workdirs), "resolver", f.Resolver().String(),
		"max_heavy_calls", toolsCfg.Admission.MaxHeavy, "heavy_queue", toolsCfg.Admission.Queue, "memory_budget_mb", toolsCfg.Admission.MemoryBudget >> 20}
	if su.workspaces.StateDir != "" {
		m, rep, err := workspace.Open(f, su.workspaces)
		if err != nil {
			log.Error("cannot open the workspace storage", "event", "startup", "error", err.Error())
			return 1
		}
		defer m.Close()
		deps.Workspaces = m
		attrs = append(attrs, "workspaces", rep.Attached)
		if rep.Expired+rep.Incomplete > 0 {
			attrs = append(attrs, "workspaces_removed", rep.Expired+rep.Incomplete)
		}
		if rep.Orphaned > 0 {
			attrs = append(attrs, "workspaces_orphaned", rep.Orphaned)
		}
	}
	if n := f.SweepTemporaries(); n > 0 {
		// Temporaries of writes a crash interrupted (the files themselves
		// hold their old or new content).
		attrs = append(attrs, "swept_temporaries", n)
	}

	if *stdio {
		log.Info("serving over stdio", attrs...)
		err := transport.Stdio(stdin, stdout).Run(ctx, mcp.NewServer(deps, version))
		if err != nil && ctx.Err() == nil {
			log.Error("stdio session ended", "event", "shutdown", "error", err.Error())
			return 1
		}
		return 0
	}

	for _, w := range httpCfg.Warnings {
		log.Warn("configuration warning", "event", "startup", "warning", w)
	}
	ln, err := transport.Listen(httpCfg)
	if err != nil {
		log.Error("cannot listen", "event", "startup", "listen", listenName(httpCfg, nil), "error", err.Error())
		return 1
	}
	// A listener that is never served still removes its socket.
	defer ln.Close()
	ln = transport.LimitConnections(ln, httpCfg.MaxConnections, httpCfg.Guard.WriteTimeout, log.Logger)
	// The transport applies the tools' body cap and names each call's
	// client for their heavy-call gate.
	httpCfg.MaxRequestBytes, httpCfg.CallContext = mcp.RequestBytes(deps), mcp.WithClient
	srv := transport.NewHTTPServer(httpCfg.Listen, transport.NewHandler(mcp.NewServer(deps, version), httpCfg, log.Logger))
	clientAuth := "none"
	if httpCfg.AuthToken.Set() {
		clientAuth = "token header " + transport.AuthHeader
	}
	log.Info("serving streamable HTTP", append(attrs, "listen", listenName(httpCfg, ln), "path", transport.Path, "allowed_hosts", strings.Join(httpCfg.AllowedHosts, ","), "client_auth", clientAuth, "max_connections", httpCfg.MaxConnections)...)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		log.Error("server stopped", "event", "shutdown", "error", err.Error())
		return 1
	case <-ctx.Done():
	}
	log.Info("shutting down", "event", "shutdown")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return 1
	}
	return 0
}

// healthcheck connects to the local listen port (or the unix: socket): the
// scratch image has no shell or curl, so the container's HEALTHCHECK runs
// this. It needs no client token: it does not speak HTTP.
func healthcheck(environ []string, stderr io.Writer) int {
	_, httpCfg, probs := loadServeConfig(environ)
	if len(probs) > 0 {
		fmt.Fprintln(stderr, strings.Join(probs, "\n"))
		return 1
	}
	network, addr := "unix", httpCfg.Listen
	if httpCfg.Network != "unix" {
		_, port, _ := net.SplitHostPort(httpCfg.Listen)
		network, addr = "tcp", net.JoinHostPort("127.0.0.1", port)
	}
	conn, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		fmt.Fprintln(stderr, "unhealthy:", err)
		return 1
	}
	conn.Close()
	return 0
}

// listenName is the listener as the start-up log names it: IP:PORT (the
// bound port when ln is open), or unix:PATH.
func listenName(c transport.Config, ln net.Listener) string {
	switch {
	case c.Network == "unix":
		return "unix:" + c.Listen
	case ln != nil:
		return ln.Addr().String()
	}
	return c.Listen
}
