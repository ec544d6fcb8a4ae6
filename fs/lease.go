package fs

import (
	"context"
	"fmt"
	"github.com/serverfs/serverfs/internal/errs"
	"sync"
	"time"
)

// WriterLease serialises every change to a workdir: file writes now, and
// commits, pushes and named actions once the host bridge exists. One
// holder per workdir at a time. The in-process LocalLease is the default;
// the host bridge backs the same interface so that the server and the
// bridge share one lease across processes.
type WriterLease interface {
	// Acquire blocks until the caller holds the workdir's exclusive lease
	// or ctx ends (then it returns an error with CodeLeaseBusy or
	// CodeCanceled). The caller must call release exactly once.
	Acquire(ctx context.Context, workdir string) (release func(), err error)
}

// CommitGuard is what a WriterLease that guards commits (the host
// bridge's) also implements; package git looks for it. GuardCommit
// registers the commit its holder is making in workdir (.git/index.lock
// exists; ref has the value old, "" before the first commit), so that if
// the holder dies before finishing, the lease's owner completes or undoes
// it before the next holder gets the lease.
type CommitGuard interface {
	GuardCommit(ctx context.Context, workdir, ref, old string) error
}

// LeaseWait is how long a write waits by default for another one to
// finish before answering LEASE_BUSY.
const LeaseWait = 10 * time.Second

// LocalLease is a WriterLease inside one process: a one-slot semaphore per
// workdir, so that waiting honours the request's context.
type LocalLease struct {
	wait  time.Duration
	mu    sync.Mutex
	slots map[string]chan struct{}
}

// NewLocalLease returns an in-process WriterLease whose Acquire waits at
// most wait (0: LeaseWait).
func NewLocalLease(wait time.Duration) *LocalLease {
	if wait <= 0 {
		wait = LeaseWait
	}
	return &LocalLease{wait: wait, slots: map[string]chan struct{}{}}
}

// Acquire implements WriterLease.
func (l *LocalLease) Acquire(ctx context.Context, workdir string) (func(), error) {
	l.mu.Lock()
	slot, ok := l.slots[workdir]
	if !ok {
		slot = make(chan struct{}, 1)
		l.slots[workdir] = slot
	}
	l.mu.Unlock()
	timer := time.NewTimer(l.wait)
	defer timer.Stop()
	select {
	case slot <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-slot }) }, nil
	case <-ctx.Done():
		return nil, canceled(ctx)
	case <-timer.C:
		return nil, errs.At(errs.LeaseBusy, workdir, "", fmt.Sprintf("another change to this workdir has held its writer lease for over %s; try again", l.wait))
	}
}
