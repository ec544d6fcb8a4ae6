package git

import (
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// strictStorer is the object storer every Repo of these tests reads
// through (TestMain installs it): a blob read through go-git's storage,
// not openBlob (which learns the size from the header and checks the
// call's cap first), panics, failing the test that did it, and so does
// more than maxStructObjectBytes read from any object's content.
type strictStorer struct{ objectStorer }

func (s strictStorer) EncodedObject(t plumbing.ObjectType, id plumbing.Hash) (plumbing.EncodedObject, error) {
	if t == plumbing.BlobObject {
		panic(fmt.Sprintf("blob %s read through the object storer: read blobs with openBlob", id))
	}
	o, err := s.objectStorer.EncodedObject(t, id)
	if err != nil {
		return nil, err
	}
	if o.Type() == plumbing.BlobObject {
		panic(fmt.Sprintf("blob %s read through the object storer (asked for %s): read blobs with openBlob", id, t))
	}
	return countedObject{o}, nil
}

// countedObject panics when its content reads past maxStructObjectBytes.
type countedObject struct{ plumbing.EncodedObject }

func (o countedObject) Reader() (io.ReadCloser, error) {
	rd, err := o.EncodedObject.Reader()
	if err != nil {
		return nil, err
	}
	return &countedReader{ReadCloser: rd, id: o.Hash()}, nil
}

type countedReader struct {
	io.ReadCloser
	id plumbing.Hash
	n  int64
}

func (c *countedReader) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if c.n += int64(n); c.n > maxStructObjectBytes {
		panic(fmt.Sprintf("object %s: more than %d bytes read through the object storer", c.id, maxStructObjectBytes))
	}
	return n, err
}
