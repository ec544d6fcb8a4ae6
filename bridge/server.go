package bridge

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// Server is the bridge: it owns the policy, the leases and every process.
type Server struct {
	policy    *Policy
	fs        *sfs.FS // the policy's workdirs, for path checks and pins
	leases    *Leases
	token     []byte
	allowUIDs map[uint32]bool
	log       *slog.Logger
	// ownPaths are the bridge's own directories (state, then the
	// socket's, once Serve knows it), ownFiles its policy and token files
	// (HideFiles): never shown in outputs.
	ownMu    sync.Mutex
	ownPaths []string
	ownFiles []string
	// grants is the grant state (nil without a grants section);
	// grantKeys the pinned keys by key id.
	grants    *GrantStore
	grantKeys map[string]ed25519.PublicKey
	// tools: the cleaned PATH and the git and gh on it, kept from the
	// start for the bridge's lifetime.
	tools *hostTools
}

// NewServer builds a bridge for policy. token is the shared secret;
// allowUIDs the peer uids that may connect (the server container's user).
func NewServer(policy *Policy, token []byte, allowUIDs []uint32, stateDir string, log *slog.Logger) (*Server, error) {
	if len(token) < 16 {
		return nil, errors.New("bridge: the token must be at least 16 bytes")
	}
	tools, dropped, err := resolveHostTools(os.Getenv("PATH"), policyPathGuards(policy))
	for _, d := range dropped {
		// The operator's log (journald for the unit): no agent reads it.
		log.Warn("PATH entry dropped: git, gh and actions' programs are never looked up there, nor is it passed on", "event", "startup", "position", d.pos, "entry", d.entry, "reason", d.why)
	}
	if err != nil {
		return nil, fmt.Errorf("bridge: %w", err)
	}
	var flags []string
	roots := map[string]string{}
	aliases := make([]string, 0, len(policy.Workdirs))
	for a := range policy.Workdirs {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	for _, a := range aliases {
		wp := policy.Workdirs[a]
		spec := a + "=" + wp.Root
		if wp.ReadWrite {
			spec += ":rw"
		}
		flags = append(flags, spec)
		roots[a] = wp.Root
	}
	cfg, err := sfs.LoadConfig([]string{"SERVERFS_ALLOW_HIDDEN=false"}, flags)
	if err != nil {
		return nil, fmt.Errorf("bridge: policy workdirs: %w", err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		return nil, err
	}
	allow := map[uint32]bool{}
	for _, u := range allowUIDs {
		allow[u] = true
	}
	leases := NewLeases(stateDir, roots)
	if n, err := leases.RecoverAll(); err != nil {
		f.Close()
		return nil, fmt.Errorf("bridge: recovery guard: %w", err)
	} else if n > 0 {
		log.Warn("restored the index of commits a previous bridge left unfinished", "event", "recovery_guard", "workdirs", n)
	}
	srv := &Server{policy: policy, fs: f, leases: leases, token: token, allowUIDs: allow, log: log, grantKeys: grantKeys(policy.Grants), tools: tools}
	if policy.Grants != nil {
		if stateDir == "" {
			f.Close()
			return nil, errNoGrants
		}
		if srv.grants, err = OpenGrantStore(stateDir); err != nil {
			f.Close()
			return nil, fmt.Errorf("bridge: %w", err)
		}
	}
	if stateDir != "" {
		srv.ownPaths = append(srv.ownPaths, stateDir)
	}
	return srv, nil
}

// Close releases the workdir descriptors.
func (s *Server) Close() error { return s.fs.Close() }

// ListenSocket creates the bridge's Unix socket at path, replacing a
// stale one, with mode 0660 (the directory and the peer-uid check decide
// who gets further).
func ListenSocket(path string) (*net.UnixListener, error) {
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return nil, err
	}
	return ln.(*net.UnixListener), nil
}

// Serve answers connections on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln *net.UnixListener) error {
	if a := ln.Addr().String(); filepath.IsAbs(a) {
		s.ownMu.Lock()
		s.ownPaths = append(s.ownPaths, filepath.Dir(a))
		s.ownMu.Unlock()
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.handle(ctx, conn)
		}()
	}
}

