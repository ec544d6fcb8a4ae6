// Package growstack grows the calling goroutine's stack ahead of deep work.
//
// A goroutine starts with a small stack that the runtime doubles, copying
// it whole, each time a call would run past its end. A request handler
// that go-sdk starts in a fresh goroutine for every call reaches its
// depth through several doublings, each deeper and dearer to copy than
// the last (about 5 µs of a 270 µs call at one client). Grow
// makes the room in one step, while the stack is still shallow.
package growstack

// Size is the free stack Grow leaves the caller at least. The runtime
// sizes stacks in powers of two; from a request middleware's depth (a
// few KiB used) this grows the stack to 16 KiB, the largest size each
// thread keeps cached: from 32 KiB up a stack comes from the heap under
// its lock and Grow would cost more than the doublings it saves (measured
// with a 16 KiB frame: ~5 µs a call). 8 KiB below the middleware holds a
// quick tool call whole (go-sdk's dispatch, the path policy, the JSON
// encoders, the log handler).
const Size = 8 << 10
