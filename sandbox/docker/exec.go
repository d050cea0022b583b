package docker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

// execution is one started exec with its hijacked stream. fed carries the outcome of writing
// its standard input (nil when it had none).
type execution struct {
	id   string
	conn client.HijackedResponse
	fed  chan error
}

// execUser is who an exec runs as, and where.
type execUser struct{ user, dir string }

// asVerifier is every exec of the candidate's code in a verifier.
var asVerifier = execUser{sandbox.VerifierUser, boxLayout.Workspace}

// execSpec is one exec: its argv, whole environment, and who runs it where.
type execSpec struct {
	argv, env []string
	as        execUser
}

// startExec starts argv in the verifier as its user. When stdin is not nil it is written to
// the command's standard input, which is then closed (the exec sees EOF).
func (d *Backend) startExec(ctx context.Context, b *box, argv, env []string, stdin []byte) (*execution, error) {
	return d.startExecAs(ctx, b, asVerifier, argv, env, stdin)
}

// startExecAs is startExec as another user.
func (d *Backend) startExecAs(
	ctx context.Context,
	b *box,
	as execUser,
	argv, env []string,
	stdin []byte,
) (*execution, error) {
	var feed func(io.Writer) error
	if stdin != nil {
		feed = func(w io.Writer) error {
			// A command that stops reading makes the write fail; it then sees EOF or EPIPE.
			_, _ = w.Write(stdin)
			return nil
		}
	}
	return d.startExecFeed(ctx, b, execSpec{argv: argv, env: env, as: as}, feed)
}

// startExecFeed starts e in the container. When feed is not nil it writes the command's
// standard input, which is then closed; its error arrives on the execution's fed channel.
func (d *Backend) startExecFeed(ctx context.Context, b *box, e execSpec, feed func(io.Writer) error) (*execution, error) {
	created, err := d.cli.ExecCreate(ctx, b.id, client.ExecCreateOptions{
		User: e.as.user, Cmd: e.argv, Env: e.env, WorkingDir: e.as.dir,
		AttachStdin: feed != nil, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: exec in %s: %w", ErrEngine, b.name, err)
	}
	conn, err := d.cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: attach to exec in %s: %w", ErrEngine, b.name, err)
	}
	x := &execution{id: created.ID, conn: conn.HijackedResponse, fed: make(chan error, 1)}
	if feed == nil {
		x.fed <- nil
		return x, nil
	}
	go func() {
		err := feed(&errWriter{w: x.conn.Conn})
		if cerr := x.conn.CloseWrite(); err == nil && cerr != nil {
			err = fmt.Errorf("%w: %w", errSink, cerr)
		}
		x.fed <- err
	}()
	return x, nil
}

// copyStreams demultiplexes an attached stream into stdout and stderr.
func copyStreams(stdout, stderr io.Writer, r io.Reader) error {
	_, err := stdcopy.StdCopy(stdout, stderr, r)
	return err
}

// exitCode asks the engine how the exec ended; running is true when it has not.
func (d *Backend) exitCode(ctx context.Context, e *execution) (code int, running bool, err error) {
	in, err := d.cli.ExecInspect(ctx, e.id, client.ExecInspectOptions{})
	if err != nil {
		return -1, false, fmt.Errorf("%w: inspect exec: %w", ErrEngine, err)
	}
	return in.ExitCode, in.Running, nil
}

