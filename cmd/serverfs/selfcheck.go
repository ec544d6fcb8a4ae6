package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/mcp/transport"
)

// Selfcheck verdicts, padded to one column so the lines align.
const (
	scOK   = "ok    "
	scFail = "FAIL  "
	scWarn = "warn  "
	scInfo = "info  "
)

// selfcheck reports how the process is confined, one line per check, for an
// operator to run inside the container (`docker compose exec serverfs-mcp
// /serverfs selfcheck`) or beside the systemd unit. It loads the
// configuration exactly as serve does. A hardening failure — running as
// root or with the root group, effective capabilities, a writable root
// filesystem, an `ro` workdir this process could write to, an invalid
// configuration — prints a FAIL line and exits 1. Only aliases, slots and
// modes are printed, never a host path.
func selfcheck(args, environ []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("selfcheck", flag.ContinueOnError)
	fset.SetOutput(stderr)
	var flags configFlags
	flags.register(fset)
	if code, ok := parseFlags(fset, args, stdout); !ok {
		return code
	}
	failures := 0
	line := func(verdict, format string, a ...any) {
		if verdict == scFail {
			failures++
		}
		fmt.Fprintf(stdout, verdict+format+"\n", a...)
	}

	fmt.Fprintln(stdout, "serverfs selfcheck", versionString())
	identityLines(line)
	privilegeLines(line)
	filesystemLines(line)

	// Path resolution.
	if sfs.ProbeResolver() == sfs.ResolverOpenat2 {
		line(scOK, "openat2 is available: the kernel resolves every path beneath its workdir root")
	} else {
		line(scWarn, "openat2 is unavailable (old kernel or seccomp filter): using the openat walk, as strict but slower")
	}

	// Workdirs, configured exactly as serve would.
	su, err := configure(environ, flags)
	if err != nil {
		line(scFail, "configuration is invalid:")
		var ce *sfs.ConfigError
		if errors.As(err, &ce) {
			for _, p := range ce.Problems {
				fmt.Fprintln(stdout, "        "+p)
			}
		} else {
			fmt.Fprintln(stdout, "        "+err.Error())
		}
		return summary(stdout, failures)
	}
	cfg, f := su.cfg, su.fs
	defer f.Close()
	line(scOK, "configuration is valid: %d workdir(s)", len(cfg.Workdirs))
	clientsLines(line, su.http)
	for _, wc := range cfg.Workdirs {
		workdirLine(line, f, wc)
	}
	return summary(stdout, failures)
}

// identityLines checks the user and groups the process runs as.
func identityLines(line func(verdict, format string, a ...any)) {
	uid, gid := os.Geteuid(), os.Getegid()
	switch {
	case uid == 0:
		line(scFail, "uid %d gid %d: running as root; run as a dedicated user (compose: SERVERFS_UID/SERVERFS_GID, default 10001:10001; systemd: User=serverfs)", uid, gid)
	case gid == 0:
		line(scFail, "uid %d gid %d: running with the root group; use a dedicated group", uid, gid)
	default:
		line(scOK, "uid %d gid %d", uid, gid)
	}
	if groups, err := os.Getgroups(); err == nil {
		for _, g := range groups {
			if g == 0 && gid != 0 {
				line(scFail, "supplementary group 0 (root) is held: start the process without it")
			}
		}
	}
}

// privilegeLines checks capabilities and privilege escalation.
func privilegeLines(line func(verdict, format string, a ...any)) {
	if eff, err := effectiveCaps(); err != nil {
		line(scWarn, "capabilities cannot be read: %v", err)
	} else if eff != 0 {
		line(scFail, "effective capabilities %#x: drop them all (compose: cap_drop: [ALL]; systemd: CapabilityBoundingSet=)", eff)
	} else {
		line(scOK, "no effective capabilities")
	}
	if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil {
		line(scWarn, "no_new_privs cannot be read: %v", err)
	} else if nnp == 1 {
		line(scOK, "no_new_privs is set")
	} else {
		line(scWarn, "no_new_privs is not set (compose: security_opt no-new-privileges:true; systemd: NoNewPrivileges=yes)")
	}
}

