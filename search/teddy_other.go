//go:build !amd64

package search

func teddyBlocks(b []byte, n int, tables *[6][16]byte, m int, out *teddyBatch) (count, next int) {
	return teddyBlocksGeneric(b, n, tables, m, out)
}
