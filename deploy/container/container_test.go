// Package container_test is the container smoke test: it builds
// Dockerfile.scratch with podman, runs the image with the same hardening
// compose.yml applies, and drives the MCP server in it from the host through
// a published loopback port.
//
// Two workdirs are mounted: the read-only fixture at slot 01 (the read
// tools and the refusals) and a read-write scratch directory at slot 02,
// owned by the server's uid 10001 (the write tools, checked on
// the host file system afterwards).
//
// Requirements (.ci/run installs them): podman, runc and busybox-static from
// Debian, and the machine's Go toolchain in /usr/local/go. No registry has to
// be reachable: the builder image docker.io/library/golang:1.26 is created
// locally from busybox-static, /usr/local/go and the host's CA bundle when it
// is missing. Module downloads inside the build go to the Go module proxy.
//
// Podman runs as root (as CI does) with its own configuration written per
// test run (runc, cgroupfs, no default ulimits, file events logger, vfs
// storage: what works on a host without systemd), passed in CONTAINERS_CONF and CONTAINERS_STORAGE_CONF,
// so the host's podman setup is neither needed nor touched. Its images,
// state and buildah's cache mounts (TMPDIR) live in /var/tmp/serverfs-podman
// (override with SERVERFS_PODMAN_DIR). The directory survives between runs,
// so the builder image (~250 MB) and the Go build cache of the Dockerfile's
// cache mount are reused: a warm run takes about 10 s, a cold one (builder
// image made, modules downloaded, everything compiled) about 40 s. No
// container is left running; remove the directory to start cold.
//
//	go test -count=1 -run Container -v ./deploy/container/
package container_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// imageTag is the image the test builds and runs.
	imageTag = "localhost/serverfs:test"
	// builderImage is what Dockerfile.scratch's `FROM golang:1.26` resolves
	// to with --pull=never.
	builderImage = "docker.io/library/golang:1.26"
	// builderLabel marks a builder image this test made, with the Go version
	// it holds, so it is remade when the machine's toolchain changes. An
	// image without the label (a real one, pulled elsewhere) is kept.
	builderLabel = "org.serverfs.builder.go"
	// maxImageBytes is the image size budget (16 MB): a scratch image of
	// one static binary has no reason to be bigger. It was 15 MB until the
	// readers of archives, PDF, office documents and images (image/jpeg,
	// png, gif, x/image's webp and scaling, archive/zip and tar, bzip2)
	// added 1.0 MB of binary (14.34 to 15.36 MB, -s -w).
	maxImageBytes = 16_000_000
	// hostGoRoot is the machine's Go toolchain copied into the builder.
	hostGoRoot = "/usr/local/go"
	caBundle   = "/etc/ssl/certs/ca-certificates.crt"
	// apiKeyCanary is the CONTROL_PLANE_API_KEY podman itself runs with.
	apiKeyCanary = "sk-smoke-canary-not-a-key"
	// clientToken is the MCP client token, as compose's mcp_token secret
	// holds it (head -c 32 /dev/urandom | base64); tokenHeader is the
	// header the tunnel sends it in (mcp.AuthHeader).
	clientToken = "c21va2UtdGVzdC1jbGllbnQtdG9rZW4tMzItYnl0ZXM="
	tokenHeader = "X-ServerFS-Token"
	// serverUID is the user the image runs as (compose: user 10001:10001).
	serverUID = 10001
)

// podman runs podman with the test's configuration.
type podman struct {
	bin string
	env []string
}

// run executes podman and returns its trimmed stdout; a failure carries
// stderr.
func (p *podman) run(ctx context.Context, args ...string) (string, error) {
	return p.runIn(ctx, "", args...)
}