// filesystemLines checks that the root filesystem is read-only and
// reports /tmp.
func filesystemLines(line func(verdict, format string, a ...any)) {
	switch w, why := dirWritable("/"); {
	case w:
		line(scFail, "root filesystem is writable (compose: read_only: true; systemd: ProtectSystem=strict)")
	case why == unix.EROFS:
		line(scOK, "root filesystem is read-only")
	default:
		line(scWarn, "root filesystem is not writable by this process (%s), but it is not mounted read-only", errText(why))
	}
	if w, why := dirWritable("/tmp"); w {
		line(scInfo, "/tmp is writable (a tmpfs is expected there)")
	} else {
		line(scInfo, "/tmp is not writable (%s)", errText(why))
	}
}

// workdirLine checks that a workdir is writable exactly when its mode
// says it may be written.
func workdirLine(line func(verdict, format string, a ...any), f *sfs.FS, wc sfs.WorkdirConfig) {
	w, err := f.Workdir(wc.Alias)
	if err != nil {
		line(scFail, "workdir %s (%s): %v", wc.Alias, wc.Source, err)
		return
	}
	name := fmt.Sprintf("workdir %s (%s, mode %s)", w.Alias(), wc.Source, w.Mode())
	mount := "read-write mount"
	ro, merr := w.ReadOnlyMount()
	switch {
	case merr != nil:
		mount = "mount flags unknown: " + merr.Error()
	case ro:
		mount = "read-only mount"
	}
	writable := w.Writable()
	switch {
	case w.Mode() == sfs.ModeReadOnly && writable:
		line(scFail, "%s: writable by this process (%s); mount it read-only", name, mount)
	case w.Mode() == sfs.ModeReadOnly:
		line(scOK, "%s: not writable by this process (%s)", name, mount)
	case writable:
		line(scInfo, "%s: writable by this process (%s)", name, mount)
	default:
		line(scWarn, "%s: not writable by this process (%s)", name, mount)
	}
}

func summary(w io.Writer, failures int) int {
	if failures > 0 {
		fmt.Fprintf(w, "selfcheck: %d hardening failure(s)\n", failures)
		return 1
	}
	fmt.Fprintln(w, "selfcheck: no hardening failure")
	return 0
}

// dirWritable tries to create (O_CREAT|O_EXCL, never following a link) and
// remove a uniquely named file in dir. It returns true if that succeeded,
// otherwise the errno (EROFS for a read-only mount).
func dirWritable(dir string) (bool, error) {
	var b [8]byte
	rand.Read(b[:])
	name := strings.TrimSuffix(dir, "/") + "/.serverfs-selfcheck-" + hex.EncodeToString(b[:])
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false, err
	}
	unix.Close(fd)
	unix.Unlink(name)
	return true, nil
}

func errText(err error) string {
	switch err {
	case unix.EACCES, unix.EPERM:
		return "permission denied"
	case unix.ENOENT:
		return "it does not exist"
	case unix.EROFS:
		return "read-only mount"
	}
	return err.Error()
}

// effectiveCaps returns the process's effective capability set.
func effectiveCaps() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, err
	}
	return uint64(data[1].Effective)<<32 | uint64(data[0].Effective), nil
}

// clientsLines reports who can connect (docs/security.md, "Who can reach the
// server"): a listener without the client token is a warning, not a
// failure, since Compose's internal network or a 0660 socket may be all
// the operator wants.
func clientsLines(line func(verdict, format string, a ...any), c transport.Config) {
	for _, w := range c.Warnings {
		line(scWarn, "%s", w)
	}
	switch {
	case c.Network == "unix" && c.AuthToken.Set():
		line(scOK, "clients: a unix socket of mode %04o, and the client token in %s", transport.SocketMode, transport.AuthHeader)
	case c.Network == "unix":
		line(scOK, "clients: a unix socket of mode %04o: only its owner and its group can connect", transport.SocketMode)
	case c.AuthToken.Set():
		line(scOK, "clients: every request must carry the client token in %s", transport.AuthHeader)
	default:
		line(scWarn, "clients: no client token (SERVERFS_AUTH_TOKEN_FILE): whoever can connect to %s can use the server", c.Listen)
	}
}
