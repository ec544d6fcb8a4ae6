package git

import (
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
	"golang.org/x/sys/unix"
)

// Configuration and the files it names.
//
// Two kinds of configuration file exist here, and they are trusted
// differently. The operator's own files (system /etc/gitconfig, the global
// $XDG_CONFIG_HOME/git/config and ~/.gitconfig, and what they include)
// belong to whoever runs the server: the files they name (core.excludesFile,
// core.attributesFile, include.path) are read as host paths. The
// repository's .git/config, and what it includes, may have been written by
// an agent or come with a hostile clone: a file it names is read only when
// it is a relative path that stays beneath the workdir root, and then only
// through the resolver (fs.Control: beneath the root, no symlink followed,
// regular files only, non-blocking). A repository can therefore never make
// the server open a host path, a FIFO or a device.
//
// Every host file is opened O_NONBLOCK|O_NOCTTY, must be a regular file of
// at most maxConfigBytes (before and after opening), and is read within
// hostReadTimeout; anything else counts as absent.

// maxIncludeDepth is git's limit on nested include.path directives.
const maxIncludeDepth = 10

// hostReadTimeout bounds reading one operator file.
const hostReadTimeout = 2 * time.Second

// configLayer is one configuration file, in git's order (later layers win
// for single values).
type configLayer struct {
	c *gitconfig.Config
	// repo is true for the repository's .git/config and the files it
	// includes: what they name is confined to the workdir root.
	repo bool
	// dir is the directory of the file, for relative include paths: a
	// host directory for the operator's files, a slash path beneath the
	// root for the repository's.
	dir string
}

// operatorConfigs are the system and user configuration files git reads
// before the repository's, in its order, each followed by the files it
// includes. They belong to the operator (the server's own environment),
// not to the workdir.
func operatorConfigs() []configLayer {
	var files []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, "/etc/gitconfig")
	}
	if x := xdgConfigHome(); x != "" {
		files = append(files, filepath.Join(x, "git", "config"))
	}
	if h := os.Getenv("HOME"); h != "" {
		files = append(files, filepath.Join(h, ".gitconfig"))
	}
	var out []configLayer
	for _, name := range files {
		out = appendHostConfig(out, name, 0)
	}
	return out
}

// appendHostConfig appends the operator's config file name and, after it,
// the files it includes.
func appendHostConfig(out []configLayer, name string, depth int) []configLayer {
	c := parseConfig(readHostFile(name))
	if c == nil {
		return out
	}
	l := configLayer{c: c, dir: filepath.Dir(name)}
	out = append(out, l)
	if depth >= maxIncludeDepth {
		return out
	}
	for _, p := range includePaths(c) {
		if p = expandHome(p); p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(l.dir, p)
		}
		out = appendHostConfig(out, p, depth+1)
	}
	return out
}

// appendRepoConfig appends the repository's config file name (a slash
// path beneath the root) and the files it includes that stay beneath the
// root.
func (r *Repo) appendRepoConfig(out []configLayer, c *gitconfig.Config, name string, depth int) []configLayer {
	l := configLayer{c: c, repo: true, dir: path.Dir(name)}
	out = append(out, l)
	if depth >= maxIncludeDepth {
		return out
	}
	for _, p := range includePaths(c) {
		rel, ok := repoRelative(l.dir, p)
		if !ok {
			continue
		}
		b, err := r.readControl(rel)
		if err != nil {
			continue // absent, not a regular file, too large: as git, skip it
		}
		if inc := parseConfig(b); inc != nil {
			out = r.appendRepoConfig(out, inc, rel, depth+1)
		}
	}
	return out
}

// includePaths are the include.path values of c, in order. Conditional
// includes (includeIf) are not followed: their conditions (gitdir:,
// onbranch:, hasconfig:) are not evaluated here.
func includePaths(c *gitconfig.Config) []string {
	if !c.HasSection("include") {
		return nil
	}
	return c.Section("include").OptionAll("path")
}

