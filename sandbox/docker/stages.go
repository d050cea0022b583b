package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

// Inside a verifier two users share the work. Tender's own (root, with CHOWN and FOWNER alone among
// the capabilities, and no process of the candidate's ever started as it) unpacks the trees,
// owning the evaluator's files, and runs the plant step. The verifier user (65532, with no
// capability, and none it can gain: no-new-privileges) runs the suite's setup commands and
// the tests. A process of the verifier user can neither write nor replace the evaluator's
// files, and no process of it outlives the setup commands.
const tenderUser = "0:0"

// The markers of the stage scripts on their stdout.
const (
	copyDone   = "TENDER-COPY-DONE"
	copyFailed = "TENDER-COPY-FAILED"
	stepOut    = "TENDER-STEP-OUT"
	stepFailed = "TENDER-STEP-FAILED"
)

// unpackFunc defines unpack: it unpacks the tar stream of its stdin into / as root, keeping
// the owners and modes the archive names, then runs the step the archive brought, if any ("$@"
// is its argv; its files are under /tender/.step), in the workspace, and writes on stdout what
// the step printed, framed by its length, then the done marker. Nothing else writes there.
const unpackFunc = `unpack() {
  tar -x -f - -C / --same-owner --numeric-owner --no-overwrite-dir || { echo ` + copyFailed + `; return 1; }
  if [ $# -gt 0 ]; then
    s=/tender/` + sandbox.StepDir + `
    mkdir -p -m 700 $s && { [ -f $s/stdin ] || : >$s/stdin; } || { echo ` + stepFailed + ` 125; return 1; }
    (cd /workspace && "$@") <$s/stdin >$s/out || { echo ` + stepFailed + ` $?; return 1; }
    echo ` + stepOut + ` $(wc -c <$s/out)
    cat $s/out
    rm -rf $s
  fi
  echo ` + copyDone + `
}
`

// receiveScript is the container's main process under docker-init: it unpacks what the
// container is created with, then idles so execs can run the check and read the report. The
// engine creates the working directory (the workspace's mount point) 0755 whatever the
// tmpfs's mode says, so its mode is set here first.
const receiveScript = `chmod 1777 /workspace /tender || { echo ` + copyFailed + `; exec sleep infinity; }
` + unpackFunc + `unpack "$@"
exec sleep infinity`

// evaluatorScript unpacks the evaluator's files after the setup commands, in an exec.
const evaluatorScript = unpackFunc + `unpack "$@"`

// stageReader collects a stage script's stdout and says when its last marker came.
type stageReader struct {
	buf  bytes.Buffer
	seen chan struct{}
	done bool
}

func newStageReader() *stageReader { return &stageReader{seen: make(chan struct{})} }

func (r *stageReader) Write(p []byte) (int, error) {
	if r.done {
		return len(p), nil
	}
	if r.buf.Len()+len(p) > sandbox.MaxStepOutput+4096 {
		r.finish()
		return len(p), nil
	}
	r.buf.Write(p)
	if _, _, err := parseStage(r.buf.Bytes()); err == nil || !errors.Is(err, errStageShort) {
		r.finish()
	}
	return len(p), nil
}

func (r *stageReader) finish() {
	if !r.done {
		r.done = true
		close(r.seen)
	}
}

var errStageShort = errors.New("the stage's output has not ended")

// parseStage reads a stage script's stdout: its marker (copyDone, copyFailed or stepFailed),
// and what the step printed. errStageShort means more is to come.
func parseStage(b []byte) (marker string, out []byte, err error) {
	line, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return "", nil, errStageShort
	}
	f := strings.Fields(string(line))
	if len(f) == 0 {
		return "", nil, fmt.Errorf("an empty line where a marker was expected")
	}
	switch f[0] {
	case copyDone, copyFailed, stepFailed:
		return f[0], nil, nil
	case stepOut:
		n, err := strconv.Atoi(strings.TrimSpace(strings.Join(f[1:], "")))
		if err != nil || n < 0 || n > sandbox.MaxStepOutput {
			return "", nil, fmt.Errorf("the step wrote %q bytes, over the cap of %d", strings.Join(f[1:], " "), sandbox.MaxStepOutput)
		}
		if len(rest) < n {
			return "", nil, errStageShort
		}
		m, _, err := parseStage(rest[n:])
		if err != nil {
			return "", nil, err
		}
		return m, rest[:n], nil
	}
	return "", nil, fmt.Errorf("unexpected output %q where a marker was expected", line)
}

