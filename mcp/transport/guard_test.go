package transport

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestIsBatchKeepsBody: isBatch tells an array from anything else after
// any amount of leading white space up to its bound, read in chunks of
// any size, and the body then reads back whole from its first byte, with
// the reader's error at its end.
func TestIsBatchKeepsBody(t *testing.T) {
	readers := map[string]func(string) io.Reader{
		"whole":      func(s string) io.Reader { return strings.NewReader(s) },
		"one byte":   func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half reads": func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	for name, reader := range readers {
		for _, n := range []int{0, 1, 63, 64, 65, 200, 4096, 64 << 10} {
			for _, body := range []string{`[{"a":1}]`, `{"jsonrpc":"2.0"}`, ``} {
				text := strings.Repeat(" \t\r\n"[n%4:n%4+1], n) + body
				r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
				r.Body = io.NopCloser(reader(text))
				batch, err := isBatch(r)
				if err != nil {
					t.Fatalf("%s, %d spaces, %q: %v", name, n, body, err)
				}
				if batch != strings.HasPrefix(body, "[") {
					t.Errorf("%s, %d spaces, %q: batch %v", name, n, body, batch)
				}
				got, err := io.ReadAll(r.Body)
				if err != nil || string(got) != text {
					t.Errorf("%s, %d spaces, %q: body reads back %d bytes (%v), want %d", name, n, body, len(got), err, len(text))
				}
			}
		}
	}

	// Past 64 KiB of white space: refused, not read on.
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Body = io.NopCloser(strings.NewReader(strings.Repeat(" ", 64<<10+1) + "{}"))
	if _, err := isBatch(r); !errors.Is(err, errTooMuchSpace) {
		t.Errorf("64 KiB + 1 of white space: %v, want errTooMuchSpace", err)
	}
	// A reader that returns nothing and no error, forever: ended.
	r.Body = io.NopCloser(emptyReader{})
	if _, err := isBatch(r); !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("reader without progress: %v, want io.ErrNoProgress", err)
	}
	// A read error before the first byte is isBatch's; after it, the
	// body returns it in order, also when the reader would not repeat it.
	boom := errors.New("boom")
	r.Body = io.NopCloser(iotest.ErrReader(boom))
	if _, err := isBatch(r); !errors.Is(err, boom) {
		t.Errorf("failing body: %v", err)
	}
	for name, body := range map[string]io.Reader{
		"repeated": io.MultiReader(strings.NewReader(" {"), iotest.ErrReader(boom)),
		"once":     &dataThenError{data: " {", err: boom},
	} {
		r.Body = io.NopCloser(body)
		if batch, err := isBatch(r); batch || err != nil {
			t.Fatalf("%s: body failing after its first byte: batch %v, %v", name, batch, err)
		}
		if got, err := io.ReadAll(iotest.OneByteReader(r.Body)); string(got) != " {" || !errors.Is(err, boom) {
			t.Errorf("%s: body failing after its first byte reads %q, %v", name, got, err)
		}
	}
}

// emptyReader returns no bytes and no error.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// dataThenError returns its data with err in one Read, then reads as an
// empty reader: a reader that does not repeat its error (io.Reader allows it).
type dataThenError struct {
	data string
	err  error
	done bool
}

func (d *dataThenError) Read(p []byte) (int, error) {
	if d.done {
		return 0, io.EOF
	}
	d.done = true
	return copy(p, d.data), d.err
}

// deadlineRecorder is a response writer that records the write deadlines
// set on it, as http.ResponseController sets them.
type deadlineRecorder struct {
	http.ResponseWriter
	deadline time.Time
	sets     int
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadline = t
	d.sets++
	return nil
}

// TestDeadlineWriterAhead: every write of a response starts with at least
// the timeout and the owed-flush delay ahead of it and at most an eighth of
// the timeout more, and a burst of writes sets the deadline once, not once
// per write. The writer runs on the test's clock, so the machine's speed
// does not matter.
func TestDeadlineWriterAhead(t *testing.T) {
	const timeout = 8 * time.Millisecond
	clock := time.Unix(1_000_000, 0)
	now := func() time.Time { return clock }
	rec := &deadlineRecorder{ResponseWriter: httptest.NewRecorder()}
	dw := newDeadlineWriterClock(rec, timeout, now)
	if rec.sets != 1 {
		t.Fatalf("a new writer set the deadline %d times, want 1", rec.sets)
	}
	// A burst within the eighth of slack: one deadline.
	for range 100 {
		dw.Write([]byte("x"))
		clock = clock.Add(timeout / 8 / 200)
	}
	if rec.sets != 1 {
		t.Errorf("100 writes in a burst set the deadline %d times, want once", rec.sets)
	}
	// Writes spread over time: every one starts with enough ahead and
	// none with more than the slack, and the deadline moves about once
	// per eighth of the timeout, not per write.
	writes := 0
	step := timeout / 64
	for range 1000 {
		clock = clock.Add(step)
		dw.Write([]byte("x"))
		dw.Flush()
		writes += 2
		if ahead := rec.deadline.Sub(clock); ahead < timeout+sseFlushDelay {
			t.Fatalf("a write at %v had %v before its deadline, want at least %v", clock, ahead, timeout+sseFlushDelay)
		} else if ahead > timeout+sseFlushDelay+timeout/8 {
			t.Fatalf("a write at %v had %v before its deadline, want at most %v", clock, ahead, timeout+sseFlushDelay+timeout/8)
		}
	}
	// 1000 steps of 1/64 timeout, the slack is 8/64: a set once the
	// slack is more than used, every 9 steps.
	if lo, hi := 1000/9, 1+1000/8; rec.sets < lo || rec.sets > hi {
		t.Errorf("%d writes over %v set the deadline %d times, want %d to %d", writes, 1000*step, rec.sets, lo, hi)
	}
}

// TestWriteDeadlineSparesIdleStreams: the deadline runs per write, so a
// stream that is idle for longer than the write timeout (an event stream
// between events) still delivers its next event.
func TestWriteDeadlineSparesIdleStreams(t *testing.T) {
	const timeout = 200 * time.Millisecond
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: one\n\n")
		w.(http.Flusher).Flush()
		time.Sleep(3 * timeout) // idle, as between two events
		io.WriteString(w, "event: two\n\n")
		w.(http.Flusher).Flush()
	})
	g := newGuard(slog.New(slog.DiscardHandler), GuardConfig{MaxSessions: 10, WriteTimeout: timeout}, nil, next).(*guard)
	g.sessionless = true
	ts := httptest.NewServer(g)
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != "event: one\n\nevent: two\n\n" {
		t.Errorf("stream: %q, %v", b, err)
	}
}
