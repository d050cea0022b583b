package docker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

// outcome is how one exec of a check ended: whether it ended by itself before the deadline,
// its exit code then, and whether the container itself is gone or stopped (nothing more can be
// read from it).
type outcome struct {
	ended, dead bool
	code        int
}

// runExec runs e under the check's deadline, with no standard input. At the deadline the
// whole container is killed (there is no API to kill one exec), which also ends the output
// stream, and res says it timed out.
func (d *Backend) runExec(ctx context.Context, b *box, e execSpec, lim sandbox.Limits, res *sandbox.Result,
	stdout, stderr io.Writer, deadline time.Time) (outcome, error) {
	return d.runExecStdin(ctx, b, e, nil, lim, res, stdout, stderr, deadline)
}

// runExecStdin is runExec with stdin written to the command's standard input (nil: none).
func (d *Backend) runExecStdin(ctx context.Context, b *box, e execSpec, stdin []byte, lim sandbox.Limits,
	res *sandbox.Result, stdout, stderr io.Writer, deadline time.Time) (outcome, error) {
	var feed func(io.Writer) error
	if stdin != nil {
		feed = func(w io.Writer) error {
			// A command that stops reading makes the write fail; it then sees EOF or EPIPE.
			_, _ = w.Write(stdin)
			return nil
		}
	}
	x, err := d.startExecFeed(ctx, b, e, feed)
	if err != nil {
		return outcome{}, err
	}
	return d.follow(ctx, b, x, lim, res, stdout, stderr, deadline)
}

// follow copies a started command's output until it ends or the deadline passes, and reads
// how it ended.
func (d *Backend) follow(ctx context.Context, b *box, x *execution, lim sandbox.Limits, res *sandbox.Result,
	stdout, stderr io.Writer, deadline time.Time) (outcome, error) {
	defer x.conn.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = copyStreams(stdout, stderr, x.conn.Reader)
	}()
	ended, err := d.await(ctx, b, x, done, time.Until(deadline))
	if err == nil && !ended {
		peak, pids := d.stats(ctx, b)
		res.PeakMemory, res.PidsLimitHit = peak, nearLimit(pids, lim.Pids)
		d.logf("%s: deadline of %s reached: killing the container", b.name, lim.Timeout)
		d.kill(ctx, b)
	}
	x.conn.Close()
	<-done
	if err != nil {
		return outcome{}, err
	}
	if !ended {
		res.TimedOut, res.ExitCode = true, -1
		return outcome{}, nil
	}
	code, running, err := d.waitExit(ctx, x)
	if err != nil || running || code >= 126 {
		// Ended by a signal, not started (the runtime's 126 when the container went as the
		// exec began), or the engine lost it: was it the container that went?
		if dead, derr := d.died(ctx, b, res); derr != nil || dead {
			res.ExitCode = code
			return outcome{ended: true, dead: dead, code: code}, derr
		}
	}
	if err != nil {
		return outcome{}, err
	}
	if running {
		return outcome{}, fmt.Errorf("%w: %s: command still running after its output closed", ErrEngine, b.name)
	}
	return outcome{ended: true, code: code}, nil
}

// died reports whether the container is gone, stopped or being stopped. When someone other
// than Tender (its deadline) or the kernel (memory) ended it, they went through the engine
// (docker kill, stop, rm -f), which records a kill: res.Killed. A candidate that ends the
// container's own processes from inside leaves no such trace, and its check simply has no
// report. The engine may still say "running" for a moment after a kill, so the kill record
// is asked first.
func (d *Backend) died(ctx context.Context, b *box, res *sandbox.Result) (bool, error) {
	in, err := d.inspect(ctx, b)
	switch {
	case cerrdefs.IsNotFound(err):
		res.Killed = true // removed from outside
	case err != nil:
		return false, fmt.Errorf("%w: inspect %s: %w", ErrEngine, b.name, err)
	case in.State == nil:
		return false, nil
	default:
		if res.Killed, err = d.killSent(ctx, b, in.Created); err != nil {
			return false, err
		}
		if !res.Killed && in.State.Running {
			return false, nil
		}
		res.OOMKilled = !res.Killed && in.State.OOMKilled
	}
	if res.Killed {
		d.logf("%s: killed from outside; no verdict", b.name)
	}
	return true, nil
}

