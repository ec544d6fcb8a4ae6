package search

import "golang.org/x/sys/cpu"

var haveVectorPair = cpu.X86.HasAVX2

// indexPairBlocks returns the first block of 32 positions b[at:at+32]
// (at < n, a multiple of 32) holding an i with b[i]|m1 == c1 and
// b[i+d]|m2 == c2, with bit i-at of mask set for each such i; at is -1
// when there is none. n is a multiple of 32 and n+d <= len(b).
//
//go:noescape
func indexPairBlocks(b []byte, n int, c1, m1, c2, m2 byte, d int) (at int, mask uint32)
