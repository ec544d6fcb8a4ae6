package fs

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/serverfs/serverfs/internal/settings"

	"golang.org/x/sys/unix"
)

// Slots is the number of workdir slots in container mode (WORKDIR_01 ..
// WORKDIR_16).
const Slots = settings.Slots

// DisabledSentinel is the reserved file name that marks an unused slot: the
// compose file mounts the repository's .empty directory, which holds it, at
// every slot whose WORKDIR_NN_PATH is unset.
const DisabledSentinel = ".serverfs-disabled"

// DefaultWorkdirsRoot is where compose mounts the slots.
const DefaultWorkdirsRoot = "/workdirs"

// aliasRE is the alias rule: a letter or digit, then letters, digits,
// _ and -, as operators name workdirs in URLs and logs.
var aliasRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`)

// maxDescriptionBytes bounds WORKDIR_NN_DESCRIPTION.
const maxDescriptionBytes = 1024

// Limits are the operator-set bounds every operation honours.
type Limits struct {
	MaxReadBytes         int           // SERVERFS_MAX_READ_BYTES: bytes of text one read returns
	MaxReadLines         int           // SERVERFS_MAX_READ_LINES: lines one read returns
	DefaultListLimit     int           // SERVERFS_DEFAULT_LIST_LIMIT
	MaxListEntries       int           // SERVERFS_MAX_LIST_ENTRIES: entries one listing page returns
	DefaultSearchResults int           // SERVERFS_DEFAULT_SEARCH_RESULTS (find and search)
	MaxSearchResults     int           // SERVERFS_MAX_SEARCH_RESULTS
	MaxWalkEntries       int           // SERVERFS_MAX_WALK_ENTRIES: directory entries one walk may read
	SearchTimeout        time.Duration // SERVERFS_SEARCH_TIMEOUT_SECONDS
	SearchMaxFileBytes   int64         // SERVERFS_SEARCH_MAX_FILE_BYTES
	MaxWriteBytes        int           // SERVERFS_MAX_WRITE_BYTES: largest file a write creates or changes, and has a revision
	ImageMaxBytes        int           // SERVERFS_IMAGE_MAX_BYTES: the encoded size of an image shown to the model
}

// DefaultLimits returns the documented defaults (docs/limits.md).
func DefaultLimits() Limits {
	return Limits{
		MaxReadBytes:         512 << 10,
		MaxReadLines:         500,
		DefaultListLimit:     100,
		MaxListEntries:       500,
		DefaultSearchResults: 50,
		MaxSearchResults:     100,
		MaxWalkEntries:       200_000,
		SearchTimeout:        15 * time.Second,
		SearchMaxFileBytes:   50 << 20,
		MaxWriteBytes:        1 << 20,
		ImageMaxBytes:        1 << 20,
	}
}

// limitVar is one numeric limit variable and where it goes; its bounds
// are the settings table's.
type limitVar struct {
	name string
	set  func(*Limits, int64)
}

// bounds is the variable's row of the settings table.
func (v limitVar) bounds() settings.Var {
	b, _ := settings.Lookup(v.name)
	return b
}

var limitVars = []limitVar{
	{"SERVERFS_MAX_READ_BYTES", func(l *Limits, v int64) { l.MaxReadBytes = int(v) }},
	{"SERVERFS_MAX_READ_LINES", func(l *Limits, v int64) { l.MaxReadLines = int(v) }},
	{"SERVERFS_DEFAULT_LIST_LIMIT", func(l *Limits, v int64) { l.DefaultListLimit = int(v) }},
	{"SERVERFS_MAX_LIST_ENTRIES", func(l *Limits, v int64) { l.MaxListEntries = int(v) }},
	{"SERVERFS_DEFAULT_SEARCH_RESULTS", func(l *Limits, v int64) { l.DefaultSearchResults = int(v) }},
	{"SERVERFS_MAX_SEARCH_RESULTS", func(l *Limits, v int64) { l.MaxSearchResults = int(v) }},
	{"SERVERFS_MAX_WALK_ENTRIES", func(l *Limits, v int64) { l.MaxWalkEntries = int(v) }},
	{"SERVERFS_SEARCH_TIMEOUT_SECONDS", func(l *Limits, v int64) { l.SearchTimeout = time.Duration(v) * time.Second }},
	{"SERVERFS_SEARCH_MAX_FILE_BYTES", func(l *Limits, v int64) { l.SearchMaxFileBytes = v }},
	{"SERVERFS_MAX_WRITE_BYTES", func(l *Limits, v int64) { l.MaxWriteBytes = int(v) }},
	{"SERVERFS_IMAGE_MAX_BYTES", func(l *Limits, v int64) { l.ImageMaxBytes = int(v) }},
}

// WorkdirConfig is one configured workdir. The host path is unexported and
// never printed: only Source ("slot 03" or "--workdir projects") names it.
type WorkdirConfig struct {
	Alias       string
	Description string
	Mode        Mode
	// RepoOps enables the repository tools on the workdir
	// (WORKDIR_NN_REPO_OPS_ENABLED, or ":repo" on --workdir).
	RepoOps bool
	// SearchFetch: ChatGPT's search and fetch tools cover the workdir
	// (SERVERFS_SEARCH_FETCH, or --search-fetch).
	SearchFetch bool
	// URLTemplate is where citations of its files point
	// (WORKDIR_NN_URL_TEMPLATE, or --url-template); nil:
	// serverfs://alias/path.
	URLTemplate *URLTemplate
	Source      string
	hostPath    string
}

// String describes the workdir without its host path, so that printing a
// WorkdirConfig with %v or %+v cannot leak it.
func (w WorkdirConfig) String() string {
	return fmt.Sprintf("%s (%s, %s)", w.Alias, w.Source, w.Mode)
}

// GoString is String for %#v.
func (w WorkdirConfig) GoString() string { return "fs.WorkdirConfig{" + w.String() + "}" }

// Config is the validated configuration of the filesystem layer.
type Config struct {
	Workdirs       []WorkdirConfig
	Limits         Limits
	AllowHidden    bool
	ExtraDenyGlobs []string
}

// ConfigError lists every configuration problem found, one line each. No
// line contains a host path.
type ConfigError struct {
	Problems []string
}

func (e *ConfigError) Error() string {
	return "invalid configuration:\n  " + strings.Join(e.Problems, "\n  ")
}

// Flags are the bare-metal command-line configuration: repeatable
// --workdir ALIAS=/abs/path[:ro|:rw][:repo], --description ALIAS=TEXT and
// --url-template ALIAS=TEMPLATE values, and --search-fetch.
type Flags struct {
	Workdirs     []string
	Descriptions []string
	URLTemplates []string
	// SearchFetch is --search-fetch's value: "" (not given), "true",
	// "false" or a comma-separated list of aliases, as
	// SERVERFS_SEARCH_FETCH takes.
	SearchFetch string
}

// WorkdirSyntax is the --workdir value's syntax, as usage texts and
// messages show it.
const WorkdirSyntax = "ALIAS=/abs/path[:ro|:rw][:repo]"

// LoadConfig is LoadConfigFlags with --workdir values only.
func LoadConfig(environ []string, workdirFlags []string) (*Config, error) {
	return LoadConfigFlags(environ, Flags{Workdirs: workdirFlags})
}

// LoadConfigFlags validates the environment (a list of "KEY=value", as from
// os.Environ) and the bare-metal flags, and returns the configuration or a
// *ConfigError with every problem at once.
//
// With no --workdir flags the 16 container slots are read
// ($SERVERFS_WORKDIRS_ROOT/NN, WORKDIR_NN_*), and each slot's
// .serverfs-disabled sentinel is checked (an empty, disabled, missing
// or mounted slot). With
// flags the slots are not used, and any WORKDIR_NN_* variable present is a
// problem naming it; descriptions then come from --description.
func LoadConfigFlags(environ []string, flags Flags) (*Config, error) {
	workdirFlags := flags.Workdirs
	env := settings.EnvMap(environ)
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }

	cfg := &Config{Limits: DefaultLimits()}
	checkVariableNames(env, add)

	for _, v := range limitVars {
		raw, ok := env[v.name]
		if !ok || raw == "" {
			continue
		}
		b := v.bounds()
		n, err := settings.ParseLimit(raw, b.Min, b.Max)
		if err != "" {
			add("%s=%q: %s", v.name, displaySetting(raw), err)
			continue
		}
		v.set(&cfg.Limits, n)
	}
	// A default the operator did not set follows a lowered maximum; two
	// explicit values that contradict each other are a problem.
	if cfg.Limits.DefaultListLimit > cfg.Limits.MaxListEntries && env["SERVERFS_DEFAULT_LIST_LIMIT"] == "" {
		cfg.Limits.DefaultListLimit = cfg.Limits.MaxListEntries
	}
	if cfg.Limits.DefaultSearchResults > cfg.Limits.MaxSearchResults && env["SERVERFS_DEFAULT_SEARCH_RESULTS"] == "" {
		cfg.Limits.DefaultSearchResults = cfg.Limits.MaxSearchResults
	}
	if cfg.Limits.DefaultListLimit > cfg.Limits.MaxListEntries {
		add("SERVERFS_DEFAULT_LIST_LIMIT (%d) is larger than SERVERFS_MAX_LIST_ENTRIES (%d)", cfg.Limits.DefaultListLimit, cfg.Limits.MaxListEntries)
	}
	if cfg.Limits.DefaultSearchResults > cfg.Limits.MaxSearchResults {
		add("SERVERFS_DEFAULT_SEARCH_RESULTS (%d) is larger than SERVERFS_MAX_SEARCH_RESULTS (%d)", cfg.Limits.DefaultSearchResults, cfg.Limits.MaxSearchResults)
	}

	if raw, ok := env["SERVERFS_ALLOW_HIDDEN"]; ok && raw != "" {
		switch strings.ToLower(raw) {
		case "true":
			cfg.AllowHidden = true
		case "false":
		default:
			add("SERVERFS_ALLOW_HIDDEN=%q: must be true or false", displaySetting(raw))
		}
	}
	if raw := env["SERVERFS_EXTRA_DENY_GLOBS"]; strings.TrimSpace(raw) != "" {
		for _, g := range strings.Split(raw, ",") {
			g = strings.TrimSpace(g)
			if g == "" {
				continue
			}
			if _, err := NewPolicy(false, []string{g}); err != nil {
				add("SERVERFS_EXTRA_DENY_GLOBS: %v", err)
				continue
			}
			cfg.ExtraDenyGlobs = append(cfg.ExtraDenyGlobs, g)
		}
	}

	if len(workdirFlags) > 0 {
		for _, k := range slotVarsPresent(env) {
			add("%s is set, but --workdir flags are in use: WORKDIR_NN_* variables configure the container slots; unset it (a --workdir takes its description from --description ALIAS=TEXT)", k)
		}
		cfg.Workdirs = loadFlagWorkdirs(workdirFlags, add)
		applyDescriptions(cfg.Workdirs, workdirFlags, flags.Descriptions, add)
		applyURLTemplates(cfg.Workdirs, workdirFlags, flags.URLTemplates, add)
	} else {
		if len(flags.Descriptions) > 0 {
			add("--description is for --workdir workdirs; a container slot takes WORKDIR_NN_DESCRIPTION")
		}
		if len(flags.URLTemplates) > 0 {
			add("--url-template is for --workdir workdirs; a container slot takes WORKDIR_NN_URL_TEMPLATE")
		}
		root := env["SERVERFS_WORKDIRS_ROOT"]
		if root == "" {
			root = DefaultWorkdirsRoot
		}
		if !filepath.IsAbs(root) {
			add("SERVERFS_WORKDIRS_ROOT must be an absolute path")
		} else {
			cfg.Workdirs = loadSlots(env, filepath.Clean(root), add)
		}
	}

	if len(cfg.Workdirs) == 0 && len(probs) == 0 {
		add("no workdir is configured: set WORKDIR_01_ALIAS (and WORKDIR_01_PATH for compose), or pass --workdir ALIAS=/abs/path")
	}
	seen := map[string]string{}
	for _, w := range cfg.Workdirs {
		if first, dup := seen[w.Alias]; dup {
			add("%s: alias %q is already used by %s; aliases must be unique", w.Source, w.Alias, first)
			continue
		}
		seen[w.Alias] = w.Source
	}
	applySearchFetch(cfg.Workdirs, env["SERVERFS_SEARCH_FETCH"], flags.SearchFetch, add)
	if len(probs) > 0 {
		return nil, &ConfigError{Problems: probs}
	}
	return cfg, nil
}

// slotVar is slot n's variable of a suffix (WORKDIR_03_ALIAS).
func slotVar(n int, suffix string) string { return settings.SlotVar(n, suffix) }

// slotVarsPresent lists, sorted, the well-formed slot variables
// (WORKDIR_NN_ with a known suffix and slot) set in env, even to "".
// Malformed ones are checkVariableNames' to report.
func slotVarsPresent(env map[string]string) []string {
	var out []string
	for k := range env {
		m := slotVarRE.FindStringSubmatch(k)
		if _, known := settings.Lookup(k); m == nil || !known || len(m[1]) != 2 {
			continue
		}
		if n, err := strconv.Atoi(m[1]); err == nil && n >= 1 && n <= Slots {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// applySearchFetch turns ChatGPT's search and fetch tools on for the
// workdirs SERVERFS_SEARCH_FETCH or --search-fetch name: "true" (every
// workdir), "false" or empty (none), or a comma-separated list of aliases.
func applySearchFetch(workdirs []WorkdirConfig, env, flag string, add func(string, ...any)) {
	source, raw := "SERVERFS_SEARCH_FETCH", env
	switch {
	case flag != "" && env != "":
		add("SERVERFS_SEARCH_FETCH and --search-fetch are both set: use one")
		return
	case flag != "":
		source, raw = "--search-fetch", flag
	}
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "", "false":
		return
	case "true":
		for i := range workdirs {
			workdirs[i].SearchFetch = true
		}
		return
	}
	seen := map[string]bool{}
	for _, a := range strings.Split(raw, ",") {
		a = strings.TrimSpace(a)
		if !aliasRE.MatchString(a) {
			add("%s=%q: must be true, false or a comma-separated list of workdir aliases", source, displaySetting(raw))
			return
		}
		if seen[a] {
			continue
		}
		seen[a] = true
		found := false
		for i := range workdirs {
			if workdirs[i].Alias == a {
				workdirs[i].SearchFetch, found = true, true
			}
		}
		if !found {
			add("%s: no workdir has the alias %q", source, a)
		}
	}
}

// applyURLTemplates sets the citation URL templates of --workdir
// workdirs from --url-template ALIAS=TEMPLATE values, checked as
// WORKDIR_NN_URL_TEMPLATE is.
func applyURLTemplates(workdirs []WorkdirConfig, workdirFlags, specs []string, add func(string, ...any)) {
	applyAliasValues(workdirs, workdirFlags, specs, "--url-template", "ALIAS=TEMPLATE", add,
		func(source, text string) (func(*WorkdirConfig), bool) {
			t, err := ParseURLTemplate(text)
			if err != nil {
				add("%s: the template %v", source, err)
				return nil, false
			}
			return func(w *WorkdirConfig) { w.URLTemplate = t }, true
		})
}

// applyDescriptions sets the descriptions of --workdir workdirs from
// --description ALIAS=TEXT values. An alias no --workdir value names is a
// problem; one whose --workdir was refused already has its own.
func applyDescriptions(workdirs []WorkdirConfig, workdirFlags, descs []string, add func(string, ...any)) {
	applyAliasValues(workdirs, workdirFlags, descs, "--description", "ALIAS=TEXT", add,
		func(source, text string) (func(*WorkdirConfig), bool) {
			if !checkDescription(source, text, add) {
				return nil, false
			}
			return func(w *WorkdirConfig) { w.Description = text }, true
		})
}

// applyAliasValues is the one parser of repeatable flag ALIAS=VALUE values
// for --workdir workdirs: each value needs a valid alias, given once,
// that a --workdir names, and a VALUE that parse accepts (parse reports
// its own problem under source); the setter parse returns is applied to
// every workdir with that alias.
func applyAliasValues(workdirs []WorkdirConfig, workdirFlags, specs []string, flag, syntax string, add func(string, ...any),
	parse func(source, text string) (func(*WorkdirConfig), bool)) {
	named := map[string]bool{}
	for _, spec := range workdirFlags {
		alias, _, _ := strings.Cut(spec, "=")
		named[alias] = true
	}
	seen := map[string]bool{}
	for i, spec := range specs {
		alias, text, ok := strings.Cut(spec, "=")
		source := fmt.Sprintf("%s #%d", flag, i+1)
		if !ok {
			add("%s: expected %s", source, syntax)
			continue
		}
		if !checkAlias(source, alias, add) {
			continue
		}
		source = flag + " " + alias
		if seen[alias] {
			add("%s: given twice", source)
			continue
		}
		seen[alias] = true
		set, ok := parse(source, text)
		if !ok {
			continue
		}
		if !named[alias] {
			add("%s: no --workdir has the alias %q", source, alias)
			continue
		}
		for j := range workdirs {
			if workdirs[j].Alias == alias {
				set(&workdirs[j])
			}
		}
	}
}

var slotVarRE = regexp.MustCompile(`^WORKDIR_([0-9]+)_([A-Z0-9_]+)$`)

// checkVariableNames reports SERVERFS_* and WORKDIR_* variables that look
// like typos: a misspelt limit silently ignored would surprise an operator.
func checkVariableNames(env map[string]string, add func(string, ...any)) {
	for _, p := range settings.Unknown(env) {
		add("%s", p)
	}
}

func displayValue(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// displaySetting is displayValue for configuration values that are never
// valid with a '/' (aliases, modes, numbers, booleans): such a value is
// likely a host path put in the wrong variable, so it is not echoed.
func displaySetting(s string) string {
	if strings.Contains(s, "/") {
		return "<not shown: contains '/'>"
	}
	return displayValue(s)
}

func checkAlias(source, alias string, add func(string, ...any)) bool {
	if !aliasRE.MatchString(alias) {
		add("%s: alias %q is invalid: it must match ^[A-Za-z][A-Za-z0-9_-]{0,31}$ (a letter, then up to 31 letters, digits, '_' or '-')", source, displaySetting(alias))
		return false
	}
	return true
}

func checkDescription(source, desc string, add func(string, ...any)) bool {
	switch {
	case len(desc) > maxDescriptionBytes:
		add("%s: description is longer than %d bytes", source, maxDescriptionBytes)
		return false
	case !utf8.ValidString(desc):
		add("%s: description is not valid UTF-8", source)
		return false
	case strings.IndexFunc(desc, unicode.IsControl) >= 0:
		add("%s: description contains control characters (newlines, tabs, ...)", source)
		return false
	}
	return true
}

func parseMode(source, varName, raw string, add func(string, ...any)) (Mode, bool) {
	switch raw {
	case "", "ro":
		return ModeReadOnly, true
	case "rw":
		return ModeReadWrite, true
	}
	add("%s: %s=%q: must be ro or rw", source, varName, displaySetting(raw))
	return "", false
}

// slotMode reads a slot's mode from WORKDIR_NN_MODE (ro/rw) or from
// WORKDIR_NN_READ_ONLY (true/false), the one boolean compose uses for both
// the bind mount's read_only and the server (compose can substitute a
// variable but not map "rw" to false). Both set and disagreeing is a problem.
func slotMode(n int, source string, env map[string]string, add func(string, ...any)) (Mode, bool) {
	mode, ok := parseMode(source, slotVar(n, "MODE"), env[slotVar(n, "MODE")], add)
	raw, set := env[slotVar(n, "READ_ONLY")]
	if !set || raw == "" {
		return mode, ok
	}
	var ro Mode
	switch strings.ToLower(raw) {
	case "true":
		ro = ModeReadOnly
	case "false":
		ro = ModeReadWrite
	default:
		add("%s: %s=%q: must be true or false", source, slotVar(n, "READ_ONLY"), displaySetting(raw))
		return "", false
	}
	if env[slotVar(n, "MODE")] != "" && ok && mode != ro {
		add("%s: %s=%s and %s=%s disagree", source, slotVar(n, "MODE"), mode, slotVar(n, "READ_ONLY"), raw)
		return "", false
	}
	return ro, ok
}

func loadSlots(env map[string]string, root string, add func(string, ...any)) []WorkdirConfig {
	var out []WorkdirConfig
	for n := 1; n <= Slots; n++ {
		source := fmt.Sprintf("slot %02d", n)
		alias := env[slotVar(n, "ALIAS")]
		desc := env[slotVar(n, "DESCRIPTION")]
		mode, modeOK := slotMode(n, source, env, add)
		repoOps := false
		switch raw := env[slotVar(n, "REPO_OPS_ENABLED")]; strings.ToLower(raw) {
		case "", "false":
		case "true":
			repoOps = true
		default:
			add("%s: %s=%q: must be true or false", source, slotVar(n, "REPO_OPS_ENABLED"), displaySetting(raw))
		}
		dir := filepath.Join(root, fmt.Sprintf("%02d", n))

		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err != nil {
			if err == unix.ENOENT {
				if alias != "" {
					add("%s: WORKDIR_%02d_ALIAS is set but nothing is mounted at the slot", source, n)
				}
				continue // nothing mounted and no alias: the slot is unused
			}
			add("%s: the slot directory cannot be inspected: %v", source, err)
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			add("%s: the slot is not a directory", source)
			continue
		}
		sentinel, clash, err := slotSentinel(dir)
		if err != nil {
			add("%s: the slot directory cannot be read: %v", source, err)
			continue
		}
		switch {
		case alias == "" && sentinel: // case A: disabled
			continue
		case alias != "" && sentinel && clash: // reserved-name clash
			add("%s: the mounted directory contains %s, a file name ServerFS reserves for unused slots; rename it", source, DisabledSentinel)
			continue
		case alias != "" && sentinel: // case B
			add("%s: WORKDIR_%02d_ALIAS=%q is set but WORKDIR_%02d_PATH is not (the slot holds the empty placeholder)", source, n, displaySetting(alias), n)
			continue
		case alias == "": // case C
			add("%s: a directory is mounted at the slot but WORKDIR_%02d_ALIAS is empty; set an alias or unset WORKDIR_%02d_PATH", source, n, n)
			continue
		}
		// case D: enabled
		ok := checkAlias(source, alias, add)
		ok = checkDescription(source, desc, add) && ok
		var tmpl *URLTemplate
		if raw := env[slotVar(n, "URL_TEMPLATE")]; raw != "" {
			var err error
			if tmpl, err = ParseURLTemplate(raw); err != nil {
				add("%s: %s: the template %v", source, slotVar(n, "URL_TEMPLATE"), err)
				ok = false
			}
		}
		if ok && modeOK {
			out = append(out, WorkdirConfig{Alias: alias, Description: desc, Mode: mode, RepoOps: repoOps, URLTemplate: tmpl, Source: source, hostPath: dir})
		}
	}
	return out
}

// slotSentinel reports whether dir holds the sentinel, and whether it also
// holds anything else (then it is a real directory that happens to use the
// reserved name, not the empty placeholder).
func slotSentinel(dir string) (sentinel, clash bool, err error) {
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(dir, DisabledSentinel), &st); err != nil {
		if err == unix.ENOENT {
			return false, false, nil
		}
		return false, false, err
	}
	names, err := readDirNames(dir, 2)
	if err != nil {
		return true, false, err
	}
	return true, len(names) > 1, nil
}

// badSuffix returns the ":word" a --workdir path that does not exist ends
// in, when the word holds no '/' (so it is not part of a directory name):
// ":wr", ":RW", or ":repo" placed before the mode.
func badSuffix(path string) string {
	i := strings.LastIndexByte(path, ':')
	if i < 0 || i == len(path)-1 || strings.Contains(path[i:], "/") {
		return ""
	}
	return path[i:]
}

func loadFlagWorkdirs(flags []string, add func(string, ...any)) []WorkdirConfig {
	var out []WorkdirConfig
	for i, spec := range flags {
		alias, rest, ok := strings.Cut(spec, "=")
		source := fmt.Sprintf("--workdir #%d", i+1)
		if !ok {
			add("%s: expected %s", source, WorkdirSyntax)
			continue
		}
		if aliasRE.MatchString(alias) {
			source = "--workdir " + alias
		}
		mode, repoOps := ModeReadOnly, false
		if p, ok := strings.CutSuffix(rest, ":repo"); ok {
			rest, repoOps = p, true
		}
		if p, ok := strings.CutSuffix(rest, ":rw"); ok {
			rest, mode = p, ModeReadWrite
		} else if p, ok := strings.CutSuffix(rest, ":ro"); ok {
			rest = p
		}
		aliasOK := checkAlias(source, alias, add)
		if !filepath.IsAbs(rest) {
			add("%s: the path must be absolute", source)
			continue
		}
		dir := filepath.Clean(rest)
		if dir == "/" {
			add("%s: refusing to expose the filesystem root; choose a narrower directory", source)
			continue
		}
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err != nil {
			if suffix := badSuffix(rest); err == unix.ENOENT && suffix != "" {
				// A mistyped mode, not a missing directory.
				if suffix == ":ro" || suffix == ":rw" || suffix == ":repo" {
					add("%s: suffix %q is out of order: the mode (:ro or :rw) comes first, then optionally :repo (%s)", source, suffix, WorkdirSyntax)
				} else {
					add("%s: unknown suffix %q: the accepted suffixes are :ro or :rw, then optionally :repo (%s)", source, suffix, WorkdirSyntax)
				}
				continue
			}
			add("%s: the path cannot be used: %v", source, err)
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			add("%s: the path is not a directory", source)
			continue
		}
		if sentinel, _, err := slotSentinel(dir); err != nil {
			add("%s: the directory cannot be read: %v", source, err)
			continue
		} else if sentinel {
			add("%s: the directory contains %s, a file name ServerFS reserves for unused slots; rename it", source, DisabledSentinel)
			continue
		}
		if aliasOK {
			out = append(out, WorkdirConfig{Alias: alias, Mode: mode, RepoOps: repoOps, Source: source, hostPath: dir})
		}
	}
	return out
}
