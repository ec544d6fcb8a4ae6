package bridge

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// socketcall386 is a 386 program: Go's linux/386 makes every socket
// call through socketcall(2), the compat ABI's multiplexer.
const socketcall386 = `package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		fmt.Println("socket:", err)
		os.Exit(3)
	}
	fmt.Println("connect:", syscall.Connect(fd, &syscall.SockaddrUnix{Name: os.Args[1]}))
}
`

// TestSandboxUnixSocketsCompat386: a 32-bit x86 program (the i386
// compat ABI, socketcall) cannot make a Unix socket either; allowed, it
// connects.
func TestSandboxUnixSocketsCompat386(t *testing.T) {
	needLandlock(t)
	goBin, err := lookPath("go", os.Getenv("PATH")+":/usr/local/go/bin", "/")
	if err != nil {
		t.Fatal("go is not installed:", err)
	}
	fsys, root := rtWorkdir(t)
	src := filepath.Join(t.TempDir(), "main.go")
	rtWrite(t, src, socketcall386)
	build := exec.Command(goBin, "build", "-o", filepath.Join(root, "prog386"), src)
	build.Env = append(os.Environ(), "GOARCH=386", "CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOFLAGS=")
	build.Dir = filepath.Dir(src)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build (GOARCH=386): %v\n%s", err, out)
	}
	// A kernel without IA32 emulation runs no i386 program at all, so
	// no process can reach the socketcall path there; the filter's i386
	// branch is still proven by TestUnixSocketFilterProgram, which
	// interprets the BPF program for that ABI.
	if err := exec.Command(filepath.Join(root, "prog386"), "/nonexistent").Run(); errors.Is(err, syscall.ENOEXEC) {
		t.Skip("this kernel cannot execute i386 programs (no IA32 emulation): the i386 socketcall path does not exist here")
	}
	ln, path := unixListener(t)
	wp := rtPolicy(root, map[string]Action{
		"connect":         {Argv: []string{"./prog386", path}},
		"connect_allowed": {Argv: []string{"./prog386", path}, UnixSockets: true},
	})
	res, err := RunAction(context.Background(), fsys, "w", wp, "connect", "", RunLimits{})
	if err != nil || res.ExitCode != 3 || res.Stdout != "socket: permission denied\n" {
		t.Errorf("connect: %+v, %v", res, err)
	}
	if c := pendingConn(t, ln); c != nil {
		c.Close()
		t.Error("the listener got a connection")
	}
	res, err = RunAction(context.Background(), fsys, "w", wp, "connect_allowed", "", RunLimits{})
	if err != nil || res.ExitCode != 0 || !strings.Contains(res.Stdout, "connect: <nil>") {
		t.Errorf("connect_allowed: %+v, %v", res, err)
	}
	if c := pendingConn(t, ln); c == nil {
		t.Error("connect_allowed: the listener has no connection")
	} else {
		c.Close()
	}
}
