package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressInterval spaces the progress notifications of a call: at most
// two a second, the first once the call has run that long (a quick call
// sends none).
const progressInterval = 500 * time.Millisecond

// startProgress sends notifications/progress for token on ss while a call
// of tool runs, until the returned stop is called (or ctx ends). The
// progress is the seconds the call has run: the work of a search, a walk,
// a repository status or a bridge action has no total known in advance,
// and the value only has to grow. stop returns once no notification can
// follow, so none trails the call's answer.
func startProgress(ctx context.Context, ss *sdk.ServerSession, token any, tool string) (stop func()) {
	if ss == nil || token == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			secs := float64(n) * progressInterval.Seconds()
			// An error (the client went away) ends nothing: the call's
			// own context says when to stop.
			_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: secs, Message: fmt.Sprintf("%s running for %.1f s", tool, secs)})
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
