package sandbox

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Backend runs checks. The caller never needs to know which backend it holds: cleaning up
// is part of the contract.
type Backend interface {
	Name() string
	// Run runs one check. It returns an error only when the infrastructure failed; a check
	// that fails, runs out of memory or times out is a Result.
	Run(ctx context.Context, spec Spec) (*Result, error)
	// Close removes everything the backend started that is still there (containers,
	// temporary directories) and releases the backend. It works on
	// context.WithoutCancel(ctx) under a timeout of its own, so an interrupted grade still
	// cleans up. Call it once, after the last Run has returned.
	Close(ctx context.Context) error
}

var (
	_ Backend = (*Docker)(nil)
	_ Backend = (*Local)(nil)
)

// Spec describes one check. Backends expand the tokens {workspace}, {tender}, {junit} and
// {assets} inside Command elements (a plain string replace, no shell) and export them as
// TENDER_WORKSPACE, TENDER_DIR, TENDER_JUNIT and TENDER_ASSETS.
type Spec struct {
	RunID     string            // label value tender.run=<RunID>; also used by Sweep and RemoveRun
	Name      string            // e.g. "pairid/target", for logs and container names
	Image     string            // Docker only
	Workspace string            // host directory streamed (never mounted) to {workspace}
	Support   string            // optional host directory streamed to {tender}: assets/, configs
	Command   []string          // argv, run with cwd {workspace}
	Env       map[string]string // the whole environment besides TENDER_*, PATH and HOME
	Limits    Limits
}

// Limits bound one check. Zero fields take the values of DefaultLimits.
type Limits struct {
	Timeout     time.Duration
	CPUs        float64 // NanoCPUs = CPUs * 1e9
	Memory      int64   // bytes; swap is set equal, so there is none
	Pids        int64
	DiskBytes   int64 // size cap of each tmpfs: {workspace}, {tender} and /tmp
	OutputBytes int64 // cap per stream: head and tail kept, total counted
}

// DefaultLimits fill the zero fields of a Spec's Limits.
var DefaultLimits = Limits{
	Timeout:     10 * time.Minute,
	CPUs:        1,
	Memory:      2 << 30,
	Pids:        512,
	DiskBytes:   1 << 30,
	OutputBytes: 1 << 20,
}

// MaxJUnitBytes caps the JUnit report read back from a check.
const MaxJUnitBytes = 32 << 20

// Result is what one check did.
type Result struct {
	ExitCode       int
	Stdout, Stderr Capture
	JUnit          []byte // nil when the runner wrote no report, or it exceeded MaxJUnitBytes
	JUnitTooLarge  bool   // the report existed but exceeded MaxJUnitBytes
	Wall           time.Duration
	PeakMemory     int64 // bytes, 0 when the engine does not report it
	OOMKilled      bool
	TimedOut       bool
	PidsLimitHit   bool // a fork failed because the pids limit was reached
	DiskFull       bool // a tmpfs reached its size cap
	ImageID        string
	Backend        string // "docker" or "local"
	Isolated       bool   // false for the local backend
	Notice         string // "local backend: not isolated" for the local backend
}

// Outcome names the result in one word, with OOM and timeout kept apart from a plain failure.
func (r *Result) Outcome() string {
	switch {
	case r.TimedOut:
		return "timeout"
	case r.OOMKilled:
		return "oom"
	case r.ExitCode == 0:
		return "exited_0"
	default:
		return fmt.Sprintf("exited_%d", r.ExitCode)
	}
}

// ErrBadSpec marks a Spec the caller must fix.
var ErrBadSpec = errors.New("invalid sandbox spec")

// SafePath is the only PATH a verifier sees.
const SafePath = "/usr/local/bin:/usr/bin:/bin"

// layout is where the tokens point inside one backend.
type layout struct {
	Workspace, Tender, JUnit, Assets, Home string
}

func layoutUnder(workspace, tender string) layout {
	return layout{
		Workspace: workspace,
		Tender:    tender,
		JUnit:     tender + "/out/junit.xml",
		Assets:    tender + "/assets",
		Home:      tender + "/home",
	}
}

// expand replaces the tokens in every argv element. It is a plain replace: no shell, no
// globbing, no other variables.
func (l layout) expand(argv []string) []string {
	r := strings.NewReplacer("{workspace}", l.Workspace, "{tender}", l.Tender, "{junit}", l.JUnit, "{assets}", l.Assets)
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Replace(a)
	}
	return out
}

// environ is the complete environment of the command: a safe PATH and HOME, the TENDER_*
// variables, and the suite's own variables, sorted. Nothing comes from the host.
func (l layout) environ(extra map[string]string) []string {
	env := []string{
		"PATH=" + SafePath,
		"HOME=" + l.Home,
		"TENDER_WORKSPACE=" + l.Workspace,
		"TENDER_DIR=" + l.Tender,
		"TENDER_JUNIT=" + l.JUnit,
		"TENDER_ASSETS=" + l.Assets,
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedEnv are set by the backend and may not be overridden by a suite.
var reservedEnv = map[string]bool{"PATH": true, "HOME": true}

func (s Spec) validate() error {
	if len(s.Command) == 0 || s.Command[0] == "" {
		return fmt.Errorf("%w: %s: command is empty", ErrBadSpec, s.Name)
	}
	if s.Workspace == "" {
		return fmt.Errorf("%w: %s: workspace directory is not set", ErrBadSpec, s.Name)
	}
	if s.RunID == "" {
		return fmt.Errorf("%w: %s: run id is not set", ErrBadSpec, s.Name)
	}
	for k, v := range s.Env {
		if err := checkEnv(k, v); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrBadSpec, s.Name, err)
		}
	}
	return nil
}

func checkEnv(k, v string) error {
	switch {
	case !envName.MatchString(k):
		return fmt.Errorf("environment name %q is not a plain identifier", k)
	case strings.HasPrefix(k, "TENDER_") || reservedEnv[k]:
		return fmt.Errorf("environment name %q is set by the sandbox and cannot be overridden", k)
	case strings.ContainsRune(v, 0):
		return fmt.Errorf("environment value of %s contains a NUL byte", k)
	}
	return nil
}

// AllowEnv copies the named host variables, and only those, through lookup (os.LookupEnv in
// production). A name that is unset on the host is left out. This is the only way a host
// value reaches a verifier: the suite must name it.
func AllowEnv(names []string, lookup func(string) (string, bool)) (map[string]string, error) {
	out := make(map[string]string, len(names))
	for _, n := range names {
		v, ok := lookup(n)
		if !ok {
			continue
		}
		if err := checkEnv(n, v); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSpec, err)
		}
		out[n] = v
	}
	return out, nil
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.Timeout > 0 {
		d.Timeout = l.Timeout
	}
	if l.CPUs > 0 {
		d.CPUs = l.CPUs
	}
	if l.Memory > 0 {
		d.Memory = l.Memory
	}
	if l.Pids > 0 {
		d.Pids = l.Pids
	}
	if l.DiskBytes > 0 {
		d.DiskBytes = l.DiskBytes
	}
	if l.OutputBytes > 0 {
		d.OutputBytes = l.OutputBytes
	}
	return d
}
