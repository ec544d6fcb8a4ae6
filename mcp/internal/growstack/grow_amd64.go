//go:build !purego

package growstack

// Grow makes at least Size bytes of stack free below the caller: a
// function whose frame is Size bytes and that does nothing, so the
// runtime's stack check in its prologue grows the stack once to fit it.
func Grow()
