package fs

import (
	"context"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// maxAhead bounds the directories a walk holds read ahead (open and listed,
// not yet reached): each holds a descriptor and its entries.
const maxAhead = 64

// Read-ahead states.
const (
	aheadQueued  = iota // waiting for a reader
	aheadReading        // a reader is opening and listing it
	aheadDone           // listed, waiting for the walk
	aheadTaken          // the walk took it (or will read it itself)
)

// aheadDir is one directory read ahead of the walk: the walk's own open
// and read (openatRetry, readDirents), done earlier by another goroutine.
type aheadDir struct {
	parent *dirHandle // a reference held until the reader opened it
	name   string
	rel    relPath
	budget int // entries the read may take: the walk's budget when queued, an upper bound of its budget when it arrives

	state int
	done  chan struct{} // closed when state leaves aheadReading

	fd   int // -1: open failed
	raw  []dirent
	more bool  // readDirents said more than budget
	err  error // readDirents' error
	// vis and dots are loadFrame's work on raw (visible entries sorted,
	// "." names), done by the reader; valid when sorted.
	vis    []dirent
	dots   dotNames
	sorted bool
}

// readAhead reads the directories a walk will descend into before it gets
// there, in a few goroutines: the walk itself stays one sequential
// depth-first pass (the same order, Enter calls, entry counts and
// truncation as without it); only the system calls that open and list a
// directory, and the filtering and sorting of its entries, move off its
// path. Directories are read in the order the walk will reach them as far
// as it is known (the children of the directory entered last first), at
// most maxAhead ahead. Everything it started has ended and been closed
// when stop returns.
type readAhead struct {
	w   *Workdir
	ctx context.Context

	mu     sync.Mutex
	cond   *sync.Cond
	queue  []*aheadDir // a stack: the next to read is last
	ahead  int         // reading or done, not taken
	closed bool
	wg     sync.WaitGroup
}

func newReadAhead(ctx context.Context, w *Workdir, readers int) *readAhead {
	ra := &readAhead{w: w, ctx: ctx}
	ra.cond = sync.NewCond(&ra.mu)
	for range readers {
		ra.wg.Add(1)
		go ra.reader()
	}
	return ra
}

// push queues the subdirectories subs (in walk order) of the frame fr.
func (ra *readAhead) push(fr *walkFrame, subs []int, budget int) {
	if len(subs) == 0 {
		return
	}
	fr.ahead = make([]*aheadDir, len(fr.ents))
	ra.mu.Lock()
	for i := len(subs) - 1; i >= 0; i-- {
		d := fr.ents[subs[i]]
		fr.dir.refs.Add(1)
		ad := &aheadDir{parent: fr.dir, name: d.name, rel: fr.rel.join(d.name), budget: budget, done: make(chan struct{}), fd: -1}
		fr.ahead[subs[i]] = ad
		ra.queue = append(ra.queue, ad)
	}
	ra.mu.Unlock()
	ra.cond.Broadcast()
}

func (ra *readAhead) reader() {
	defer ra.wg.Done()
	for {
		ra.mu.Lock()
		for !ra.closed && (len(ra.queue) == 0 || ra.ahead >= maxAhead) {
			ra.cond.Wait()
		}
		if ra.closed {
			ra.mu.Unlock()
			return
		}
		ad := ra.queue[len(ra.queue)-1]
		ra.queue[len(ra.queue)-1] = nil
		ra.queue = ra.queue[:len(ra.queue)-1]
		if ad.state != aheadQueued { // taken by the walk meanwhile
			ra.mu.Unlock()
			continue
		}
		ad.state = aheadReading
		ra.ahead++
		ra.mu.Unlock()
		ra.read(ad)
		ra.mu.Lock()
		ad.state = aheadDone
		close(ad.done)
		ra.mu.Unlock()
	}
}

// read opens and lists one directory, as the walk would.
func (ra *readAhead) read(ad *aheadDir) {
	if ra.ctx.Err() != nil {
		ad.parent.release()
		return
	}
	fd, err := openatRetry(ad.parent.fd, ad.name, flagsDir)
	ad.parent.release()
	if err != nil {
		return
	}
	ad.fd = fd
	ad.raw, ad.more, ad.err = readDirents(fd, ad.budget)
	ad.vis, ad.dots, ad.sorted = ra.w.filterSort(ra.ctx, ad.rel, ad.raw)
}

// take hands the walk a directory it is about to enter. ok false: it was
// not read ahead (or not yet: the walk reads it itself); otherwise fd is
// the open directory (-1 when opening failed) and ad holds its listing.
func (ra *readAhead) take(ad *aheadDir) bool {
	ra.mu.Lock()
	switch ad.state {
	case aheadTaken:
		ra.mu.Unlock()
		return false
	case aheadQueued:
		ad.state = aheadTaken
		ra.mu.Unlock()
		ad.parent.release()
		return false
	case aheadReading:
		ra.mu.Unlock()
		<-ad.done
		ra.mu.Lock()
	}
	ad.state = aheadTaken
	ra.ahead--
	ra.mu.Unlock()
	ra.cond.Signal()
	return true
}

// drop lets go of a directory the walk will not enter (again).
func (ra *readAhead) drop(ad *aheadDir) {
	if ra.take(ad) && ad.fd >= 0 {
		unix.Close(ad.fd)
	}
}

// stop ends the readers and closes what they read that the walk did not
// take; stack holds every frame whose children may still be queued.
func (ra *readAhead) stop(stack []*walkFrame) {
	ra.mu.Lock()
	ra.closed = true
	ra.mu.Unlock()
	ra.cond.Broadcast()
	ra.wg.Wait()
	for _, fr := range stack {
		for _, ad := range fr.ahead {
			if ad != nil {
				ra.drop(ad) // a no-op for those taken
			}
		}
	}
}

// filterSort is loadFrame's work on a directory's entries: the visible
// ones sorted by name, and the "." names present. ok false when ctx ended
// meanwhile.
func (w *Workdir) filterSort(ctx context.Context, rel relPath, ents []dirent) ([]dirent, dotNames, bool) {
	vis := make([]dirent, 0, len(ents))
	var dots dotNames
	for i, d := range ents {
		if i%256 == 255 && ctx.Err() != nil {
			return nil, nil, false
		}
		if strings.HasPrefix(d.name, ".") {
			dots = append(dots, d.name)
		}
		if w.policy.visible(rel, d.name) {
			vis = append(vis, d)
		}
	}
	sort.Slice(vis, func(i, j int) bool { return vis[i].name < vis[j].name })
	return vis, dots, true
}
