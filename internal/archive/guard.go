package archive

import (
	"context"
	"fmt"
	"io"
)

// guard counts one call's compressed bytes read and decompressed bytes
// produced, and stops the call at the bounds of Limits: the total, and
// the expansion ratio once past RatioSlack.
type guard struct {
	ctx     context.Context
	lim     Limits
	in, out int64
}

// inReader counts the compressed bytes a decoder reads.
type inReader struct {
	g *guard
	r io.Reader
}

func (c *inReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.g.in += int64(n)
	return n, err
}

// outReader counts decompressed bytes and fails the read that passes a
// bound; it checks the context every read.
type outReader struct {
	g *guard
	r io.Reader
}

func (c *outReader) Read(p []byte) (int, error) {
	if err := c.g.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	if err := c.g.add(int64(n)); err != nil {
		return n, err
	}
	return n, err
}

// add counts n decompressed bytes.
func (g *guard) add(n int64) error {
	g.out += n
	switch {
	case g.out > g.lim.MaxTotalBytes:
		return tooLarge(fmt.Sprintf("more than %d bytes decompressed in one call", g.lim.MaxTotalBytes))
	case g.out > RatioSlack && g.out > max(g.in, 1)*g.lim.MaxRatio:
		return tooLarge(fmt.Sprintf("it expands more than %d times (%d bytes from %d): a decompression bomb", g.lim.MaxRatio, g.out, g.in))
	}
	return nil
}
