//go:build !amd64

package search

const haveVectorPair = false

func indexPairBlocks(b []byte, n int, c1, m1, c2, m2 byte, d int) (at int, mask uint32) {
	return indexPairGeneric(b, n, c1, m1, c2, m2, d)
}
