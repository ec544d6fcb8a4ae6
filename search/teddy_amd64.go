package search

// teddyBlocks returns the first block of 32 positions b[at:at+32] (at < n,
// a multiple of 32) where some position i has a nonzero bucket set: the
// AND over k < m of tables[2k][b[i+k]&15] and tables[2k+1][b[i+k]>>4].
// It stores the block's 32 bucket sets in res and sets bit i-at of mask
// for each nonzero one; at is -1 (res untouched) when there is none. n is
// a multiple of 32, 1 <= m <= 3 and n+m-1 <= len(b).
//
//go:noescape
func teddyBlocks(b []byte, n int, tables *[6][16]byte, m int, res *[32]byte) (at int, mask uint32)