func (s *Server) handle(ctx context.Context, conn *net.UnixConn) {
	defer conn.Close()
	reply := func(res any, err error) {
		var r wire.Response
		if err != nil {
			r.Error = wire.ErrorOf(err)
		} else if b, merr := json.Marshal(res); merr == nil {
			r.Result = b
		} else {
			r.Error = &wire.Error{Code: string(errs.Internal), Message: "encoding the result failed"}
		}
		b, _ := json.Marshal(r)
		conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		conn.Write(append(b, '\n'))
	}
	uid, err := peerUID(conn)
	if err != nil || !s.allowUIDs[uid] {
		s.log.Warn("bridge refused a connection", "event", "bridge_refused", "reason", "peer uid", "uid", uid)
		reply(nil, errs.New(errs.BridgeAuthFailed, "this user may not use the bridge"))
		return
	}
	conn.SetReadDeadline(time.Now().Add(wire.RequestReadTimeout))
	line, err := bufio.NewReaderSize(conn, wire.MaxRequestBytes+1).ReadSlice('\n')
	if err != nil || len(line) > wire.MaxRequestBytes {
		reply(nil, errs.New(errs.InvalidArgument, "malformed, oversized or late request"))
		return
	}
	var req wire.Request
	dec := json.NewDecoder(strings.NewReader(string(line)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		reply(nil, errs.New(errs.InvalidArgument, "malformed request"))
		return
	}
	if subtle.ConstantTimeCompare([]byte(req.Token), s.token) != 1 {
		s.log.Warn("bridge refused a request", "event", "bridge_refused", "reason", "token")
		reply(nil, errs.New(errs.BridgeAuthFailed, "wrong bridge token"))
		return
	}
	conn.SetReadDeadline(time.Time{})
	// The work stops when the client goes away (it closes the connection
	// when its own request ends): an action or push is killed then.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		var b [1]byte
		conn.Read(b[:])
		cancel()
	}()
	start := time.Now()
	res, err := s.dispatch(rctx, req)
	s.log.Info("bridge call", "event", "bridge_call", "method", req.Method, "duration_ms", time.Since(start).Milliseconds(), "success", err == nil, "error_code", string(errs.CodeOf(err)))
	reply(res, err)
}

// peerUID is the uid of the process at the other end (SO_PEERCRED).
func peerUID(conn *net.UnixConn) (uint32, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return cred.Uid, nil
}

func decodeParams[T any](raw json.RawMessage) (T, error) {
	var v T
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, errs.New(errs.InvalidArgument, "malformed parameters")
	}
	return v, nil
}

// workdirParams decodes a request's parameters and looks up the workdir
// they name.
func workdirParams[T interface{ Alias() string }](s *Server, raw json.RawMessage) (T, WorkdirPolicy, error) {
	p, err := decodeParams[T](raw)
	if err != nil {
		return p, WorkdirPolicy{}, err
	}
	wp, err := s.workdir(p.Alias())
	return p, wp, err
}

func (s *Server) workdir(alias string) (WorkdirPolicy, error) {
	wp, ok := s.policy.Workdirs[alias]
	if !ok {
		return wp, errs.New(errs.WorkdirNotFound, fmt.Sprintf("%q: the bridge has no such workdir", sfs.DisplayPath(alias)))
	}
	return wp, nil
}

// withLease runs fn holding the workdir's lease (actions and pushes take
// it themselves, so that they never overlap a write or a commit).
func (s *Server) withLease(alias, purpose string, fn func() (any, error)) (any, error) {
	id, err := s.leases.Acquire(alias, purpose, DefaultLeaseTTL)
	if err != nil {
		return nil, err
	}
	defer s.leases.Release(alias, id)
	// Renewed while fn runs: an action may run for up to 30 minutes,
	// longer than any lease lives unrenewed.
	done := make(chan struct{})
	defer close(done)
	go wire.RenewUntil(done, func() { s.leases.Renew(alias, id, DefaultLeaseTTL) })
	return fn()
}

// methods are the bridge's handlers, by wire method.
var methods = map[string]func(s *Server, ctx context.Context, req wire.Request) (any, error){
	wire.MethodLeaseAcquire:     (*Server).lease,
	wire.MethodLeaseRenew:       (*Server).lease,
	wire.MethodLeaseRelease:     (*Server).lease,
	wire.MethodLeaseGuardCommit: (*Server).lease,
	wire.MethodActionsList:      (*Server).listActions,
	wire.MethodActionsRun:       (*Server).runAction,
	wire.MethodActionsRelease:   (*Server).runAction,
	wire.MethodBridgeOffer:      (*Server).offer,
	wire.MethodGrantsRun:        (*Server).grant,
	wire.MethodRepoPush:         (*Server).push,
}

func (s *Server) dispatch(ctx context.Context, req wire.Request) (any, error) {
	if handle, ok := methods[req.Method]; ok {
		return handle(s, ctx, req)
	}
	return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("unknown method %q", sfs.DisplayPath(req.Method)))
}

func (s *Server) lease(_ context.Context, req wire.Request) (any, error) {
	p, _, err := workdirParams[wire.LeaseParams](s, req.Params)
	if err != nil {
		return nil, err
	}
	ttl := time.Duration(p.TTLSeconds) * time.Second
	switch req.Method {
	case wire.MethodLeaseAcquire:
		id, err := s.leases.Acquire(p.Workdir, p.Purpose, ttl)
		return wire.LeaseResult{Lease: id}, err
	case wire.MethodLeaseRenew:
		return struct{}{}, s.leases.Renew(p.Workdir, p.Lease, ttl)
	case wire.MethodLeaseRelease:
		return struct{}{}, s.leases.Release(p.Workdir, p.Lease)
	default:
		return struct{}{}, s.leases.GuardCommit(p.Workdir, p.Lease, p.Ref, p.Old)
	}
}

