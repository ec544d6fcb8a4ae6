package git

import (
	"os"
	"strconv"
	"sync"
	"testing"
)

// gitScale multiplies the generated states of the git differentials
// (SERVERFS_GIT_SCALE, default 1): the default keeps `go test ./...` of
// this package well inside go test's 10-minute timeout on a loaded
// 2-CPU machine, and every run draws new seeds, so runs add up; a deeper
// run sets, say, 4.
var gitScale = sync.OnceValue(func() int {
	n, err := strconv.Atoi(os.Getenv("SERVERFS_GIT_SCALE"))
	if err != nil || n < 1 {
		return 1
	}
	return n
})

// scaled is n times SERVERFS_GIT_SCALE.
func scaled(t testing.TB, n int) int {
	t.Helper()
	if s := os.Getenv("SERVERFS_GIT_SCALE"); s != "" && gitScale() == 1 && s != "1" {
		t.Fatalf("SERVERFS_GIT_SCALE=%q: want a whole number of at least 1", s)
	}
	return n * gitScale()
}
