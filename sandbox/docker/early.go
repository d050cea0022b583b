package docker

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// early is a check's command started before its standard input is known (Spec.StdinFirst):
// Tender's pytest bootstrap imports pytest while the workspace is unpacked and the planter
// runs, instead of after them. Its standard input is held open, empty, until runEarly writes it,
// or abort closes it.
type early struct {
	ctx     context.Context
	e       execSpec
	ready   chan struct{} // closed once the exec is created and attached, or could not be
	x       *execution
	err     error
	stdin   chan []byte // the standard input, once; closed without one to abort
	once    sync.Once
	started bool // start ran (in the goroutine of Run, as abort does)
}

// newEarly is the command e of a check run on ctx, not yet started.
func newEarly(ctx context.Context, e execSpec) *early {
	return &early{ctx: ctx, e: e, ready: make(chan struct{}), stdin: make(chan []byte, 1)}
}

// start creates and attaches the exec in b's running container, in the background.
func (p *early) start(d *Backend, b *box) {
	p.started = true
	go func() {
		defer close(p.ready)
		p.x, p.err = d.startExecFeed(p.ctx, b, p.e, func(w io.Writer) error {
			if data, ok := <-p.stdin; ok {
				// A command that stops reading makes the write fail; it then sees EOF or EPIPE.
				_, _ = w.Write(data)
			}
			return nil
		})
	}()
}

// abort closes the command's standard input unwritten, unless runEarly wrote it, so that a
// command that will not run sees EOF, then waits for the exec to be attached and closes its
// stream. Run defers it; a second close of the stream does nothing.
func (p *early) abort() {
	p.once.Do(func() { close(p.stdin) })
	if !p.started {
		return
	}
	<-p.ready
	if p.x != nil {
		p.x.conn.Close()
	}
}

// runEarly writes stdin to the started command and follows it as runExecStdin does.
func (d *Backend) runEarly(ctx context.Context, b *box, p *early, stdin []byte, lim sandbox.Limits,
	res *sandbox.Result, stdout, stderr io.Writer, deadline time.Time) (outcome, error) {
	<-p.ready
	if p.err != nil {
		return outcome{}, p.err
	}
	p.once.Do(func() {
		p.stdin <- stdin
		close(p.stdin)
	})
	return d.follow(ctx, b, p.x, lim, res, stdout, stderr, deadline)
}
