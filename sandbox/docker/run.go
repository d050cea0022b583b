package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/internal/phase"
	"github.com/tender-grader/tender/sandbox"
)

// boxLayout is where the tokens point inside a container. The JUnit file lives under
// /tender, outside the workspace the candidate's tree was written to.
var boxLayout = sandbox.NewLayout("/workspace", "/tender")

// box is one started container.
type box struct {
	id, name, imageID string
}

// Run creates a new container for spec, streams the workspace in, runs the setup commands,
// the evaluator's files and the plant step, and the command, all under the check's deadline,
// collects the results and removes the container, whatever happened.
func (d *Backend) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	c, err := d.Prepare(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	return c.Run(ctx)
}

var _ sandbox.Preparer = (*Backend)(nil)

// Prepare creates and starts spec's container and streams the workspace in. Without setup
// commands it also writes the evaluator's files, runs the plant step and, under
// Spec.StdinFirst, starts the command, which waits for its standard input: all that comes
// before the check's deadline starts.
func (d *Backend) Prepare(ctx context.Context, spec sandbox.Spec) (sandbox.Prepared, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Image == "" {
		return nil, fmt.Errorf("%w: %s: no image", sandbox.ErrBadSpec, spec.Name)
	}
	c := &prepared{d: d, ctx: ctx, spec: spec, lim: spec.Limits.WithDefaults()}
	c.e = execSpec{argv: boxLayout.Expand(spec.Command), env: boxLayout.Environ(spec.Env), as: asVerifier}
	if spec.StdinFirst && len(spec.Setup) == 0 {
		c.pre = newEarly(ctx, c.e)
	}
	b, planted, err := d.startBox(ctx, spec, c.lim, c.pre)
	if errors.Is(err, errKilledOutside) {
		c.killed = true
		return c, nil
	}
	if err != nil {
		c.Release()
		return nil, err
	}
	c.b, c.planted = b, planted
	return c, nil
}

// prepared is a check whose container runs, filled.
type prepared struct {
	d       *Backend
	ctx     context.Context // Prepare's: the profile's, and the one the removal outlives
	spec    sandbox.Spec
	lim     sandbox.Limits
	e       execSpec
	pre     *early // the command, started early; nil when it starts in Run
	b       *box   // nil when the container was killed from outside while it was filled
	planted []byte
	killed  bool
	once    sync.Once
}

// Release removes the container and lets go of an early command that never got its input.
func (c *prepared) Release() {
	c.once.Do(func() {
		if c.b != nil {
			done := phase.Start(c.ctx, "container: remove")
			c.d.removeBox(c.ctx, c.b)
			done()
		}
		if c.pre != nil {
			c.pre.abort()
		}
	})
}

// Run runs the setup commands, the evaluator's files and the plant step when Prepare did not,
// and the command, under the check's deadline, and collects the results. The container stays
// until Release.
func (c *prepared) Run(ctx context.Context) (*sandbox.Result, error) {
	d, b, spec, lim := c.d, c.b, c.spec, c.lim
	if c.killed {
		return &sandbox.Result{Backend: "docker", Isolated: true, Killed: true, ExitCode: -1}, nil
	}
	res := &sandbox.Result{Backend: "docker", Isolated: true, ImageID: b.imageID}
	stdout, stderr := sandbox.NewCapWriter(lim.OutputBytes), sandbox.NewCapWriter(lim.OutputBytes)
	defer func() { res.Stdout, res.Stderr = stdout.Capture(), stderr.Capture() }()
	start := time.Now()
	defer func() { res.Wall = time.Since(start) }()
	deadline := start.Add(lim.Timeout)
	planted := c.planted
	if len(spec.Setup) > 0 {
		out, err := d.runSetup(ctx, b, spec, lim, res, stderr, deadline)
		if err != nil || !out.ended || out.dead || !res.Ran() {
			return d.finish(ctx, b, lim, res, out, err)
		}
		if planted, err = d.writeEvaluator(ctx, b, spec); err != nil {
			if d.killedOutside(ctx, b) {
				res.Killed, res.ExitCode = true, -1
				return res, nil
			}
			return nil, err
		}
	}
	stdin := spec.Stdin
	if spec.Plant != nil {
		res.Plant = planted
		var err error
		if stdin, err = spec.Plant.Stdin(planted); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", sandbox.ErrStep, spec.Name, err)
		}
	}
	done := phase.Start(ctx, "container: test command")
	var out outcome
	var err error
	if c.pre != nil {
		out, err = d.runEarly(ctx, b, c.pre, stdin, lim, res, stdout, stderr, deadline)
	} else {
		out, err = d.runExecStdin(ctx, b, c.e, stdin, lim, res, stdout, stderr, deadline)
	}
	done()
	if err == nil && out.ended {
		res.ExitCode = out.code
	}
	defer phase.Start(ctx, "container: collect")()
	return d.finish(ctx, b, lim, res, out, err)
}