// inspect returns what the engine knows of b's container.
func (d *Backend) inspect(ctx context.Context, b *box) (container.InspectResponse, error) {
	r, err := d.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
	return r.Container, err
}

// killSent reports whether the engine recorded a kill of the container since it was created.
// Tender sends one only at a deadline, which is not this path.
func (d *Backend) killSent(ctx context.Context, b *box, created string) (bool, error) {
	since, err := time.Parse(time.RFC3339Nano, created)
	if err != nil {
		since = time.Now().Add(-24 * time.Hour)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ev := d.cli.Events(ctx, client.EventsListOptions{
		Since: strconv.FormatInt(since.Unix()-1, 10), Until: strconv.FormatInt(time.Now().Unix()+1, 10),
		Filters: make(client.Filters).Add("type", "container").Add("container", b.id).Add("event", "kill"),
	})
	for {
		select {
		case <-ev.Messages:
			return true, nil
		case err := <-ev.Err:
			if err == nil || errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, fmt.Errorf("%w: events of %s: %w", ErrEngine, b.name, err)
		}
	}
}

// await returns true when the command ended, false when the deadline passed (the caller
// kills the container), and an error when ctx was cancelled (the caller removes it).
func (d *Backend) await(
	ctx context.Context,
	b *box,
	e *execution,
	done <-chan struct{},
	timeout time.Duration,
) (bool, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	poll := time.NewTicker(250 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-done:
			return true, nil
		case <-ctx.Done():
			return false, fmt.Errorf("%s: cancelled: %w", b.name, context.Cause(ctx))
		case <-deadline.C:
			return false, nil
		case <-poll.C:
			if _, running, err := d.exitCode(ctx, e); err == nil && !running {
				return d.drain(done), nil
			}
		}
	}
}

// drain waits a moment for the output to close after the process exited. A background
// child may hold the pipe open; the check has still ended.
func (d *Backend) drain(done <-chan struct{}) bool {
	select {
	case <-done:
	case <-time.After(streamDrain):
	}
	return true
}

// collect reads what the container's cgroup says about the finished command, and the JUnit
// report, in one exec. (The engine's one-shot stats cost about 270 ms on this engine; they
// are only the fallback.)
func (d *Backend) collect(ctx context.Context, b *box, lim sandbox.Limits, res *sandbox.Result) error {
	if err := d.readBack(ctx, b, lim, res); err != nil {
		return err
	}
	in, err := d.inspect(ctx, b)
	if err != nil {
		return fmt.Errorf("%w: inspect %s: %w", ErrEngine, b.name, err)
	}
	if in.State != nil && in.State.OOMKilled {
		res.OOMKilled = true
	}
	return nil
}

// nearLimit: a sampled pids count within 10% of the limit means forks are being refused. A
// churning fork bomb rarely sits exactly at the limit when sampled.
func nearLimit(pids, limit int64) bool { return limit > 0 && pids*10 >= limit*9 }

// stats returns the cgroup's max memory usage as the engine reports it (cgroup v1; 0
// otherwise) and the current number of pids.
func (d *Backend) stats(ctx context.Context, b *box) (peak int64, pids int64) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := d.cli.ContainerStats(ctx, b.id, client.ContainerStatsOptions{})
	if err != nil {
		return 0, 0
	}
	defer st.Body.Close()
	var s container.StatsResponse
	if err := json.NewDecoder(io.LimitReader(st.Body, 1<<20)).Decode(&s); err != nil {
		return 0, 0
	}
	return int64(s.MemoryStats.MaxUsage), int64(s.PidsStats.Current)
}

