//go:build !amd64

package search

func teddyBlocks(b []byte, n int, tables *[6][16]byte, m int, res *[32]byte) (at int, mask uint32) {
	return teddyBlocksGeneric(b, n, tables, m, res)
}
