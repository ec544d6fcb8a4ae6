package search

// teddyBlocks scans the blocks of 32 positions b[at:at+32] (at < n, a
// multiple of 32) for positions i with a nonzero bucket set: the AND over
// k < m of tables[2k][b[i+k]&15] and tables[2k+1][b[i+k]>>4]. It stores
// the first len(out.at) blocks holding one in out, in order, and returns
// their count and where the scan stopped: n, or the end of the last block
// stored when out is full. n is a multiple of 32, 1 <= m <= 3 and
// n+m-1 <= len(b).
//
//go:noescape
func teddyBlocks(b []byte, n int, tables *[6][16]byte, m int, out *teddyBatch) (count, next int)