// readBackScript prints the kernel's own counters on stderr, which code in the check cannot
// forge: OOM kills in the memory cgroup, forks refused by the pids cgroup, the tmpfs fill
// levels and the peak memory use (cgroup v1 and v2 paths are both tried). Then it prints
// the report on stdout, only when it is a regular file and not a symlink: a FIFO or a device
// planted at the path must not hang or flood the collection. Only shell builtins read the counters, so they
// arrive even when leftover processes hold every pid but the one the exec itself needs.
const readBackScript = `show() { for f in "$@"; do [ -r "$f" ] && while IFS= read -r l; do echo "$l"; done < "$f"; done; }
{
show /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events
echo ==
show /sys/fs/cgroup/pids/pids.events /sys/fs/cgroup/pids.events
echo ==
df -P -k /workspace /tender /tmp
echo ==
show /sys/fs/cgroup/memory/memory.max_usage_in_bytes /sys/fs/cgroup/memory.peak
} >&2
[ -f "$1" ] && [ ! -L "$1" ] || exit 3
exec cat -- "$1"`

// readBack fills the counters and the JUnit report. Anything but a regular file at the
// report path leaves JUnit nil, which the grader treats as a missing report. Processes the
// command left behind may hold every pid, so a read-back that could not start its own
// processes is retried a few times, sampling the engine's pids count in between.
func (d *Backend) readBack(ctx context.Context, b *box, lim sandbox.Limits, res *sandbox.Result) error {
	for attempt := 1; ; attempt++ {
		ok, err := d.readBackOnce(ctx, b, res)
		if ok || err != nil {
			return err
		}
		peak, pids := d.stats(ctx, b)
		res.PeakMemory = max(res.PeakMemory, peak)
		res.PidsLimitHit = res.PidsLimitHit || nearLimit(pids, lim.Pids)
		if attempt == 6 {
			d.logf("%s: read-back could not run (pids exhausted?); no report, counters unknown", b.name)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: cancelled: %w", b.name, context.Cause(ctx))
		case <-time.After(time.Duration(attempt) * 250 * time.Millisecond):
		}
	}
}

// readBackOnce reports false when the script could not start or print its counters.
func (d *Backend) readBackOnce(ctx context.Context, b *box, res *sandbox.Result) (bool, error) {
	report := &limitBuffer{limit: sandbox.MaxJUnitBytes}
	counters := sandbox.NewCapWriter(64 << 10)
	argv := []string{"sh", "-c", readBackScript, "read-back", boxLayout.JUnit}
	code, err := d.runSmall(ctx, b, argv, report, counters, 30*time.Second)
	text := counters.Capture().String()
	if ctx.Err() != nil {
		return false, err
	}
	if !strings.Contains(text, "==\n") || err != nil && !report.over {
		return false, nil
	}
	p := parseProbe(text)
	res.OOMKilled = res.OOMKilled || p.oomKills > 0
	res.PidsLimitHit = res.PidsLimitHit || p.pidsMax > 0
	res.DiskFull = p.diskFull
	res.PeakMemory = p.peak
	switch {
	case report.over:
		res.JUnitTooLarge = true
	case code == 0:
		res.JUnit = bytes.Clone(report.b.Bytes())
	}
	return true, nil
}

type probeResult struct {
	oomKills, pidsMax int64
	diskFull          bool
	peak              int64
}

func parseProbe(text string) probeResult {
	var p probeResult
	parts := strings.SplitN(text, "==\n", 4)
	for len(parts) < 4 {
		parts = append(parts, "")
	}
	p.oomKills = counter(parts[0], "oom_kill")
	p.pidsMax = counter(parts[1], "max")
	p.diskFull = anyFull(parts[2])
	p.peak, _ = strconv.ParseInt(strings.TrimSpace(parts[3]), 10, 64)
	return p
}

// counter returns the value of the "key N" line, 0 when absent.
func counter(text, key string) int64 {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == key {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// anyFull reads `df -P -k` output: a filesystem with under 1% or 64 KiB free is full.
func anyFull(text string) bool {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		size, err1 := strconv.ParseInt(f[1], 10, 64)
		avail, err2 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil || size <= 0 {
			continue
		}
		if avail < 64 || avail*100 < size {
			return true
		}
	}
	return false
}

var errWriterFull = errors.New("capped output is full")

// limitBuffer accepts up to limit bytes, then fails so the reader stops.
type limitBuffer struct {
	b     bytes.Buffer
	limit int
	over  bool
}

func (l *limitBuffer) Write(p []byte) (int, error) {
	if l.b.Len()+len(p) > l.limit {
		l.over = true
		return 0, errWriterFull
	}
	return l.b.Write(p)
}