// runSmall runs a short helper command to completion, bounded by timeout, and returns its
// exit code. Output beyond what the writers accept is dropped.
func (d *Backend) runSmall(
	ctx context.Context,
	b *box,
	argv []string,
	stdout, stderr io.Writer,
	timeout time.Duration,
) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	e, err := d.startExec(ctx, b, argv, []string{"PATH=" + sandbox.SafePath}, nil)
	if err != nil {
		return -1, err
	}
	defer e.conn.Close()
	stop := context.AfterFunc(ctx, func() { e.conn.Close() })
	defer stop()
	_, copyErr := stdcopy.StdCopy(stdout, stderr, e.conn.Reader)
	if errors.Is(copyErr, errWriterFull) {
		e.conn.Close() // the process gets EPIPE instead of blocking on a full pipe
	}
	if ctx.Err() != nil {
		return -1, fmt.Errorf("%w: %v in %s did not finish in %s", ErrEngine, argv, b.name, timeout)
	}
	code, running, err := d.waitExit(ctx, e)
	switch {
	case err != nil:
		return -1, err
	case running:
		return -1, fmt.Errorf("%w: %v in %s still running after its output closed", ErrEngine, argv, b.name)
	case copyErr != nil && code == 0 && !errors.Is(copyErr, errWriterFull):
		return -1, fmt.Errorf("%w: read from %s: %w", ErrEngine, b.name, copyErr)
	}
	return code, nil
}

// waitExit polls briefly: the engine may report the exit a moment after the stream ends.
func (d *Backend) waitExit(ctx context.Context, e *execution) (int, bool, error) {
	for i := 0; ; i++ {
		code, running, err := d.exitCode(ctx, e)
		if err != nil || !running || i == 50 {
			return code, running, err
		}
		select {
		case <-ctx.Done():
			return code, running, nil
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// receive attaches to the new container, starts it and streams the workspace to /workspace
// and the support tree to /tender into its main process, with the plant step's files when
// the step runs there (no setup commands). The engine's copy API cannot write to a tmpfs under
// a read-only root, and no host path is ever mounted. It returns what the step printed.
//
// pre, when not nil, is the check's command (Spec.StdinFirst): it is created and attached as
// soon as the container runs, while the workspace is written and the step runs.
func (d *Backend) receive(ctx context.Context, b *box, spec sandbox.Spec, pre *early) ([]byte, error) {
	attached, err := d.cli.ContainerAttach(ctx, b.id,
		client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, fmt.Errorf("%w: attach to %s: %w", ErrEngine, b.name, err)
	}
	conn := attached.HijackedResponse
	defer conn.Close()
	if _, err := d.cli.ContainerStart(ctx, b.id, client.ContainerStartOptions{}); err != nil {
		return nil, fmt.Errorf("%w: start container for %s: %w", ErrEngine, spec.Name, err)
	}
	if pre != nil {
		pre.start(d, b)
	}
	stage := newStageReader()
	stderr := sandbox.NewCapWriter(8 << 10)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_ = copyStreams(stage, stderr, conn.Reader)
	}()
	part := sandbox.AllFiles
	if len(spec.Setup) > 0 {
		part = sandbox.CandidateFiles
	}
	treeErr := make(chan error, 1)
	go func() {
		err := writeTree(&errWriter{w: conn.Conn}, treeEntries(spec, part, len(spec.Setup) == 0))
		if cerr := conn.CloseWrite(); err == nil && cerr != nil {
			err = fmt.Errorf("%w: %w", errSink, cerr)
		}
		treeErr <- err
	}()
	select {
	case <-stage.seen:
	case <-copied:
	case <-ctx.Done():
	}
	conn.Close()
	<-copied
	return stageOutcome(b, spec, "unpacking the workspace", stage.buf.Bytes(), stderr, <-treeErr, ctx.Err())
}

// writeTree writes the archive of entries to w in a few large writes, not two per file.
func writeTree(w io.Writer, entries []sandbox.TarEntry) error {
	buf := bufio.NewWriterSize(w, 256<<10)
	if err := sandbox.WriteTar(buf, entries); err != nil {
		return err
	}
	return buf.Flush()
}

var errSink = errors.New("verifier stopped reading")

// errWriter remembers a failed write, so a host-side read error can be told apart from the
// container closing its end.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, errSink
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
		return n, fmt.Errorf("%w: %w", errSink, err)
	}
	return n, nil
}
