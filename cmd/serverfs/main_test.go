package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "serverfs ") {
		t.Fatalf("code %d out %q err %q", code, out.String(), errb.String())
	}
}

func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"check-config", "--workdir", "demo=" + dir + ":rw"}, []string{"WORKDIR_99_X=1"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "WORKDIR_99_X") {
		t.Fatalf("bad config: code %d err %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code = run([]string{"check-config", "--workdir", "demo=" + dir + ":rw"}, nil, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "demo") || !strings.Contains(out.String(), "rw") {
		t.Fatalf("code %d out %q err %q", code, out.String(), errb.String())
	}
	if strings.Contains(out.String()+errb.String(), dir) {
		t.Fatal("check-config printed the host path")
	}
	if code := run([]string{"bogus"}, nil, &out, &errb); code != 2 {
		t.Fatalf("unknown command: %d", code)
	}
}
