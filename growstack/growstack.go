// Package growstack grows the calling goroutine's stack ahead of deep work.
//
// A goroutine starts with a small stack that the runtime doubles, copying
// it whole, each time a call would run past its end. A request handler
// that go-sdk starts in a fresh goroutine for every call reaches its
// depth through several doublings, each deeper and dearer to copy than
// the last (about 5 µs of a 270 µs call at one client, issue 19). Grow
// makes the room in one step, while the stack is still shallow.
package growstack

// Size is the free stack Grow leaves the caller: enough for a quick tool
// call's whole depth below the method middleware (go-sdk's dispatch, the
// path policy, the JSON encoders, the log handler).
const Size = 16 << 10
