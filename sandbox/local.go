package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tender-grader/tender/internal/scratch"
)

// NotIsolated marks every result and log line of the local backend.
const NotIsolated = "local backend: not isolated"

// ErrNotTrusted is returned when the local backend is asked for without the explicit trust
// flag (--trust-local-execution).
var ErrNotTrusted = errors.New(
	"the local backend runs code on this machine without isolation; it needs --trust-local-execution",
)

// Local runs a check as a subprocess of the grader, in a fresh temporary directory, with
// the same environment allowlist and output caps as Docker, its own process group killed at
// the deadline, and nothing else: no network, memory, pids or disk limit, and no isolation
// from the host's files. It is for trusted fixtures only. It never reports Result.Killed: a
// process killed from outside and one that killed itself leave the same wait status.
type Local struct {
	// Log receives one line per check, each starting with NotIsolated. Nil discards.
	Log io.Writer
	// TempDir is where per-check directories are made; empty means os.TempDir().
	TempDir string
	// KillGrace is how long output may keep draining after the process group is killed.
	KillGrace time.Duration

	mu       sync.Mutex
	leftover map[string]bool // per-check directories a Run could not remove
}

// NewLocal refuses unless trusted is true.
func NewLocal(trusted bool) (*Local, error) {
	if !trusted {
		return nil, ErrNotTrusted
	}
	return &Local{KillGrace: 2 * time.Second}, nil
}

// Name is "local".
func (l *Local) Name() string { return "local" }

func (l *Local) logf(format string, args ...any) {
	if l.Log != nil {
		fmt.Fprintf(l.Log, NotIsolated+": "+format+"\n", args...)
	}
}

// Run copies the workspace and support trees into a new temporary directory, runs the
// command there under the deadline, and removes the directory.
func (l *Local) Run(ctx context.Context, spec Spec) (*Result, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	lim := spec.Limits.WithDefaults()
	root, err := scratch.MkdirTemp(l.TempDir, "tender-local-")
	if err != nil {
		return nil, fmt.Errorf("%s: temp dir: %w", NotIsolated, err)
	}
	defer l.removeRoot(root)
	lay := NewLayout(filepath.Join(root, "workspace"), filepath.Join(root, "tender"))
	if err := prepareLocal(spec, lay); err != nil {
		return nil, err
	}
	l.logf("running %s: %q", spec.Name, spec.Command)
	res := &Result{Backend: "local", Isolated: false, Notice: NotIsolated}
	if err := l.execute(ctx, spec, lim, lay, res); err != nil {
		return nil, err
	}
	res.JUnit, res.JUnitTooLarge = readLocalJUnit(lay.JUnit)
	l.logf("%s: %s after %s", spec.Name, res.Outcome(), res.Wall.Round(time.Millisecond))
	return res, nil
}

// removeRoot deletes a check's directory, or keeps it for Close to try again.
func (l *Local) removeRoot(root string) {
	if scratch.Remove(root) == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.leftover == nil {
		l.leftover = map[string]bool{}
	}
	l.leftover[root] = true
}

// Close removes the per-check directories a Run could not remove, and names those that
// remain. Processes need no cleanup here: each Run kills its process group before it
// returns (a child that called setsid has left the group, and is out of reach).
func (l *Local) Close(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for root := range l.leftover {
		if err := scratch.Remove(root); err != nil {
			errs = append(errs, fmt.Errorf("%s: remove %s: %w", NotIsolated, root, err))
			continue
		}
		delete(l.leftover, root)
	}
	return errors.Join(errs...)
}

func prepareLocal(spec Spec, lay Layout) error {
	if err := copyTree(spec.Workspace, lay.Workspace, spec.Links); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCopyIn, spec.Name, err)
	}
	if spec.Support != "" {
		if err := copyTree(spec.Support, lay.Tender, nil); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrCopyIn, spec.Name, err)
		}
	}
	for _, d := range []string{lay.Tender + "/out", lay.Home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrCopyIn, spec.Name, err)
		}
	}
	return nil
}

