package errs

import (
	"errors"
	"fmt"
	"testing"
)

func TestRender(t *testing.T) {
	cause := errors.New("EIO on /srv/secret")
	for _, c := range []struct {
		err  error
		code Code
		text string
	}{
		{New(InvalidArgument, "max_lines must be positive"), InvalidArgument, "INVALID_ARGUMENT: max_lines must be positive"},
		{At(PathNotFound, "projects", "a/b.txt", "does not exist"), PathNotFound, "PATH_NOT_FOUND: projects:/a/b.txt does not exist"},
		{At(WorkdirReadOnly, "projects", "", "is read-only"), WorkdirReadOnly, "WORKDIR_READ_ONLY: projects:/ is read-only"},
		{At(PathNotFound, "projects", "x", ""), PathNotFound, "PATH_NOT_FOUND: projects:/x"},
		{New(ServerBusy, ""), ServerBusy, "SERVER_BUSY"},
		{&Error{Code: InvalidPath, Workdir: "projects", Path: "/etc/passwd", Sent: true, Msg: "is absolute"}, InvalidPath, "INVALID_PATH: /etc/passwd is absolute"},
		{fmt.Errorf("wrapped: %w", At(RepoLocked, "projects", "", "is locked").Wrap(cause)), RepoLocked, "REPO_LOCKED: projects:/ is locked"},
		{At(Internal, "projects", "a", "open failed").Wrap(cause), Internal, "INTERNAL_ERROR: projects:/a failed; the server log has the details"},
		{New(Internal, "open /srv/secret failed"), Internal, "INTERNAL_ERROR: the request failed; the server log has the details"},
		{cause, Internal, "INTERNAL_ERROR: the request failed; the server log has the details"},
		{nil, Internal, "INTERNAL_ERROR: the request failed; the server log has the details"},
	} {
		code, text := Render(c.err)
		if code != c.code || text != c.text {
			t.Errorf("Render(%v) = %s, %q; want %s, %q", c.err, code, text, c.code, c.text)
		}
	}
}

func TestCodeOfAndWrap(t *testing.T) {
	cause := errors.New("ENOSPC")
	e := At(NoSpace, "projects", "f", "no space").Wrap(cause)
	if !errors.Is(e, cause) {
		t.Error("Wrap: the cause is not reachable through errors.Is")
	}
	if got := CodeOf(fmt.Errorf("ctx: %w", e)); got != NoSpace {
		t.Errorf("CodeOf(wrapped) = %s, want NO_SPACE", got)
	}
	if got := CodeOf(cause); got != Internal {
		t.Errorf("CodeOf(foreign) = %s, want INTERNAL_ERROR", got)
	}
	if got := CodeOf(nil); got != "" {
		t.Errorf("CodeOf(nil) = %q, want empty", got)
	}
}
