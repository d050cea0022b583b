package sandbox

import (
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"time"
)

// Spec describes one check. Backends expand the tokens {workspace}, {tender}, {junit} and
// {assets} inside Command elements (a plain string replace, no shell) and export them as
// TENDER_WORKSPACE, TENDER_DIR, TENDER_JUNIT and TENDER_ASSETS.
type Spec struct {
	RunID     string // labels the run's verifiers, e.g. the container label tender.run
	Name      string // e.g. "pairid/target", for logs and container names
	Image     string // Docker only
	Workspace string // host directory streamed (never mounted) to {workspace}
	// Links are the workspace's symlinks (slash path -> target): on the host each is a regular
	// file that holds its target (git's core.symlinks=false); the backend makes it a link
	// inside the verifier, after every file, and refuses one that leaves the tree.
	Links   map[string]string
	Support string            // optional host directory streamed to {tender}: assets/, configs
	Command []string          // argv, run with cwd {workspace}
	Stdin   []byte            // written to the command's standard input, which is then closed; nil: none
	Env     map[string]string // the whole environment besides TENDER_*, PATH and HOME
	Limits  Limits

	// Setup are commands run one after another as the verifier user before Command, with no
	// standard input and their output on stderr, while the evaluator's files do not exist yet.
	// The first that fails ends the check (Result.SetupExit). Then every process of the
	// verifier user is killed, and the check goes no further while one lives
	// (Result.SetupLeftover): nothing a setup command started can touch what comes next.
	Setup [][]string
	// Evaluator lists the workspace's files that are the evaluator's (slash-separated, relative
	// to Workspace: restored paths, the test patch's files, hidden assets). Backends that can
	// write them as another user than the verifier's, after Setup, read-only to it, do so (see
	// Owners), together with the directories that lead to them.
	Evaluator []string
	// Plant runs once the evaluator's files are in place, before Command, as Tender's own user
	// where the backend has one (root inside a container, which no process of the verifier
	// user outlives Setup to reach). Its standard output becomes Command's standard input
	// through Plant.Stdin, and Result.Plant.
	Plant *Step
	// StdinFirst says that Command reads nothing of the workspace, and runs none of its code,
	// until its standard input has ended: Tender's pytest bootstrap, which imports pytest while
	// it waits for its configuration. Without Setup, a backend may then start Command as soon
	// as the verifier runs, while the workspace is written and Plant runs, and write its
	// standard input once Plant's output made it.
	StdinFirst bool
}

// Step is a program of Tender's that runs inside the verifier before the check's command.
type Step struct {
	// Command is its argv; {step} expands to the private directory that holds Files.
	Command []string
	// Files are written under {step}, readable by Tender's user alone; "stdin", when present,
	// is the step's standard input.
	Files map[string][]byte
	// Stdin makes the check command's standard input from the step's standard output (which
	// is at most MaxStepOutput bytes). An error fails the check's infrastructure.
	Stdin func(out []byte) ([]byte, error)
}

// MaxStepOutput caps what a Step may write to its standard output.
const MaxStepOutput = 16 << 20

// StepDir is where a backend puts a Step's files, under {tender}; it removes them once the step ran.
const StepDir = ".step"

// Limits bound one check. Zero fields take the values of DefaultLimits.
type Limits struct {
	Timeout     time.Duration
	CPUs        float64 // NanoCPUs = CPUs * 1e9
	Memory      int64   // bytes; swap is set equal, so there is none
	Pids        int64
	DiskBytes   int64 // size cap of each tmpfs: {workspace}, {tender} and /tmp
	OutputBytes int64 // cap per stream: head and tail kept, total counted
}

// DefaultLimits fill the zero fields of a Spec's Limits. It is a function, not a variable,
// so no importer can change the defaults of every other caller.
func DefaultLimits() Limits {
	return Limits{
		Timeout:     10 * time.Minute,
		CPUs:        1,
		Memory:      2 << 30,
		Pids:        512,
		DiskBytes:   1 << 30,
		OutputBytes: 1 << 20,
	}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedEnv are set by the backend and may not be overridden by a suite.
var reservedEnv = map[string]bool{"PATH": true, "HOME": true}

// Validate checks what every backend needs before it starts anything. Errors wrap
// ErrBadSpec.
func (s Spec) Validate() error {
	if len(s.Command) == 0 || s.Command[0] == "" {
		return fmt.Errorf("%w: %s: command is empty", ErrBadSpec, s.Name)
	}
	if s.Workspace == "" {
		return fmt.Errorf("%w: %s: workspace directory is not set", ErrBadSpec, s.Name)
	}
	if s.RunID == "" {
		return fmt.Errorf("%w: %s: run id is not set", ErrBadSpec, s.Name)
	}
	for _, argv := range s.Setup {
		if len(argv) == 0 || argv[0] == "" {
			return fmt.Errorf("%w: %s: a setup command is empty", ErrBadSpec, s.Name)
		}
	}
	if s.Plant != nil && (len(s.Plant.Command) == 0 || s.Plant.Command[0] == "" || s.Plant.Stdin == nil) {
		return fmt.Errorf("%w: %s: the plant step needs a command and a Stdin function", ErrBadSpec, s.Name)
	}
	for _, f := range s.Evaluator {
		if !fs.ValidPath(f) || f == "." {
			return fmt.Errorf("%w: %s: evaluator path %q is not a clean relative path", ErrBadSpec, s.Name, f)
		}
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

// WithDefaults fills the zero fields from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
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

// ShellQuote quotes argv for sh: each element single-quoted, joined by spaces. It is how an
// argv of the suite's reaches a shell script of a backend or the grader, with no expansion.
func ShellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