func (p *podman) runIn(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, p.bin, args...)
	cmd.Env = p.env
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := strings.TrimSpace(stdout.String())
	if err != nil {
		return out, fmt.Errorf("podman %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func (p *podman) must(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := p.run(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newPodman writes the podman configuration into a temporary directory and
// returns a runner that passes it to every podman command.
func newPodman(t *testing.T) *podman {
	t.Helper()
	bin, err := exec.LookPath("podman")
	if err != nil {
		t.Fatal("podman is not installed: .ci/run installs it (apt-get install -y podman runc busybox-static); the container smoke test needs it and is never skipped")
	}
	if _, err := exec.LookPath("runc"); err != nil {
		if _, err := os.Stat("/usr/sbin/runc"); err != nil {
			t.Fatal("runc is not installed: .ci/run installs it (apt-get install -y podman runc busybox-static)")
		}
	}
	state := os.Getenv("SERVERFS_PODMAN_DIR")
	if state == "" {
		state = "/var/tmp/serverfs-podman"
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := t.TempDir()
	containersConf := filepath.Join(conf, "containers.conf")
	storageConf := filepath.Join(conf, "storage.conf")
	// The settings measured working on a CI machine (no
	// systemd, no journald): runc, cgroupfs, no default ulimits, events to
	// a file, vfs storage.
	writeFile(t, containersConf, fmt.Sprintf(`[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = %q
`, filepath.Join(state, "events.log")))
	writeFile(t, storageConf, fmt.Sprintf(`[storage]
driver = "vfs"
graphroot = %q
runroot = %q
`, filepath.Join(state, "storage"), filepath.Join(state, "run")))
	// TMPDIR places buildah's cache mounts (the Go build cache of
	// Dockerfile.scratch) under the state directory too.
	tmp := filepath.Join(state, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	// A tunnel key in the environment podman runs in (as on an operator's
	// host) must not reach the container: the test asserts its absence.
	env := append(os.Environ(), "CONTAINERS_CONF="+containersConf, "CONTAINERS_STORAGE_CONF="+storageConf, "TMPDIR="+tmp,
		"CONTROL_PLANE_API_KEY="+apiKeyCanary)
	return &podman{bin: bin, env: env}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hostGoVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hostGoRoot, "VERSION"))
	if err != nil {
		t.Fatalf("the builder image is made from the machine's Go toolchain in %s: %v", hostGoRoot, err)
	}
	v, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(v)
}

// ensureBuilder creates docker.io/library/golang:1.26 from busybox-static,
// the machine's Go toolchain and CA bundle unless a usable one exists.
func ensureBuilder(t *testing.T, ctx context.Context, p *podman) {
	t.Helper()
	goVersion := hostGoVersion(t)
	if _, err := p.run(ctx, "image", "exists", builderImage); err == nil {
		label, err := p.run(ctx, "image", "inspect", "--format", `{{index .Labels "`+builderLabel+`"}}`, builderImage)
		if err != nil {
			t.Fatal(err)
		}
		if label == "" || label == "<no value>" || label == goVersion {
			t.Logf("builder image %s present (%s)", builderImage, map[bool]string{true: "not made by this test", false: "made from " + label}[label == "" || label == "<no value>"])
			return
		}
		t.Logf("builder image %s holds %s, the machine has %s: remaking it", builderImage, label, goVersion)
	}
	start := time.Now()
	busybox := "/bin/busybox"
	if _, err := os.Stat(busybox); err != nil {
		t.Fatal("busybox is not installed: .ci/run installs busybox-static (apt-get install -y busybox-static)")
	}
	if !staticELF(t, busybox) {
		t.Fatalf("%s is dynamically linked: install busybox-static (.ci/run does)", busybox)
	}
	if _, err := os.Stat(caBundle); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"bin/go", "bin/gofmt"} {
		if !staticELF(t, filepath.Join(hostGoRoot, tool)) {
			t.Fatalf("%s/%s is dynamically linked: the builder image has no C library", hostGoRoot, tool)
		}
	}

	root := t.TempDir()
	for _, d := range []string{"bin", "etc/ssl/certs", "root", "tmp", "usr/local", "dev", "proc", "sys"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	copyFile(t, busybox, filepath.Join(root, "bin", "busybox"), 0o755)
	copyFile(t, caBundle, filepath.Join(root, caBundle), 0o644)
	applets, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		t.Fatalf("busybox --list: %v", err)
	}
	for _, a := range strings.Fields(string(applets)) {
		if a == "busybox" || strings.Contains(a, "/") {
			continue
		}
		if err := os.Symlink("busybox", filepath.Join(root, "bin", a)); err != nil && !errors.Is(err, os.ErrExist) {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\n")
	writeFile(t, filepath.Join(root, "etc", "group"), "root:x:0:\n")

	// One tar stream: the small rootfs, then the toolchain under
	// usr/local/go, straight from the host without a copy.
	tarball := filepath.Join(t.TempDir(), "rootfs.tar")
	tarCmd := exec.CommandContext(ctx, "tar", "--numeric-owner", "--owner=0", "--group=0", "-cf", tarball,
		"-C", root, ".", "-C", "/", strings.TrimPrefix(hostGoRoot, "/"))
	if out, err := tarCmd.CombinedOutput(); err != nil {
		t.Fatalf("tar rootfs: %v\n%s", err, out)
	}
	p.must(t, ctx, "import",
		"--change", "ENV PATH=/usr/local/go/bin:/bin",
		"--change", "ENV HOME=/root",
		"--change", "ENV GOTOOLCHAIN=local",
		"--change", "LABEL "+builderLabel+"="+goVersion,
		tarball, builderImage)
	t.Logf("builder image %s made from busybox-static and %s in %s", builderImage, goVersion, time.Since(start).Round(time.Second))
}

// staticELF reports whether the executable name needs no dynamic loader
// (no PT_INTERP program header): only such binaries run in the builder.
func staticELF(t *testing.T, name string) bool {
	t.Helper()
	f, err := elf.Open(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	if _, err := os.Stat(filepath.Join(root, "Dockerfile.scratch")); err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return root
}

// fixture is the workdir mounted read-only at /workdirs/01.
const (
	needle     = "SMOKE-NEEDLE-7f3a"
	mainGo     = "package main\n\n// " + needle + "\nfunc main() {}\n"
	hiddenText = "API_KEY=" + needle + "\n"
	idRSAText  = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + needle + "\n-----END OPENSSH PRIVATE KEY-----\n"
)

func makeFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"README.md":   "# Fixture\n\nThe container smoke test reads this.\n",
		"src/main.go": mainGo,
		".notes.txt":  hiddenText,
		".env":        hiddenText,
		"id_rsa":      idRSAText,
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, content)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	// t.TempDir is 0700 root: the server runs as 10001 and must be able to
	// read the workdir, as an operator's would be.
	for _, d := range []string{dir, filepath.Join(dir, "src")} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The read-write workdir, mounted at /workdirs/02 as alias scratch.
const (
	scratchAlias  = "scratch"
	scratchReadme = "# Scratch\n\nThe container smoke test writes next to this file.\n"
)

// makeScratch returns a directory the server (uid 10001) can write to,
// holding one root-owned file the writes must leave alone.
func makeScratch(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "README.md"), scratchReadme)
	if err := os.Chown(dir, serverUID, serverUID); err != nil {
		t.Fatalf("chown the rw workdir to %d (the test runs as root): %v", serverUID, err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// snapshot describes every entry under dir (type, permissions, owner,
// content or link target), to show a tree is unchanged.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			desc += fmt.Sprintf(" %d:%d", st.Uid, st.Gid)
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += " " + revision(string(b))
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", dir, err)
	}
	return out
}

// revision is the server's revision of content ("sha256:" and the hex
// SHA-256 of the whole file), computed independently of package fs.
func revision(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestContainerSmoke(t *testing.T) {
	testStart := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	p := newPodman(t)
	t.Log(p.must(t, ctx, "--version"))

	// (b) the builder image, made locally because no registry is reachable.
	ensureBuilder(t, ctx, p)

	// (c) build the image; --format docker keeps HEALTHCHECK (the OCI image
	// format has no field for it).
	buildStart := time.Now()
	iidFile := filepath.Join(t.TempDir(), "iid")
	// --layers=false: with the vfs driver every committed layer is a full
	// copy of the builder's file system (about 0.5 GB), so layer caching
	// cost more time (15-50 s per build) and disk (1 GB per source change)
	// than it saved. Each run downloads the modules again (2 s here); the
	// compiler cache is the Dockerfile's cache mount, kept under TMPDIR.
	p.mustIn(t, ctx, repoRoot(t), "build", "--layers=false", "--pull=never", "--format", "docker",
		"--build-arg", "VERSION=smoke-test", "--iidfile", iidFile,
		"-f", "Dockerfile.scratch", "-t", imageTag, ".")
	buildTime := time.Since(buildStart)
	iid, err := os.ReadFile(iidFile)
	if err != nil {
		t.Fatal(err)
	}
	image := strings.TrimSpace(string(iid))
	size, err := strconv.ParseInt(p.must(t, ctx, "image", "inspect", "--format", "{{.Size}}", image), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s (%.12s) in %s: image size %d bytes (%.2f MB, budget %d MB)", imageTag, strings.TrimPrefix(image, "sha256:"), buildTime.Round(time.Second), size, float64(size)/1e6, maxImageBytes/1_000_000)
	if size > maxImageBytes {
		t.Errorf("image size %d bytes exceeds %d", size, maxImageBytes)
	}
	checkImageConfig(t, ctx, p, image)
	pruneStale(t, ctx, p, buildStart)

	// (d) run it with compose's hardening, a read-only fixture workdir and
	// no tunnel credentials in its environment.
	fixture := makeFixture(t)
	fixtureBefore := snapshot(t, fixture)
	scratch := makeScratch(t)
	// compose mounts ./.empty (holding only the sentinel) at every unset
	// slot; the server must ignore those slots.
	empty := t.TempDir()
	writeFile(t, filepath.Join(empty, ".serverfs-disabled"), "")
	if err := os.Chmod(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	// The client token file as compose mounts its secret: the host file
	// itself, root:10001 mode 0640 (the quick start's one-liner), which the
	// server reads through its gid.
	tokFile := filepath.Join(t.TempDir(), "mcp_token")
	writeFile(t, tokFile, clientToken+"\n")
	if err := os.Chown(tokFile, 0, serverUID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tokFile, 0o640); err != nil {
		t.Fatal(err)
	}
	runArgs := []string{"run", "-d",
		// Docker mounts a compose `tmpfs: /tmp` with mode 1777; podman's
		// default is 0755 root, which the server user could not write.
		"--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,noexec,mode=1777",
		"--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--user", "10001:10001",
		"-p", "127.0.0.1::8000",
		"-e", "SERVERFS_ALLOWED_HOSTS=localhost,127.0.0.1",
		"-v", tokFile + ":/run/secrets/mcp_token:ro",
		"-e", "SERVERFS_AUTH_TOKEN_FILE=/run/secrets/mcp_token",
		"-e", "WORKDIR_01_ALIAS=fixture",
		"-e", "WORKDIR_01_READ_ONLY=true",
		"-v", fixture + ":/workdirs/01:ro",
		// compose's variable for a rw slot: WORKDIR_02_READ_ONLY=false
		// drives both the mount and the server's mode.
		"-e", "WORKDIR_02_ALIAS=" + scratchAlias,
		"-e", "WORKDIR_02_READ_ONLY=false",
		"-v", scratch + ":/workdirs/02:rw",
	}
	for n := 3; n <= 16; n++ {
		runArgs = append(runArgs, "-v", fmt.Sprintf("%s:/workdirs/%02d:ro", empty, n))
	}
	runArgs = append(runArgs, image)
	id := p.must(t, ctx, runArgs...)
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
		defer ccancel()
		if t.Failed() {
			cmd := exec.CommandContext(cctx, p.bin, "logs", id)
			cmd.Env = p.env
			logs, _ := cmd.CombinedOutput()
			t.Logf("container logs:\n%s", logs)
		}
		if _, err := p.run(cctx, "rm", "-f", "-t", "2", id); err != nil {
			t.Errorf("removing container %.12s: %v", id, err)
		}
	})
	t.Logf("container %.12s started", id)

	addr := publishedAddr(t, ctx, p, id)
	cs := connect(t, ctx, p, id, "http://"+addr+"/mcp")
	refusedWithoutToken(t, ctx, "http://"+addr+"/mcp")

	// (e) the MCP chain and the refusals, from the host.
	mcpChain(t, ctx, cs, fixture)
	writeChain(t, ctx, cs, fixture, scratch)
	if after := snapshot(t, fixture); !maps.Equal(after, fixtureBefore) {
		t.Errorf("the ro fixture changed:\nbefore %v\nafter  %v", fixtureBefore, after)
	}
	if v := p.must(t, ctx, "exec", id, "/serverfs", "version"); !strings.HasPrefix(v, "serverfs smoke-test ") {
		t.Errorf("serverfs version in the image = %q, want the stamped version smoke-test", v)
	}

	// (f) selfcheck, healthcheck and environment inside the container.
	selfcheck(t, ctx, p, id)
	waitHealthy(t, ctx, p, id)
	env := p.must(t, ctx, "inspect", "--format", "{{json .Config.Env}}", id)
	var vars []string
	if err := json.Unmarshal([]byte(env), &vars); err != nil {
		t.Fatalf("container env %s: %v", env, err)
	}
	for _, v := range vars {
		if strings.HasPrefix(v, "CONTROL_PLANE_") || strings.Contains(v, "_PATH=") || strings.Contains(v, apiKeyCanary) {
			t.Errorf("container environment holds %s", strings.SplitN(v, "=", 2)[0])
		}
	}
	t.Logf("container environment: %d variables, no CONTROL_PLANE_API_KEY", len(vars))
	t.Logf("timings: image build %s, whole test %s", buildTime.Round(time.Second), time.Since(testStart).Round(time.Second))
}

func (p *podman) mustIn(t *testing.T, ctx context.Context, dir string, args ...string) string {
	t.Helper()
	out, err := p.runIn(ctx, dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pruneStale removes images of earlier runs that lost their tag when this
// run's build took it (about 10 MB each). Only images older than this build
// go, so a concurrent run's image is left alone.
func pruneStale(t *testing.T, ctx context.Context, p *podman, buildStart time.Time) {
	t.Helper()
	out, err := p.run(ctx, "image", "prune", "-f", "--filter", "until="+strconv.FormatInt(buildStart.Unix(), 10))
	if err != nil {
		t.Logf("pruning stale images (not fatal): %v", err)
		return
	}
	if out != "" {
		t.Logf("pruned %d stale image(s) of earlier runs", len(strings.Split(out, "\n")))
	}
}

// checkImageConfig asserts the user, port, entrypoint and healthcheck the
// image carries, and that the final stage holds nothing but the binary and
// its two mount points.
func checkImageConfig(t *testing.T, ctx context.Context, p *podman, image string) {
	t.Helper()
	var cfg []struct {
		Config struct {
			User         string
			ExposedPorts map[string]any
			Entrypoint   []string
			Env          []string
		}
		HealthCheck *struct {
			Test        []string
			Interval    int64
			Timeout     int64
			StartPeriod int64
			Retries     int
		} `json:"HealthCheck"`
		RootFS struct{ Layers []string }
	}
	out := p.must(t, ctx, "image", "inspect", image)
	if err := json.Unmarshal([]byte(out), &cfg); err != nil || len(cfg) != 1 {
		t.Fatalf("image inspect: %v\n%s", err, out)
	}
	c := cfg[0]
	if c.Config.User != "10001:10001" {
		t.Errorf("image user %q, want 10001:10001", c.Config.User)
	}
	if _, ok := c.Config.ExposedPorts["8000/tcp"]; !ok || len(c.Config.ExposedPorts) != 1 {
		t.Errorf("exposed ports %v, want 8000/tcp", c.Config.ExposedPorts)
	}
	if strings.Join(c.Config.Entrypoint, " ") != "/serverfs serve" {
		t.Errorf("entrypoint %q", c.Config.Entrypoint)
	}
	hc := c.HealthCheck
	switch {
	case hc == nil:
		t.Error("image has no healthcheck (built without --format docker?)")
	case strings.Join(hc.Test, " ") != "CMD /serverfs healthcheck" ||
		time.Duration(hc.Interval) != 10*time.Second || time.Duration(hc.Timeout) != 3*time.Second ||
		time.Duration(hc.StartPeriod) != 5*time.Second || hc.Retries != 5:
		t.Errorf("healthcheck %+v", *hc)
	}
}

// publishedAddr returns the host address podman published port 8000 on.
func publishedAddr(t *testing.T, ctx context.Context, p *podman, id string) string {
	t.Helper()
	out := p.must(t, ctx, "port", id, "8000/tcp")
	addr := strings.TrimSpace(strings.Split(out, "\n")[0])
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "" || port == "0" {
		t.Fatalf("published address %q: want 127.0.0.1:PORT (%v)", out, err)
	}
	return addr
}

// tokenRT adds one header to every request, as the tunnel's
// MCP_EXTRA_HEADERS does.
type tokenRT struct{ name, value string }

func (h tokenRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.name != "" {
		r.Header.Set(h.name, h.value)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func tokenClient(name, value string) *http.Client {
	return &http.Client{Transport: tokenRT{name, value}}
}

// refusedWithoutToken: the image answers 401 with the coded body to an
// initialize without the token, with a wrong one, or with it in
// Authorization.
func refusedWithoutToken(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	for _, h := range []tokenRT{{}, {tokenHeader, "x" + clientToken[1:]}, {"Authorization", "Bearer " + clientToken}} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := tokenClient(h.name, h.value).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), `"message":"UNAUTHORIZED: `) {
			t.Errorf("header %q: status %d, body %.200s", h.name, resp.StatusCode, b)
		}
	}
}

// connect polls until the server answers an MCP initialize through the
// published port, failing early if the container exits.
func connect(t *testing.T, ctx context.Context, p *podman, id, url string) *sdk.ClientSession {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	client := sdk.NewClient(&sdk.Implementation{Name: "serverfs-container-smoke", Version: "0"}, nil)
	start := time.Now()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		cs, err := client.Connect(cctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: tokenClient(tokenHeader, clientToken), MaxRetries: -1}, nil)
		ccancel()
		if err == nil {
			// A 2026-07-28 client mirrors the workdir argument as
			// Mcp-Param-Workdir, which the server requires, only for
			// tools it has listed: list them as a host does.
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			t.Cleanup(func() { cs.Close() })
			t.Logf("MCP session up after %s", time.Since(start).Round(time.Millisecond))
			return cs
		}
		state, serr := p.run(ctx, "inspect", "--format", "{{.State.Status}}", id)
		if serr == nil && state != "running" && state != "created" {
			t.Fatalf("container is %s before the server answered: %v", state, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no MCP session at %s within 30s: %v", url, err)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func call(t *testing.T, ctx context.Context, cs *sdk.ClientSession, tool string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// decode calls tool and decodes its structured result into a T.
func decode[T any](t *testing.T, ctx context.Context, cs *sdk.ClientSession, tool string, args map[string]any) T {
	t.Helper()
	res := call(t, ctx, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", tool, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: structured content %s: %v", tool, b, err)
	}
	return v
}

func mcpChain(t *testing.T, ctx context.Context, cs *sdk.ClientSession, fixtureDir string) {
	t.Helper()
	wds := decode[struct {
		Workdirs []struct{ Alias, Mode string }
	}](t, ctx, cs, "list_workdirs", nil)
	modes := map[string]string{}
	for _, w := range wds.Workdirs {
		modes[w.Alias] = w.Mode
	}
	if len(wds.Workdirs) != 2 || modes["fixture"] != "ro" || modes[scratchAlias] != "rw" {
		t.Fatalf("list_workdirs = %+v, want fixture ro and %s rw", wds, scratchAlias)
	}

	// A listing maps each name to its size (a file), "dir", "symlink" or
	// "other".
	ls := decode[struct {
		Entries map[string]any
	}](t, ctx, cs, "list_directory", map[string]any{"workdir": "fixture"})
	got := map[string]string{}
	for name, v := range ls.Entries {
		switch v := v.(type) {
		case float64:
			got[name] = "file"
		case string:
			got[name] = v
		default:
			got[name] = fmt.Sprintf("%T", v)
		}
	}
	for name, typ := range map[string]string{"README.md": "file", "src": "dir", "link": "symlink"} {
		if got[name] != typ {
			t.Errorf("list_directory: %s is %q, want %q (entries %v)", name, got[name], typ, got)
		}
	}
	for _, name := range []string{".notes.txt", ".env", "id_rsa"} {
		if _, ok := got[name]; ok {
			t.Errorf("list_directory shows %s", name)
		}
	}

	// find_files groups matches by directory: {"src": ["main.go"]}.
	found := decode[struct {
		Matches  map[string][]string
		Returned int
	}](t, ctx, cs, "find_files", map[string]any{"workdir": "fixture", "pattern": "*.go"})
	if found.Returned != 1 || len(found.Matches) != 1 || len(found.Matches["src"]) != 1 || found.Matches["src"][0] != "main.go" {
		t.Errorf("find_files *.go = %+v, want src/main.go", found.Matches)
	}

	// The needle is also in the hidden file and the key: only main.go may
	// match.
	// search_text groups matching lines by file: {"src/main.go": [[3, text]]}.
	sr := decode[struct {
		Matches  map[string][][2]any
		Returned int
	}](t, ctx, cs, "search_text", map[string]any{"workdir": "fixture", "query": needle, "include_ignored": true})
	if m := sr.Matches["src/main.go"]; sr.Returned != 1 || len(sr.Matches) != 1 || len(m) != 1 || m[0][0] != float64(3) {
		t.Errorf("search_text = %+v, want src/main.go:3 only", sr.Matches)
	}

	rd := decode[struct{ Content string }](t, ctx, cs, "read_text_file", map[string]any{"workdir": "fixture", "path": "src/main.go"})
	if rd.Content != mainGo {
		t.Errorf("read_text_file content %q, want %q", rd.Content, mainGo)
	}

	st := decode[struct {
		Type string
		Size *int64
	}](t, ctx, cs, "stat_file", map[string]any{"workdir": "fixture", "path": "src/main.go"})
	if st.Type != "file" || st.Size == nil || *st.Size != int64(len(mainGo)) {
		t.Errorf("stat_file = %+v, want a file of %d bytes", st, len(mainGo))
	}

	for _, c := range []struct {
		tool, path, want string
	}{
		{"read_text_file", ".notes.txt", "HIDDEN_PATH_NOT_ALLOWED: fixture:/.notes.txt"},
		{"stat_file", ".notes.txt", "HIDDEN_PATH_NOT_ALLOWED: fixture:/.notes.txt"},
		{"read_text_file", ".env", "DENIED_PATH: fixture:/.env"},
		{"read_text_file", "id_rsa", "DENIED_PATH: fixture:/id_rsa"},
		{"stat_file", "id_rsa", "DENIED_PATH: fixture:/id_rsa"},
		{"read_text_file", "link/passwd", "SYMLINK_NOT_ALLOWED: fixture:/link"},
		{"list_directory", "link", "SYMLINK_NOT_ALLOWED: fixture:/link"},
		{"read_text_file", "../x", "PATH_OUTSIDE_WORKDIR: ../x climbs above"},
		{"list_directory", "..", "PATH_OUTSIDE_WORKDIR: .. climbs above"},
		{"read_text_file", "/etc/passwd", "INVALID_PATH"},
	} {
		res := call(t, ctx, cs, c.tool, map[string]any{"workdir": "fixture", "path": c.path})
		msg := text(res)
		switch {
		case !res.IsError:
			t.Errorf("%s %q succeeded: %.200s", c.tool, c.path, msg)
		case !strings.HasPrefix(msg, c.want):
			t.Errorf("%s %q: %q, want prefix %q", c.tool, c.path, msg, c.want)
		case strings.Contains(msg, "/workdirs") || strings.Contains(msg, fixtureDir) || strings.Contains(msg, needle) || strings.Contains(msg, "root:"):
			t.Errorf("%s %q leaks: %q", c.tool, c.path, msg)
		}
	}
}

// writeResult is the structured result of every write tool.
type writeResult struct {
	Workdir, Path, Action, Revision, Diff string
	FromPath                              string `json:"from_path"`
	Size                                  *int64
}

// toolError calls tool, which must fail with a message starting with want
// and naming no container or host path.
func toolError(t *testing.T, ctx context.Context, cs *sdk.ClientSession, tool string, args map[string]any, want string, hostDirs ...string) string {
	t.Helper()
	res := call(t, ctx, cs, tool, args)
	msg := text(res)
	switch {
	case !res.IsError:
		t.Errorf("%s %v succeeded: %.300s", tool, args, msg)
	case !strings.HasPrefix(msg, want):
		t.Errorf("%s %v: %q, want prefix %q", tool, args, msg, want)
	}
	for _, d := range append(hostDirs, "/workdirs") {
		if strings.Contains(msg, d) {
			t.Errorf("%s %v leaks %s: %q", tool, args, d, msg)
		}
	}
	return msg
}

// noTemporaries fails if a write left one of its .serverfs-tmp-* files.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	for rel := range snapshot(t, dir) {
		if strings.HasPrefix(filepath.Base(rel), ".serverfs-tmp-") {
			t.Errorf("temporary file %s left in the rw workdir", rel)
		}
	}
}

// hostContent fails unless the file rel of the rw workdir holds exactly
// want and belongs to the server's user.
func hostContent(t *testing.T, dir, rel, want string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("on the host: %v", err)
	}
	if string(b) != want {
		t.Errorf("on the host %s holds %q, want %q", rel, b, want)
	}
	if fi, err := os.Stat(p); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && (st.Uid != serverUID || st.Gid != serverUID) {
			t.Errorf("on the host %s belongs to %d:%d, want the server's %d:%d", rel, st.Uid, st.Gid, serverUID, serverUID)
		}
	}
}

// writeChain drives the write tools in the real image: the
// revision-guarded cycle on the rw workdir, checked on the host, and the
// refusal on the ro one.
func writeChain(t *testing.T, ctx context.Context, cs *sdk.ClientSession, fixtureDir, scratchDir string) {
	t.Helper()
	scratchBefore := snapshot(t, scratchDir)

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"list_workdirs", "list_directory", "find_files", "search_text", "read_text_file", "stat_file",
		"write_text_file", "edit_text_file", "create_directory", "move_path", "delete_path"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}

	// The ro workdir refuses every change before looking at the path.
	const roCode = "WORKDIR_READ_ONLY: "
	toolError(t, ctx, cs, "write_text_file", map[string]any{"workdir": "fixture", "path": "new.txt", "content": "x\n"}, roCode, fixtureDir)
	toolError(t, ctx, cs, "write_text_file", map[string]any{"workdir": "fixture", "path": "src/main.go", "content": "x\n", "expected_revision": revision(mainGo)}, roCode, fixtureDir)
	toolError(t, ctx, cs, "delete_path", map[string]any{"workdir": "fixture", "path": "README.md", "expected_revision": revision("# Fixture\n\nThe container smoke test reads this.\n")}, roCode, fixtureDir)
	toolError(t, ctx, cs, "create_directory", map[string]any{"workdir": "fixture", "path": "made"}, roCode, fixtureDir)

	// Create: no expected_revision.
	const (
		path     = "notes/todo.md"
		created  = "# Todo\n\n- build the image\n- run the smoke test\n"
		edited   = "# Todo\n\n- build the image\n- run the write tools\n"
		moveDest = "notes/done.md"
	)
	mk := decode[writeResult](t, ctx, cs, "create_directory", map[string]any{"workdir": scratchAlias, "path": "notes"})
	if mk.Action != "created_directory" {
		t.Errorf("create_directory notes: %+v", mk)
	}
	if fi, err := os.Stat(filepath.Join(scratchDir, "notes")); err != nil || !fi.IsDir() {
		t.Fatalf("on the host notes is not a directory: %v", err)
	}
	wr := decode[writeResult](t, ctx, cs, "write_text_file", map[string]any{"workdir": scratchAlias, "path": path, "content": created})
	if wr.Workdir != scratchAlias || wr.Path != path || wr.Action != "created" || wr.Revision != revision(created) ||
		wr.Size == nil || *wr.Size != int64(len(created)) || !strings.HasPrefix(wr.Diff, "--- /dev/null\n+++ b/"+path+"\n") {
		t.Errorf("write_text_file (create) = %+v, want action created, revision %s, size %d and a diff from /dev/null", wr, revision(created), len(created))
	}
	hostContent(t, scratchDir, path, created)

	// Read returns the revision; an edit with it succeeds.
	rd := decode[struct{ Content, Revision string }](t, ctx, cs, "read_text_file", map[string]any{"workdir": scratchAlias, "path": path})
	if rd.Content != created || rd.Revision != wr.Revision {
		t.Fatalf("read_text_file = %+v, want the written content with revision %s", rd, wr.Revision)
	}
	ed := decode[writeResult](t, ctx, cs, "edit_text_file", map[string]any{"workdir": scratchAlias, "path": path, "expected_revision": rd.Revision,
		"edits": []map[string]any{{"old_text": "- run the smoke test\n", "new_text": "- run the write tools\n"}}})
	if ed.Action != "edited" || ed.Revision != revision(edited) || ed.Revision == rd.Revision ||
		ed.Size == nil || *ed.Size != int64(len(edited)) || !strings.Contains(ed.Diff, "-- run the smoke test\n+- run the write tools\n") {
		t.Errorf("edit_text_file = %+v, want action edited, revision %s and the diff of the change", ed, revision(edited))
	}
	hostContent(t, scratchDir, path, edited)

	// A stale revision changes nothing and names the current one.
	msg := toolError(t, ctx, cs, "edit_text_file", map[string]any{"workdir": scratchAlias, "path": path, "expected_revision": rd.Revision,
		"edits": []map[string]any{{"old_text": "# Todo", "new_text": "# Stale"}}}, "REVISION_MISMATCH: ", scratchDir)
	if !strings.Contains(msg, ed.Revision) {
		t.Errorf("REVISION_MISMATCH %q does not name the current revision %s", msg, ed.Revision)
	}
	toolError(t, ctx, cs, "write_text_file", map[string]any{"workdir": scratchAlias, "path": path, "content": "overwrite\n"}, "REVISION_MISMATCH: ", scratchDir)
	hostContent(t, scratchDir, path, edited)
	noTemporaries(t, scratchDir)

	// Move, then delete with the current revision (required for a file).
	mv := decode[writeResult](t, ctx, cs, "move_path", map[string]any{"workdir": scratchAlias, "source": path, "destination": moveDest, "expected_revision": ed.Revision})
	if mv.Action != "moved" || mv.Path != moveDest || mv.FromPath != path {
		t.Errorf("move_path = %+v", mv)
	}
	if _, err := os.Lstat(filepath.Join(scratchDir, filepath.FromSlash(path))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("on the host %s still exists after the move: %v", path, err)
	}
	hostContent(t, scratchDir, moveDest, edited)
	toolError(t, ctx, cs, "delete_path", map[string]any{"workdir": scratchAlias, "path": moveDest}, "INVALID_ARGUMENT: ", scratchDir)
	toolError(t, ctx, cs, "delete_path", map[string]any{"workdir": scratchAlias, "path": moveDest, "expected_revision": rd.Revision}, "REVISION_MISMATCH: ", scratchDir)
	hostContent(t, scratchDir, moveDest, edited)
	del := decode[writeResult](t, ctx, cs, "delete_path", map[string]any{"workdir": scratchAlias, "path": moveDest, "expected_revision": ed.Revision})
	if del.Action != "deleted" {
		t.Errorf("delete_path %s = %+v", moveDest, del)
	}
	if _, err := os.Lstat(filepath.Join(scratchDir, filepath.FromSlash(moveDest))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("on the host %s still exists after delete_path: %v", moveDest, err)
	}
	if del := decode[writeResult](t, ctx, cs, "delete_path", map[string]any{"workdir": scratchAlias, "path": "notes"}); del.Action != "deleted" {
		t.Errorf("delete_path notes = %+v", del)
	}

	// Back where it started: only the seed file, untouched, no temporary.
	noTemporaries(t, scratchDir)
	if after := snapshot(t, scratchDir); !maps.Equal(after, scratchBefore) {
		t.Errorf("the rw workdir after the chain:\n%v\nwant it as before:\n%v", after, scratchBefore)
	}
	t.Logf("write tools: create, read, edit, stale edit refused, move, delete on %s; ro workdir refused; host file system checked", scratchAlias)
}