func (s *Server) listActions(_ context.Context, req wire.Request) (any, error) {
	_, wp, err := workdirParams[wire.PushParams](s, req.Params)
	if err != nil {
		return nil, err
	}
	out := []wire.ActionInfo{}
	for name, a := range wp.Actions {
		info := wire.ActionInfo{Name: name, Argument: a.Argument, Mutates: a.Mutates}
		if a.IsRelease() {
			info = wire.ActionInfo{Name: name, Kind: a.Kind, Argument: ArgumentReleaseTag, Mutates: true}
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// runAction runs a command action (actions.run) or a release action
// (actions.release), each refusing the other's arguments.
func (s *Server) runAction(ctx context.Context, req wire.Request) (any, error) {
	p, wp, err := workdirParams[wire.ActionParams](s, req.Params)
	if err != nil {
		return nil, err
	}
	a, ok := wp.Actions[p.Action]
	if !ok {
		return nil, errs.At(errs.ActionNotFound, p.Workdir, "", fmt.Sprintf("has no action %q (inspect_repo view actions lists them)", sfs.DisplayPath(p.Action)))
	}
	if req.Method == wire.MethodActionsRelease {
		return s.release(ctx, p, wp, a)
	}
	if a.IsRelease() {
		return nil, errs.At(errs.InvalidArgument, p.Workdir, "", fmt.Sprintf("action %q is a %s action: it needs a release_tag (vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-beta.N) and takes no path", p.Action, a.Kind))
	}
	if p.ReleaseTag != "" {
		return nil, errs.At(errs.InvalidArgument, p.Workdir, "", fmt.Sprintf("action %q is a command action; it takes no release_tag", p.Action))
	}
	if p.Workspace != "" {
		return s.runInWorkspace(ctx, p, wp)
	}
	return s.withLease(p.Workdir, "action "+p.Action, func() (any, error) {
		return RunAction(ctx, s.fs, p.Workdir, wp, p.Action, p.Path, s.runLimits())
	})
}

func (s *Server) release(ctx context.Context, p wire.ActionParams, wp WorkdirPolicy, a Action) (any, error) {
	switch {
	case p.Workspace != "":
		return nil, errs.At(errs.InvalidArgument, p.Workdir, "", "release actions run in the workdir, never in a workspace")
	case p.Path != "":
		return nil, errs.At(errs.InvalidArgument, p.Workdir, "", "release_tag and path are mutually exclusive")
	case !a.IsRelease():
		return nil, errs.At(errs.InvalidArgument, p.Workdir, "", fmt.Sprintf("action %q is a command action; it takes no release_tag", p.Action))
	}
	if why := wire.CheckReleaseTag(p.ReleaseTag); why != "" {
		return nil, errs.At(errs.InvalidArgument, p.Workdir, "", why)
	}
	return s.withLease(p.Workdir, "release "+p.Action, func() (any, error) {
		return Release(ctx, s.fs, p.Workdir, wp, p.Action, p.ReleaseTag, s.runLimits())
	})
}

func (s *Server) offer(context.Context, wire.Request) (any, error) {
	return wire.Offer{Grants: s.grants != nil && len(s.grantKeys) > 0}, nil
}

func (s *Server) grant(ctx context.Context, req wire.Request) (any, error) {
	p, err := decodeParams[wire.GrantParams](req.Params)
	if err != nil {
		return nil, err
	}
	return s.RunGrant(ctx, p.Workdir, p.Grant)
}

func (s *Server) push(ctx context.Context, req wire.Request) (any, error) {
	p, wp, err := workdirParams[wire.PushParams](s, req.Params)
	if err != nil {
		return nil, err
	}
	return s.withLease(p.Workdir, "push", func() (any, error) {
		return Push(ctx, s.fs, p.Workdir, wp, s.runLimits())
	})
}

// runLimits are the default limits, with the host paths outputs must not
// show: every workdir root, the workspaces, the bridge's own directories
// and files.
func (s *Server) runLimits() RunLimits {
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	lim := RunLimits{BridgePaths: append([]string(nil), s.ownPaths...), Sandbox: s.policy.Sandbox, Protect: policyProtect(s.policy), tools: s.tools}
	for _, a := range sortedKeys(s.policy.Workdirs) {
		lim.Replace = append(lim.Replace, PathName{s.policy.Workdirs[a].Root, a + ":"})
	}
	if d := s.policy.WorkspacesDir; d != "" {
		lim.Replace = append(lim.Replace, PathName{d, scrubBridgePath})
	}
	for _, f := range s.ownFiles {
		lim.Replace = append(lim.Replace, PathName{f, scrubBridgePath})
	}
	return lim
}

// HideFiles names host files of the bridge (its policy and token files)
// that outputs show as "<bridge>". Call it before Serve.
func (s *Server) HideFiles(paths ...string) {
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	s.ownFiles = append(s.ownFiles, paths...)
}
