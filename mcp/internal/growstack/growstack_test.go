package growstack

import (
	"testing"
	"unsafe"
)

// deep uses about n KiB of stack below its caller.
//
//go:noinline
func deep(n int) byte {
	var b [1000]byte
	b[n%len(b)] = byte(n)
	if n <= 1 {
		return b[0]
	}
	return deep(n-1) + b[n%len(b)]
}

// moved reports whether the goroutine's stack was copied (moved) while
// work ran on a fresh goroutine, after grow: a local's address, taken as
// a number, is not adjusted by the copy.
func moved(grow func(), work func()) bool {
	ch := make(chan bool)
	go func() {
		grow()
		var x byte
		before := uintptr(unsafe.Pointer(&x))
		work()
		ch <- uintptr(unsafe.Pointer(&x)) != before
	}()
	return <-ch
}

// TestGrowMakesRoom: after Grow, 7 KiB of calls run without the stack
// being copied; without it they are (the check can tell).
func TestGrowMakesRoom(t *testing.T) {
	work := func() { deep(Size>>10 - 1) }
	if !moved(func() {}, work) {
		t.Fatal("7 KiB of calls on a fresh goroutine did not move its stack: the check cannot tell")
	}
	if moved(Grow, work) {
		t.Fatal("after Grow, 7 KiB of calls moved the stack: Grow did not make room")
	}
}

// BenchmarkGoroutineDepth is a fresh goroutine reaching 7 KiB of depth,
// with and without Grow first.
func BenchmarkGoroutineDepth(b *testing.B) {
	for _, c := range []struct {
		name string
		grow func()
	}{{"doublings", func() {}}, {"grow", Grow}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				moved(c.grow, func() { deep(Size>>10 - 1) })
			}
		})
	}
}
