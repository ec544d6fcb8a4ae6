package wire

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/serverfs/serverfs/internal/errs"
)

// TestCallEndedContextIsCanceled: a call whose context has ended answers
// CANCELED, not BRIDGE_UNAVAILABLE: the deadline is the caller's (a
// write waiting for a lease), and the bridge may be there. Without a
// bridge listening, a live context answers BRIDGE_UNAVAILABLE.
func TestCallEndedContextIsCanceled(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("0123456789abcdef0123"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "bridge.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := NewClient(sock, token)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Call(ctx, MethodLeaseAcquire, LeaseParams{Workdir: "wd"}, nil); errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("ended context: %v", err)
	}
	gone, err := NewClient(filepath.Join(dir, "absent.sock"), token)
	if err != nil {
		t.Fatal(err)
	}
	if err := gone.Call(context.Background(), MethodLeaseAcquire, LeaseParams{Workdir: "wd"}, nil); errs.CodeOf(err) != errs.BridgeUnavailable {
		t.Fatalf("no bridge: %v", err)
	}
}