// execute runs the setup commands, the plant step and the command, one after another, under
// one deadline. The local backend has no second user: the evaluator's files are written as
// the workspace always is, and the plant step runs as the grader's own user.
func (l *Local) execute(ctx context.Context, spec Spec, lim Limits, lay Layout, res *Result) error {
	dctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	stdout, stderr := NewCapWriter(lim.OutputBytes), NewCapWriter(lim.OutputBytes)
	defer func() { res.Stdout, res.Stderr = stdout.Capture(), stderr.Capture() }()
	start := time.Now()
	defer func() { res.Wall = time.Since(start) }()
	for _, argv := range spec.Setup {
		cmd, werr, err := l.runOne(dctx, spec, lay, argv, nil, stderr, stderr)
		if err != nil {
			return err
		}
		if err := l.settle(ctx, dctx, cmd, werr, res); err != nil || res.TimedOut {
			return err
		}
		if res.ExitCode != 0 {
			res.SetupExit = res.ExitCode
			return nil
		}
	}
	stdin := spec.Stdin
	if spec.Plant != nil {
		var err error
		if stdin, err = l.plant(ctx, dctx, spec, lay, stderr, res); err != nil || res.TimedOut {
			return err
		}
	}
	cmd, werr, err := l.runOne(dctx, spec, lay, spec.Command, stdin, stdout, stderr)
	if err != nil {
		return err
	}
	return l.settle(ctx, dctx, cmd, werr, res)
}

// plant runs the Spec's Plant step with its files in {tender}/.step, and returns the command's
// standard input made from what it wrote.
func (l *Local) plant(ctx, dctx context.Context, spec Spec, lay Layout, stderr io.Writer, res *Result) ([]byte, error) {
	dir := filepath.Join(lay.Tender, StepDir)
	defer os.RemoveAll(dir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s: %s: plant step: %w", NotIsolated, spec.Name, err)
	}
	for name, data := range spec.Plant.Files {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), data, 0o600); err != nil {
			return nil, fmt.Errorf("%s: %s: plant step: %w", NotIsolated, spec.Name, err)
		}
	}
	out := NewCapWriter(MaxStepOutput)
	argv := stepArgv(spec.Plant.Command, dir)
	cmd, werr, err := l.runOne(dctx, spec, lay, argv, spec.Plant.Files["stdin"], out, stderr)
	if err != nil {
		return nil, err
	}
	if err := l.settle(ctx, dctx, cmd, werr, res); err != nil || res.TimedOut {
		return nil, err
	}
	got := out.Capture()
	if res.ExitCode != 0 || got.Truncated {
		return nil, fmt.Errorf("%w: %s: %s: the plant step failed (exit %d, %d bytes out)", ErrStep, NotIsolated,
			spec.Name, res.ExitCode, got.Total)
	}
	res.Plant = []byte(got.String())
	stdin, err := spec.Plant.Stdin(res.Plant)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %w", ErrStep, NotIsolated, spec.Name, err)
	}
	return stdin, nil
}

// stepArgv expands {step} in a Step's command.
func stepArgv(argv []string, dir string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = strings.ReplaceAll(a, "{step}", dir)
	}
	return out
}

// runOne runs argv in the workspace in a process group of its own, killed at ctx's end.
func (l *Local) runOne(ctx context.Context, spec Spec, lay Layout, argv []string, stdin []byte,
	stdout, stderr io.Writer) (*exec.Cmd, error, error) {
	argv = lay.Expand(argv)
	bin, err := lookSafePath(argv[0])
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", NotIsolated, spec.Name, err)
	}
	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir, cmd.Env = lay.Workspace, lay.Environ(spec.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = l.KillGrace
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("%s: start %s: %w", NotIsolated, spec.Name, err)
	}
	werr := cmd.Wait()
	_ = killGroup(cmd) // stragglers that outlived the command go too
	return cmd, werr, nil
}

// settle turns the wait outcome into the result: cancellation is an error, the deadline is
// a timeout, anything else is an exit code.
func (l *Local) settle(ctx, dctx context.Context, cmd *exec.Cmd, werr error, res *Result) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: cancelled: %w", NotIsolated, context.Cause(ctx))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru != nil {
		res.PeakMemory = ru.Maxrss * 1024
	}
	if errors.Is(dctx.Err(), context.DeadlineExceeded) {
		res.TimedOut, res.ExitCode = true, -1
		return nil
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) && !errors.Is(werr, exec.ErrWaitDelay) {
		return fmt.Errorf("%s: wait: %w", NotIsolated, werr)
	}
	res.ExitCode = cmd.ProcessState.ExitCode()
	return nil
}

// killGroup kills the command's whole process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// lookSafePath resolves a bare command name against SafePath, never the grader's own PATH.
func lookSafePath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(SafePath) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q is not in %s", name, SafePath)
}

func readLocalJUnit(path string) ([]byte, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	if fi.Size() > MaxJUnitBytes {
		return nil, true
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxJUnitBytes+1))
	if err != nil {
		return nil, false
	}
	if len(b) > MaxJUnitBytes {
		return nil, true
	}
	return b, false
}