// stageOutcome turns what a stage script printed into the step's output, or the error that
// says what went wrong.
func stageOutcome(b *box, spec sandbox.Spec, what string, stdout []byte, stderr *sandbox.CapWriter,
	feedErr, ctxErr error) ([]byte, error) {
	marker, out, perr := parseStage(stdout)
	switch {
	case feedErr != nil && !errors.Is(feedErr, errSink):
		return nil, fmt.Errorf("%w: %s: %w", sandbox.ErrCopyIn, spec.Name, feedErr)
	case perr == nil && marker == copyDone:
		return out, nil
	case perr == nil && marker == stepFailed:
		return nil, fmt.Errorf("%w: %s: the step %q failed in %s: %s", sandbox.ErrStep, spec.Name,
			spec.Plant.Command, b.name, stderr.Capture())
	case perr == nil && marker == copyFailed:
		return nil, fmt.Errorf("%w: tar in %s failed while %s (is the workspace larger than the disk limit?): %s",
			sandbox.ErrCopyIn, b.name, what, stderr.Capture())
	case ctxErr != nil:
		return nil, fmt.Errorf("%w: %s %s: %w", sandbox.ErrCopyIn, what, b.name, ctxErr)
	case perr != nil && !errors.Is(perr, errStageShort):
		return nil, fmt.Errorf("%w: %s %s: %w", sandbox.ErrCopyIn, what, b.name, perr)
	}
	return nil, fmt.Errorf("%w: %s ended before %s: %s", sandbox.ErrCopyIn, b.name, what, stderr.Capture())
}

// stepArgv is the argv of spec's step, for the stage script that runs it; none when this
// stage runs no step.
func stepArgv(spec sandbox.Spec, run bool) []string {
	if !run || spec.Plant == nil {
		return nil
	}
	dir := boxLayout.Tender + "/" + sandbox.StepDir
	out := make([]string, len(spec.Plant.Command))
	for i, a := range boxLayout.Expand(spec.Plant.Command) {
		out[i] = strings.ReplaceAll(a, "{step}", dir)
	}
	return out
}

// treeEntries are the archive of one stage: which part of the workspace, the support tree
// in the first stage, and the step's files in the stage that runs it.
func treeEntries(spec sandbox.Spec, part sandbox.Part, withStep bool) []sandbox.TarEntry {
	eval := map[string]bool{}
	for _, f := range spec.Evaluator {
		eval[f] = true
	}
	entries := []sandbox.TarEntry{{Dir: spec.Workspace, Prefix: "workspace", Links: spec.Links,
		Owners: &sandbox.Owners{Evaluator: eval, Part: part}}}
	if part != sandbox.EvaluatorFiles {
		entries = append(entries, sandbox.TarEntry{Dir: spec.Support, Prefix: "tender",
			Extra: []string{"out", "home"}, Owners: &sandbox.Owners{}})
	}
	if withStep && spec.Plant != nil {
		entries = append(entries, sandbox.TarEntry{Prefix: "tender/" + sandbox.StepDir, Private: spec.Plant.Files})
	}
	return entries
}

// setupScript runs the suite's setup commands as the verifier user, stops at the first that
// fails, and then kills every process of that user but itself, in one kill(-1) (the kernel
// lets no fork through while it signals): whatever a setup command left behind is gone before
// the evaluator's files are written. Its exit code is the failed command's, or 0.
func setupScript(setup [][]string) []string {
	var b strings.Builder
	b.WriteString("rc=0\n")
	for i, argv := range setup {
		fmt.Fprintf(&b, "if [ $rc = 0 ]; then %s </dev/null >&2 || { rc=$?; echo \"tender: setup command %d exited $rc\" >&2; }; fi\n",
			sandbox.ShellQuote(argv), i+1)
	}
	b.WriteString("kill -KILL -1 2>/dev/null\nexit $rc\n")
	return []string{"sh", "-c", b.String(), "tender-setup"}
}

