package fs

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"github.com/serverfs/serverfs/internal/errs"
	"strings"
)

// Cursor is a position in a walk's deterministic order (see Walk), where a
// truncated answer stops and its continuation resumes: everything up to
// and including Path is done, except that when Line > 0 the lines of the
// file Path after Line are not. Directories below Path (when Path is one)
// come after it.
type Cursor struct {
	Path string `json:"p"`
	Line int    `json:"l,omitempty"`
	Key  string `json:"k"` // binds the cursor to the request that made it
}

// maxCursorBytes bounds an encoded cursor (a path is at most 4096 bytes).
const maxCursorBytes = 8192

// CursorKey derives the key binding a cursor to the arguments of the
// search that made it (every argument but the limit).
func CursorKey(args ...string) string {
	h := sha256.New()
	for _, a := range args {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}

// Encode returns the opaque form of c handed to agents as next_cursor.
func (c Cursor) Encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses an agent's cursor and checks that it belongs to the
// request with key, or returns INVALID_ARGUMENT.
func DecodeCursor(s, key string) (Cursor, error) {
	bad := errs.New(errs.InvalidArgument, "cursor is not a next_cursor of this request; pass next_cursor back unchanged, with the same arguments (only limit may change)")
	if len(s) > maxCursorBytes {
		return Cursor{}, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, bad
	}
	var c Cursor
	if json.Unmarshal(b, &c) != nil || c.Key != key || c.Line < 0 || c.Path == "" {
		return Cursor{}, bad
	}
	return c, nil
}

// WalkCompare orders two workdir-relative paths as Walk visits them:
// component by component, each compared as bytes, a directory before
// what it holds. It returns -1, 0 or +1.
func WalkCompare(a, b string) int {
	for {
		ca, ra, moreA := strings.Cut(a, "/")
		cb, rb, moreB := strings.Cut(b, "/")
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
		switch {
		case !moreA && !moreB:
			return 0
		case !moreA:
			return -1
		case !moreB:
			return 1
		}
		a, b = ra, rb
	}
}

// Resume tells a walk's Visit what to do with an entry when resuming after
// c: skip it (done before), descend without reporting it (an ancestor of
// c.Path, or c.Path itself when a directory), or take it (after c).
type Resume int

// The answers of Cursor.Resume.
const (
	ResumeTake    Resume = iota // after the cursor: report or search it
	ResumeSkip                  // before the cursor, or the cursor's file when done
	ResumeDescend               // on the way to the cursor: enter, do not report
	ResumePartial               // the cursor's file: search its lines after c.Line
)

// Resume classifies the entry at path (isDir for directories).
func (c *Cursor) Resume(path string, isDir bool) Resume {
	if c == nil {
		return ResumeTake
	}
	switch cmp := WalkCompare(path, c.Path); {
	case cmp > 0:
		return ResumeTake
	case cmp == 0:
		if isDir {
			return ResumeDescend
		}
		if c.Line > 0 {
			return ResumePartial
		}
		return ResumeSkip
	default:
		if isDir && strings.HasPrefix(c.Path, path+"/") {
			return ResumeDescend
		}
		return ResumeSkip
	}
}