// finish reads the report and the counters of a check whose command ended, unless the
// container is gone or was stopped. An engine error from a container killed from outside
// (an exec that could not start in it) is that kill.
func (d *Backend) finish(ctx context.Context, b *box, lim sandbox.Limits, res *sandbox.Result, out outcome,
	err error) (*sandbox.Result, error) {
	if err != nil && ctx.Err() == nil && d.killedOutside(ctx, b) {
		res.Killed, res.ExitCode = true, -1
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	if res.TimedOut || out.dead {
		return res, nil
	}
	if err := d.collect(ctx, b, lim, res); err != nil {
		return nil, err
	}
	return res, nil
}

// startBox creates and starts the container and fills it; pre, when not nil, is the check's
// command to start as soon as the container runs.
func (d *Backend) startBox(ctx context.Context, spec sandbox.Spec, lim sandbox.Limits, pre *early) (*box, []byte,
	error) {
	sctx, cancel := context.WithTimeout(ctx, d.SetupTimeout)
	defer cancel()
	done := phase.Start(ctx, "container: create")
	img, err := d.cli.ImageInspect(sctx, spec.Image)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, nil, fmt.Errorf(
				"%w: image %s is not on this machine (run `tender image build`, or pull it): %w",
				ErrImageMissing,
				spec.Image,
				err,
			)
		}
		return nil, nil, fmt.Errorf("%w: inspect image %s: %w", ErrEngine, spec.Image, err)
	}
	b := &box{name: containerName(spec.Name), imageID: img.ID}
	// The create is not cancelled with ctx: an engine that has the request may make the
	// container after the client gave up on it, and after Close listed the session's
	// containers. Its answer names the container, which the failed stage below removes.
	cctx, ccancel := d.cleanupContext(sctx)
	created, err := d.cli.ContainerCreate(cctx, client.ContainerCreateOptions{
		Config: containerConfig(spec, d.self, d.session), HostConfig: hostConfig(lim), Name: b.name,
	})
	ccancel()
	done()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: create container for %s: %w", ErrEngine, spec.Name, err)
	}
	b.id = created.ID
	if err := sctx.Err(); err != nil {
		d.removeBox(ctx, b)
		return nil, nil, err
	}
	done = phase.Start(ctx, "container: start, stream, plant")
	planted, err := d.receive(sctx, b, spec, pre)
	done()
	if err != nil {
		if d.killedOutside(ctx, b) {
			err = errKilledOutside
		}
		d.removeBox(ctx, b)
		return nil, nil, err
	}
	return b, planted, nil
}

// errKilledOutside: the container was killed from outside while Tender filled it or ran its
// step (the planter), before the command started. Like a kill during the command, that is
// infrastructure: Result.Killed, never a failed copy or a broken step.
var errKilledOutside = errors.New("killed from outside before the command ran")

// killedOutside reports whether someone other than Tender killed b's container (docker kill,
// stop, rm -f): the engine's record of it, asked after a stage failed.
func (d *Backend) killedOutside(ctx context.Context, b *box) bool {
	var res sandbox.Result
	dead, err := d.died(ctx, b, &res)
	return err == nil && dead && res.Killed
}