// runSetup runs the setup stage: the setup commands, then the check that no process of the
// verifier user outlived them. res says whether the check may go on (res.Ran()).
func (d *Backend) runSetup(ctx context.Context, b *box, spec sandbox.Spec, lim sandbox.Limits, res *sandbox.Result,
	errw io.Writer, deadline time.Time) (outcome, error) {
	e := execSpec{argv: setupScript(spec.Setup), env: boxLayout.Environ(spec.Env), as: asVerifier}
	out, err := d.runExec(ctx, b, e, lim, res, errw, errw, deadline)
	if err != nil || !out.ended || out.dead {
		return out, err
	}
	if out.code != 0 {
		res.SetupExit, res.ExitCode = out.code, out.code
		return out, nil
	}
	left, err := d.verifierProcesses(ctx, b)
	if err != nil {
		return out, err
	}
	if left > 0 {
		res.SetupLeftover, res.ExitCode = true, -1
		fmt.Fprintf(errw, "tender: %d process(es) of the setup commands outlived every kill; the tests did not start\n", left)
	}
	return out, nil
}

// verifierProcesses counts the live processes of the verifier user in the container, as the
// engine sees them (not as anything inside the container says). Zombies run nothing and are
// left out; a process killed in uninterruptible sleep is given a moment to go.
func (d *Backend) verifierProcesses(ctx context.Context, b *box) (int, error) {
	uid, _, _ := strings.Cut(sandbox.VerifierUser, ":")
	var left int
	for try := 0; try < 10; try++ {
		top, err := d.cli.ContainerTop(ctx, b.id, client.ContainerTopOptions{Arguments: []string{"-o", "pid,uid,stat"}})
		if err != nil {
			return 0, fmt.Errorf("%w: list the processes of %s: %w", ErrEngine, b.name, err)
		}
		ui, si := indexOf(top.Titles, "UID"), indexOf(top.Titles, "STAT")
		if ui < 0 || si < 0 {
			return 0, fmt.Errorf("%w: the engine lists the processes of %s without UID and STAT: %q", ErrEngine,
				b.name, top.Titles)
		}
		left = 0
		for _, p := range top.Processes {
			if ui < len(p) && si < len(p) && p[ui] == uid && !strings.HasPrefix(p[si], "Z") {
				left++
			}
		}
		if left == 0 {
			return 0, nil
		}
		select {
		case <-ctx.Done():
			return left, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
	return left, nil
}

func indexOf(titles []string, name string) int {
	for i, t := range titles {
		if t == name {
			return i
		}
	}
	return -1
}

// writeEvaluator unpacks the evaluator's files as Tender's user after the setup stage, and
// runs the step, in one exec. It returns what the step printed.
func (d *Backend) writeEvaluator(ctx context.Context, b *box, spec sandbox.Spec) ([]byte, error) {
	sctx, cancel := context.WithTimeout(ctx, d.SetupTimeout)
	defer cancel()
	argv := append([]string{"sh", "-c", evaluatorScript, "tender-evaluator"}, stepArgv(spec, true)...)
	feed := func(w io.Writer) error {
		return writeTree(w, treeEntries(spec, sandbox.EvaluatorFiles, true))
	}
	e, err := d.startExecFeed(sctx, b, execSpec{argv: argv, env: []string{"PATH=" + sandbox.SafePath},
		as: execUser{tenderUser, boxLayout.Workspace}}, feed)
	if err != nil {
		return nil, err
	}
	defer e.conn.Close()
	stage := newStageReader()
	stderr := sandbox.NewCapWriter(8 << 10)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_ = copyStreams(stage, stderr, e.conn.Reader)
	}()
	select {
	case <-stage.seen:
	case <-copied:
	case <-sctx.Done():
	}
	e.conn.Close()
	<-copied
	return stageOutcome(b, spec, "writing the evaluator's files", stage.buf.Bytes(), stderr, <-e.fed, sctx.Err())
}
