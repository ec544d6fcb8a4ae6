//go:build !amd64 || purego

package growstack

// Grow makes at least Size bytes of stack free below the caller. Without
// the assembly version it calls a function whose frame holds an array of
// Size bytes (which the compiler zeroes: a few hundred nanoseconds).
func Grow() { _ = frame() }

//go:noinline
func frame() byte {
	var b [Size]byte
	return touch(b[:])
}

//go:noinline
func touch(b []byte) byte { return b[len(b)-1] }