// containerConfig opens stdin once, for the tar stream read by receiveScript, which runs as
// Tender's user; every exec of the verifier user's names its user.
func containerConfig(spec sandbox.Spec, o owner, session string) *container.Config {
	argv := append([]string{"sh", "-c", receiveScript, "tender-receive"}, stepArgv(spec, len(spec.Setup) == 0)...)
	return &container.Config{
		Image:           spec.Image,
		User:            tenderUser,
		Entrypoint:      argv,
		WorkingDir:      boxLayout.Workspace,
		Env:             []string{"PATH=" + sandbox.SafePath, "HOME=" + boxLayout.Home},
		Labels:          o.labels(spec.RunID, spec.Name, session),
		NetworkDisabled: true,
		Hostname:        "verifier",
		AttachStdin:     true,
		AttachStdout:    true,
		AttachStderr:    true,
		OpenStdin:       true,
		StdinOnce:       true,
		Tty:             false,
		StopTimeout:     new(int),
	}
}

// hostConfig: no network, no capability but CHOWN and FOWNER (which only Tender's own root processes
// hold: a process of the verifier user gets none, and no-new-privileges keeps it from gaining
// any), a read-only root, and tmpfs mounts. /workspace and /tender are root's and open to all
// the way /tmp is (sticky), so the verifier user adds files where it likes but cannot replace
// or move what Tender's user wrote there.
func hostConfig(lim sandbox.Limits) *container.HostConfig {
	yes := true
	pids := lim.Pids
	opts := "rw,exec,nosuid,nodev,size=%d,uid=%d,gid=%d,mode=%s"
	open := fmt.Sprintf(opts, lim.DiskBytes, sandbox.TenderUID, sandbox.TenderUID, "1777")
	return &container.HostConfig{
		NetworkMode:    "none",
		CapDrop:        []string{"ALL"},
		CapAdd:         []string{"CHOWN", "FOWNER"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		Init:           &yes,
		IpcMode:        "private",
		Tmpfs: map[string]string{
			boxLayout.Workspace: open,
			boxLayout.Tender:    open,
			"/tmp":              fmt.Sprintf(opts, lim.DiskBytes, sandbox.VerifierUID, sandbox.VerifierUID, "0755"),
		},
		Resources: container.Resources{
			Memory:     lim.Memory,
			MemorySwap: lim.Memory,
			NanoCPUs:   int64(lim.CPUs * 1e9),
			PidsLimit:  &pids,
		},
		ShmSize:   min(lim.DiskBytes, 64<<20),
		LogConfig: container.LogConfig{Type: "none"},
	}
}

var unsafeNameChars = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// containerName is "tender-<sanitized name>-<random>", valid for the engine and unique.
func containerName(name string) string {
	s := strings.Trim(unsafeNameChars.ReplaceAllString(name, "_"), "_.-")
	if len(s) > 60 {
		s = s[:60]
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	if s == "" {
		return "tender-" + hex.EncodeToString(r[:])
	}
	return "tender-" + s + "-" + hex.EncodeToString(r[:])
}

// removeBox kills and force-removes the container on a context that survives cancellation.
func (d *Backend) removeBox(ctx context.Context, b *box) {
	cctx, cancel := d.cleanupContext(ctx)
	defer cancel()
	// A container stopped from outside at the same moment (docker stop) can refuse a removal
	// while the engine is still stopping it: try again, a few times, before leaving it to gc.
	var err error
	for try := 0; try < 5; try++ {
		_, err = d.cli.ContainerRemove(cctx, b.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if err == nil || cerrdefs.IsNotFound(err) || cctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil && !cerrdefs.IsNotFound(err) {
		d.logf("could not remove container %s (%s): %v; `tender gc` will sweep it", b.name, b.id, err)
	}
}

// kill stops every process in the container at once. The engine has no API to kill an exec,
// so a deadline is enforced on the whole container.
func (d *Backend) kill(ctx context.Context, b *box) {
	cctx, cancel := d.cleanupContext(ctx)
	defer cancel()
	_, err := d.cli.ContainerKill(cctx, b.id, client.ContainerKillOptions{Signal: "KILL"})
	if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
		d.logf("kill container %s: %v", b.name, err)
	}
}

// ErrImageMissing means the image named by a suite is not available.
var ErrImageMissing = errors.New("verifier image missing")

// streamDrain gives the output streams a moment to drain once the process has exited; a
// background child holding the pipe open must not turn a finished check into a timeout.
const streamDrain = time.Second
