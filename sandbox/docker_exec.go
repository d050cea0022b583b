package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// ErrCopyIn means the workspace could not be written into the verifier.
var ErrCopyIn = errors.New("copy into verifier failed")

// execution is one started exec with its hijacked stream.
type execution struct {
	id   string
	conn types.HijackedResponse
}

func (d *Docker) startExec(ctx context.Context, b *box, argv, env []string, stdin bool) (*execution, error) {
	created, err := d.cli.ContainerExecCreate(ctx, b.id, container.ExecOptions{
		User: VerifierUser, Cmd: argv, Env: env, WorkingDir: dockerLayout.Workspace,
		AttachStdin: stdin, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: exec in %s: %w", ErrEngine, b.name, err)
	}
	conn, err := d.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: attach to exec in %s: %w", ErrEngine, b.name, err)
	}
	return &execution{id: created.ID, conn: conn}, nil
}

// exitCode asks the engine how the exec ended; running is true when it has not.
func (d *Docker) exitCode(ctx context.Context, e *execution) (code int, running bool, err error) {
	in, err := d.cli.ContainerExecInspect(ctx, e.id)
	if err != nil {
		return -1, false, fmt.Errorf("%w: inspect exec: %w", ErrEngine, err)
	}
	return in.ExitCode, in.Running, nil
}

// runSmall runs a short helper command to completion, bounded by timeout, and returns its
// exit code. stdin may be nil. Output beyond what the writers accept is dropped.
func (d *Docker) runSmall(ctx context.Context, b *box, argv []string, stdin func(io.Writer) error, stdout, stderr io.Writer, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	e, err := d.startExec(ctx, b, argv, []string{"PATH=" + SafePath}, stdin != nil)
	if err != nil {
		return -1, err
	}
	defer e.conn.Close()
	stop := context.AfterFunc(ctx, func() { e.conn.Close() })
	defer stop()
	feedErr := make(chan error, 1)
	if stdin != nil {
		go func() { feedErr <- feed(e.conn, stdin) }()
	} else {
		feedErr <- nil
	}
	_, copyErr := stdcopy.StdCopy(stdout, stderr, e.conn.Reader)
	if ctx.Err() != nil {
		return -1, fmt.Errorf("%w: %v in %s did not finish in %s", ErrEngine, argv, b.name, timeout)
	}
	code, running, err := d.waitExit(ctx, e)
	if err != nil {
		return -1, err
	}
	if running {
		return -1, fmt.Errorf("%w: %v in %s still running after its output closed", ErrEngine, argv, b.name)
	}
	e.conn.Close() // unblocks a feed the process stopped reading
	if ferr := <-feedErr; ferr != nil && code == 0 {
		return -1, fmt.Errorf("%w: stream into %s: %w", ErrCopyIn, b.name, ferr)
	}
	if copyErr != nil && code == 0 && !errors.Is(copyErr, errWriterFull) {
		return -1, fmt.Errorf("%w: read from %s: %w", ErrEngine, b.name, copyErr)
	}
	return code, nil
}

// feed writes the whole stdin, then half-closes so the process sees end of file.
func feed(conn types.HijackedResponse, write func(io.Writer) error) error {
	err := write(conn.Conn)
	if cerr := conn.CloseWrite(); err == nil {
		err = cerr
	}
	return err
}

// waitExit polls briefly: the engine may report the exit a moment after the stream ends.
func (d *Docker) waitExit(ctx context.Context, e *execution) (int, bool, error) {
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

// streamIn writes the workspace to /workspace and the support tree to /tender through one
// tar process inside the container: the engine's copy API cannot write to a tmpfs under a
// read-only root.
func (d *Docker) streamIn(ctx context.Context, b *box, spec Spec) error {
	entries := []tarEntry{
		{Dir: spec.Workspace, Prefix: "workspace"},
		{Dir: spec.Support, Prefix: "tender", Extra: []string{"out", "home"}},
	}
	stderr := newCapWriter(8 << 10)
	argv := []string{"tar", "-x", "-f", "-", "-C", "/", "--no-same-owner", "--no-overwrite-dir"}
	var treeErr error
	write := func(w io.Writer) error {
		sink := &errWriter{w: w}
		treeErr = writeTree(sink, entries)
		if sink.err != nil {
			return sink.err // the container stopped reading: tar's exit code says why
		}
		return treeErr
	}
	code, err := d.runSmall(ctx, b, argv, write, io.Discard, stderr, d.SetupTimeout)
	if treeErr != nil && !errors.Is(treeErr, errSink) {
		return fmt.Errorf("%w: %s: %w", ErrCopyIn, spec.Name, treeErr)
	}
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("%w: tar in %s exited %d (is the workspace larger than the disk limit?): %s", ErrCopyIn, b.name, code, stderr.capture())
	}
	return nil
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