func selfcheck(t *testing.T, ctx context.Context, p *podman, id string) {
	t.Helper()
	out, err := p.run(ctx, "exec", id, "/serverfs", "selfcheck")
	if err != nil {
		if strings.Contains(err.Error(), "unknown command") {
			t.Fatalf("the image's serverfs has no selfcheck subcommand yet: %v", err)
		}
		t.Fatalf("selfcheck reports a hardening failure: %v", err)
	}
	t.Logf("selfcheck:\n%s", out)
	for _, want := range []string{
		"uid 10001 gid 10001",
		"root filesystem is read-only",
		"workdir fixture",
		"configuration is valid: 2 workdir(s)",
		"ok    clients: every request must carry the client token in " + tokenHeader,
		"info  workdir " + scratchAlias + " (slot 02, mode rw): writable by this process (read-write mount)",
		"no hardening failure",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("selfcheck output lacks %q", want)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "workdir fixture") && (!strings.Contains(line, "not writable") || !strings.Contains(line, "read-only mount")) {
			t.Errorf("selfcheck does not report the fixture workdir as read-only: %q", line)
		}
		if strings.HasPrefix(line, "FAIL") {
			t.Errorf("selfcheck: %s", line)
		}
	}
}

// waitHealthy runs the image's healthcheck until podman reports the
// container healthy, or fails after a deadline.
func waitHealthy(t *testing.T, ctx context.Context, p *podman, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	start := time.Now()
	for {
		out, err := p.run(ctx, "healthcheck", "run", id)
		status, _ := p.run(ctx, "inspect", "--format", "{{.State.Health.Status}}", id)
		if err == nil && status == "healthy" {
			t.Logf("healthcheck: %s after %s", status, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("container not healthy within 30s: status %q, healthcheck run: %q %v", status, out, err)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
