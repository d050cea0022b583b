package docker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

// execution is one started exec with its hijacked stream.
type execution struct {
	id   string
	conn client.HijackedResponse
}

// startExec starts argv in the container. When stdin is not nil it is written to the
// command's standard input, which is then closed (the exec sees EOF).
func (d *Backend) startExec(ctx context.Context, b *box, argv, env []string, stdin []byte) (*execution, error) {
	created, err := d.cli.ExecCreate(ctx, b.id, client.ExecCreateOptions{
		User: sandbox.VerifierUser, Cmd: argv, Env: env, WorkingDir: boxLayout.Workspace,
		AttachStdin: stdin != nil, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: exec in %s: %w", ErrEngine, b.name, err)
	}
	conn, err := d.cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: attach to exec in %s: %w", ErrEngine, b.name, err)
	}
	if stdin != nil {
		go func() {
			// A command that stops reading makes the write fail; it then sees EOF or EPIPE.
			_, _ = conn.Conn.Write(stdin)
			_ = conn.CloseWrite()
		}()
	}
	return &execution{id: created.ID, conn: conn.HijackedResponse}, nil
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
func (d *Backend) runSmall(ctx context.Context, b *box, argv []string, stdout, stderr io.Writer, timeout time.Duration) (int, error) {
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
// and the support tree to /tender into its main process. The engine's copy API cannot write
// to a tmpfs under a read-only root, and no host path is ever mounted.
func (d *Backend) receive(ctx context.Context, b *box, spec sandbox.Spec) error {
	attached, err := d.cli.ContainerAttach(ctx, b.id,
		client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return fmt.Errorf("%w: attach to %s: %w", ErrEngine, b.name, err)
	}
	conn := attached.HijackedResponse
	defer conn.Close()
	if _, err := d.cli.ContainerStart(ctx, b.id, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("%w: start container for %s: %w", ErrEngine, spec.Name, err)
	}
	marker := &markerWriter{seen: make(chan string, 1)}
	stderr := sandbox.NewCapWriter(8 << 10)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = stdcopy.StdCopy(marker, stderr, conn.Reader)
	}()
	treeErr := make(chan error, 1)
	go func() { treeErr <- feedTree(conn, spec) }()
	var got string
	select {
	case got = <-marker.seen:
	case <-copied:
	case <-ctx.Done():
	}
	conn.Close()
	<-copied
	return copyOutcome(b, spec, got, <-treeErr, stderr, ctx.Err())
}

func copyOutcome(b *box, spec sandbox.Spec, marker string, treeErr error, stderr *sandbox.CapWriter, ctxErr error) error {
	switch {
	case treeErr != nil && !errors.Is(treeErr, errSink):
		return fmt.Errorf("%w: %s: %w", sandbox.ErrCopyIn, spec.Name, treeErr)
	case marker == copyDone:
		return nil
	case marker == copyFailed:
		return fmt.Errorf("%w: tar in %s failed (is the workspace larger than the disk limit?): %s", sandbox.ErrCopyIn, b.name, stderr.Capture())
	case ctxErr != nil:
		return fmt.Errorf("%w: streaming into %s: %w", sandbox.ErrCopyIn, b.name, ctxErr)
	default:
		return fmt.Errorf("%w: %s ended before unpacking the workspace: %s", sandbox.ErrCopyIn, b.name, stderr.Capture())
	}
}

// feedTree writes the tar stream and half-closes stdin so tar sees the end.
func feedTree(conn client.HijackedResponse, spec sandbox.Spec) error {
	entries := []sandbox.TarEntry{
		{Dir: spec.Workspace, Prefix: "workspace"},
		{Dir: spec.Support, Prefix: "tender", Extra: []string{"out", "home"}},
	}
	sink := &errWriter{w: conn.Conn}
	buf := bufio.NewWriterSize(sink, 256<<10) // a few large writes, not two per file
	err := sandbox.WriteTar(buf, entries)
	if err == nil {
		err = buf.Flush()
	}
	if cerr := conn.CloseWrite(); err == nil && cerr != nil {
		err = fmt.Errorf("%w: %w", errSink, cerr)
	}
	return err
}

// markerWriter watches the main process's stdout for the copy marker.
type markerWriter struct {
	buf  []byte
	seen chan string
	done bool
}

func (m *markerWriter) Write(p []byte) (int, error) {
	if m.done || len(m.buf) > 4096 {
		return len(p), nil
	}
	m.buf = append(m.buf, p...)
	for _, mk := range []string{copyFailed, copyDone} {
		if bytes.Contains(m.buf, []byte(mk+"\n")) {
			m.done = true
			m.seen <- mk
			break
		}
	}
	return len(p), nil
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
