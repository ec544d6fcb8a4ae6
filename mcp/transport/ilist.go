package transport

// ilist is an intrusive doubly linked list: each element holds its own
// place (no allocation per entry, unlike container/list), and one element
// can be in several lists, each using its own place (k).
type ilist[T any, P linked[T]] struct {
	head, tail *T
	n, k       int
}

// linked is an element type: link(k) is its place in the lists of kind k.
type linked[T any] interface {
	*T
	link(k int) *ilink[T]
}

// ilink is an element's place in one list.
type ilink[T any] struct{ prev, next *T }

func (l *ilist[T, P]) len() int { return l.n }

// next is e's successor in l, or nil.
func (l *ilist[T, P]) next(e *T) *T { return P(e).link(l.k).next }

func (l *ilist[T, P]) pushBack(e *T) {
	ln := P(e).link(l.k)
	ln.prev, ln.next = l.tail, nil
	if l.tail != nil {
		P(l.tail).link(l.k).next = e
	} else {
		l.head = e
	}
	l.tail = e
	l.n++
}

func (l *ilist[T, P]) remove(e *T) {
	ln := P(e).link(l.k)
	if ln.prev != nil {
		P(ln.prev).link(l.k).next = ln.next
	} else {
		l.head = ln.next
	}
	if ln.next != nil {
		P(ln.next).link(l.k).prev = ln.prev
	} else {
		l.tail = ln.prev
	}
	ln.prev, ln.next = nil, nil
	l.n--
}

func (l *ilist[T, P]) moveToBack(e *T) {
	if l.tail != e {
		l.remove(e)
		l.pushBack(e)
	}
}
