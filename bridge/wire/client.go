package wire

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// Client is the MCP server's side of the bridge. It is also the writer
// lease the server's writes and commits take when a bridge is configured
// (fs.WriterLease), so that they never overlap an action or a push.
type Client struct {
	socket string
	token  string

	mu     sync.Mutex
	leases map[string]string // workdir -> lease id held by this process
}

// The server's writes take the Client as their lease, and commits are
// guarded through it: a lost method would silently drop the guard.
var (
	_ sfs.WriterLease = (*Client)(nil)
	_ sfs.CommitGuard = (*Client)(nil)
)

// NewClient reads the shared token from tokenFile (a compose secret) and
// returns a client for the bridge's socket. Nothing is dialled yet.
func NewClient(socket, tokenFile string) (*Client, error) {
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		// Without the file's path: it is a host path on bare metal.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("bridge token: the file cannot be read: %v", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 16 {
		return nil, fmt.Errorf("bridge token: shorter than 16 characters")
	}
	return &Client{socket: socket, token: tok, leases: map[string]string{}}, nil
}

func unavailable(err error) error {
	return errs.New(errs.BridgeUnavailable, "the host bridge is not reachable; ask the administrator to start it").Wrap(err)
}

// Call sends one request and decodes the result into out (nil: the
// result is not read). ctx bounds
// the whole exchange: when it ends the connection is closed.
func (c *Client) Call(ctx context.Context, method string, params, out any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	req, _ := json.Marshal(Request{Token: c.token, Method: method, Params: p})
	// A failure once ctx has ended is the caller's deadline or
	// cancellation, not an unreachable bridge: a loaded machine may take
	// the whole deadline to dial.
	fail := func(err error) error {
		if ctx.Err() != nil {
			return errs.New(errs.Canceled, "the request was cancelled or timed out").Wrap(ctx.Err())
		}
		return unavailable(err)
	}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	conn, err := d.DialContext(dctx, "unix", c.socket)
	cancel()
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	// A refusal may be written before the request is read (a peer the
	// bridge does not accept): a failed write still reads the answer.
	_, werr := conn.Write(append(req, '\n'))
	line, err := bufio.NewReaderSize(conn, 64<<10).ReadString('\n')
	if werr != nil && line == "" {
		return fail(werr)
	}
	if err != nil && line == "" {
		return fail(err)
	}
	if len(line) > maxResponseBytes {
		return unavailable(fmt.Errorf("oversized answer"))
	}
	var resp Response
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		return unavailable(err)
	}
	if resp.Error != nil {
		return resp.Error.Err()
	}
	if out != nil {
		return json.Unmarshal(resp.Result, out)
	}
	return nil
}

// Acquire implements fs.WriterLease: it takes the bridge's lease for the
// workdir, waiting (up to fs.LeaseWait or ctx) while another holder has it,
// and renews it in the background until release is called.
func (c *Client) Acquire(ctx context.Context, workdir string) (func(), error) {
	deadline := time.Now().Add(sfs.LeaseWait)
	var id string
	for {
		var res LeaseResult
		err := c.Call(ctx, MethodLeaseAcquire, LeaseParams{Workdir: workdir, Purpose: "write or commit", TTLSeconds: int(DefaultLeaseTTL / time.Second)}, &res)
		if err == nil {
			id = res.Lease
			break
		}
		if errs.CodeOf(err) != errs.LeaseBusy || time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, errs.New(errs.Canceled, "the request was cancelled or timed out").Wrap(ctx.Err())
		case <-time.After(200 * time.Millisecond): // polling the bridge, not synchronising a test
		}
	}
	c.mu.Lock()
	c.leases[workdir] = id
	c.mu.Unlock()
	done := make(chan struct{})
	go RenewUntil(done, func() {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.Call(rctx, MethodLeaseRenew, LeaseParams{Workdir: workdir, Lease: id, TTLSeconds: int(DefaultLeaseTTL / time.Second)}, nil)
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			c.mu.Lock()
			delete(c.leases, workdir)
			c.mu.Unlock()
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			c.Call(rctx, MethodLeaseRelease, LeaseParams{Workdir: workdir, Lease: id}, nil)
			cancel()
		})
	}, nil
}

// GuardCommit registers the commit this process is making (its
// .git/index.lock exists; ref has the value old) under the lease it
// holds, so that the bridge finishes or undoes it if this process dies
// (see the bridge's Leases.GuardCommit). git.Commit calls it.
func (c *Client) GuardCommit(ctx context.Context, workdir, ref, old string) error {
	c.mu.Lock()
	id := c.leases[workdir]
	c.mu.Unlock()
	return c.Call(ctx, MethodLeaseGuardCommit, LeaseParams{Workdir: workdir, Lease: id, Ref: ref, Old: old}, nil)
}

// Actions lists the workdir's named actions.
func (c *Client) Actions(ctx context.Context, workdir string) ([]ActionInfo, error) {
	var out []ActionInfo
	err := c.Call(ctx, MethodActionsList, PushParams{Workdir: workdir}, &out)
	return out, err
}

// RunAction runs a named action (path only for actions that take one).
func (c *Client) RunAction(ctx context.Context, workdir, action, path string) (*ActionResult, error) {
	var out ActionResult
	if err := c.Call(ctx, MethodActionsRun, ActionParams{Workdir: workdir, Action: action, Path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RunRelease runs a release action (kind release_tag or publish_npm)
// for the release tag.
func (c *Client) RunRelease(ctx context.Context, workdir, action, tag string) (*ReleaseResult, error) {
	var out ReleaseResult
	if err := c.Call(ctx, MethodActionsRelease, ActionParams{Workdir: workdir, Action: action, ReleaseTag: tag}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Push pushes the workdir's current branch to its upstream.
func (c *Client) Push(ctx context.Context, workdir string) (*PushResult, error) {
	var out PushResult
	if err := c.Call(ctx, MethodRepoPush, PushParams{Workdir: workdir}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Offer asks the bridge what it serves beyond named actions and push.
func (c *Client) Offer(ctx context.Context) (Offer, error) {
	var out Offer
	err := c.Call(ctx, MethodBridgeOffer, struct{}{}, &out)
	return out, err
}

// RunGrant hands an operator-signed grant to the bridge, which verifies
// it and runs its argv in the workdir. The grant's text is cut after
// MaxGrantBytes+1 bytes: the bridge refuses it as too large either way
// (and logs that), without the rest crossing the socket.
func (c *Client) RunGrant(ctx context.Context, workdir, grant string) (*GrantResult, error) {
	if len(grant) > MaxGrantBytes+1 {
		grant = grant[:MaxGrantBytes+1]
	}
	var out GrantResult
	if err := c.Call(ctx, MethodGrantsRun, GrantParams{Workdir: workdir, Grant: grant}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RunWorkspaceAction runs a command action of the workdir in its
// workspace id (the ID of ALIAS@ID), as RunAction does in the workdir.
func (c *Client) RunWorkspaceAction(ctx context.Context, workdir, id, action, path string) (*ActionResult, error) {
	var out ActionResult
	if err := c.Call(ctx, MethodActionsRun, ActionParams{Workdir: workdir, Workspace: id, Action: action, Path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
