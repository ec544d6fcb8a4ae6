package mcp

import (
	"context"
	"testing"
	"unsafe"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/mcp/internal/growstack"
)

// deepFrames uses about n KiB of stack below its caller.
//
//go:noinline
func deepFrames(n int) byte {
	var b [1000]byte
	b[n%len(b)] = byte(n)
	if n <= 1 {
		return b[0]
	}
	return deepFrames(n-1) + b[n%len(b)]
}

// TestGrowCallStack: on a fresh goroutine, as go-sdk runs each call, a
// tools/call or resources/read handler behind growCallStack runs 7 KiB of
// calls without its stack being copied (a local's address, taken as a
// number, does not change); another method's handler is not grown, and
// its stack moves (so the check can tell).
func TestGrowCallStack(t *testing.T) {
	moved := func(method string) bool {
		ch := make(chan bool)
		h := growCallStack(func(context.Context, string, sdk.Request) (sdk.Result, error) {
			var x byte
			before := uintptr(unsafe.Pointer(&x))
			deepFrames(growstack.Size>>10 - 1)
			ch <- uintptr(unsafe.Pointer(&x)) != before
			return nil, nil
		})
		go h(context.Background(), method, nil)
		return <-ch
	}
	for _, m := range []string{"tools/call", "resources/read"} {
		if moved(m) {
			t.Errorf("%s: the handler's stack was copied after growCallStack", m)
		}
	}
	if !moved("tools/list") {
		t.Error("tools/list: the handler's stack did not move: the check cannot tell")
	}
}