// repoRelative turns a path named by repository configuration into a
// clean slash path beneath the workdir root, relative to dir ("" for the
// root itself, ".git" for .git/config). Absolute paths, "~" paths and
// paths leaving the root are refused (ok false): the repository does not
// get to name host files.
func repoRelative(dir, p string) (string, bool) {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.IndexByte(p, 0) >= 0 || strings.Contains(p, `\`) {
		return "", false
	}
	rel := path.Clean(path.Join(dir, p))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") {
		return "", false
	}
	return rel, true
}

// expandHome expands a leading "~/" (or a lone "~") to $HOME, as git's
// pathname values do; "~user/" forms are not expanded ("").
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		h := os.Getenv("HOME")
		if h == "" {
			return ""
		}
		return filepath.Join(h, p[1:])
	}
	if strings.HasPrefix(p, "~") {
		return ""
	}
	return p
}

func parseConfig(b []byte) *gitconfig.Config {
	if b == nil {
		return nil
	}
	c := gitconfig.New()
	if gitconfig.NewDecoder(bytes.NewReader(b)).Decode(c) != nil {
		return nil
	}
	return c
}

// configFile returns the content of the file a pathname setting
// (core.excludesFile, core.attributesFile) names, from the layer whose
// value wins, or of def (an operator host path) when none sets it. A
// repository's value is read only beneath the root (relative to the
// work tree's top, where git runs); any other value of it reads nothing.
// nil when absent or unusable.
func (r *Repo) configFile(section, key, def string) []byte {
	for i := len(r.cfg) - 1; i >= 0; i-- {
		v := r.getIn(r.cfg[i].c, section, "", key)
		if v == "" {
			continue
		}
		if p := expandHome(v); !r.cfg[i].repo && filepath.IsAbs(p) {
			return readHostFile(p)
		}
		// A repository's value, or a relative one (relative to the work
		// tree's top, where git runs): beneath the root only.
		return r.readWorkTreeFile(v)
	}
	if def == "" {
		return nil
	}
	return readHostFile(def)
}

// readWorkTreeFile reads the file a relative path names beneath the
// root, through the resolver; nil for any other path or when it cannot be
// read (absent, not a regular file, too large).
func (r *Repo) readWorkTreeFile(p string) []byte {
	rel, ok := repoRelative("", p)
	if !ok {
		return nil
	}
	b, err := r.readControl(rel)
	if err != nil {
		return nil
	}
	return b
}

// readHostFile reads an operator's file (global config, excludes or
// attributes file): a regular file of at most maxConfigBytes, opened
// non-blocking, read within hostReadTimeout. nil when absent, not a
// regular file, too large, slow or unreadable.
func readHostFile(name string) []byte {
	if name == "" || !filepath.IsAbs(name) {
		return nil
	}
	// stat first, so that a device or FIFO is never even opened.
	if st, err := os.Stat(name); err != nil || !st.Mode().IsRegular() || st.Size() > maxConfigBytes {
		return nil
	}
	done := make(chan []byte, 1)
	go func() { done <- readRegularFile(name) }()
	t := time.NewTimer(hostReadTimeout)
	defer t.Stop()
	select {
	case b := <-done:
		return b
	case <-t.C:
		// A regular file on a stuck network or FUSE mount: the read is
		// abandoned (it ends, or not, with the mount); the request goes on
		// without the file.
		return nil
	}
}

func readRegularFile(name string) []byte {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxConfigBytes {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil || len(b) > maxConfigBytes {
		return nil
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

func xdgConfigHome() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return x
	}
	if h := os.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".config")
	}
	return ""
}

// xdgGitFile is $XDG_CONFIG_HOME/git/<name> (git's default excludes and
// attributes files), "" when neither XDG_CONFIG_HOME nor HOME is set.
func xdgGitFile(name string) string {
	if x := xdgConfigHome(); x != "" {
		return filepath.Join(x, "git", name)
	}
	return ""
}
