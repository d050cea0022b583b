package sandbox

import (
	"context"
	"fmt"
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
	// temporary directories) and releases the backend. It ignores ctx's cancellation, and
	// anything it waits on (an engine) is bounded by a timeout of its own, so an
	// interrupted grade still cleans up. Call it once, after the last Run has returned.
	Close(ctx context.Context) error
}

var _ Backend = (*Local)(nil)

// Preparer is a Backend that can get a check ready before it runs: create and fill its
// verifier, and run what comes before the check's deadline starts. A caller prepares the next
// check while the current one runs. Prepare's ctx must stay live until Release: the prepared
// check goes on using it (an early-started command is attached on it).
type Preparer interface {
	Backend
	Prepare(ctx context.Context, spec Spec) (Prepared, error)
}

// Prepared is a check whose verifier is ready and whose command has not been given its
// standard input. Run runs it at most once, as Backend.Run would have; Release removes what
// Prepare made, and is called once, whether or not Run was. No command of the check's reads
// its input, or runs the workspace's code, before Run.
type Prepared interface {
	Run(ctx context.Context) (*Result, error)
	Release()
}

// Prepare gets spec ready on b: by b's own Prepare when it has one, or else a check that Run
// runs on b from the start.
func Prepare(ctx context.Context, b Backend, spec Spec) (Prepared, error) {
	if p, ok := b.(Preparer); ok {
		return p.Prepare(ctx, spec)
	}
	return &later{b: b, spec: spec}, nil
}

// later is a check prepared by a backend that cannot prepare: it all happens in Run.
type later struct {
	b    Backend
	spec Spec
}

func (l *later) Run(ctx context.Context) (*Result, error) { return l.b.Run(ctx, l.spec) }
func (l *later) Release()                                 {}

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
	Killed         bool // the container died of a signal Tender did not send (not its deadline, not memory)
	PidsLimitHit   bool // a fork failed because the pids limit was reached
	DiskFull       bool // a tmpfs reached its size cap
	ImageID        string
	Backend        string // "docker" or "local"
	Isolated       bool   // false for the local backend
	Notice         string // "local backend: not isolated" for the local backend
	// SetupExit is the exit code of the first setup command that failed; the command and the
	// tests did not run. 0 when every setup command passed, or there was none.
	SetupExit int
	// SetupLeftover: a process of the verifier user outlived the setup commands and every kill;
	// the command did not run.
	SetupLeftover bool
	// Plant is what the Spec's Plant step wrote to its standard output.
	Plant []byte
}

// Ran reports whether the check's command ran: no setup command failed or left a process.
func (r *Result) Ran() bool { return r.SetupExit == 0 && !r.SetupLeftover }

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
