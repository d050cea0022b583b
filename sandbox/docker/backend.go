package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

var _ sandbox.Backend = (*Backend)(nil)

// ErrEngine wraps a failure to reach or use the Docker engine.
var ErrEngine = errors.New("docker engine")

// Backend runs each check in a brand-new hardened container through the Docker Engine API.
// New honours DOCKER_HOST and the other DOCKER_* client variables; NewAt opens one engine of a
// pool at its own address. Both negotiate the API version with the engine.
type Backend struct {
	cli     *client.Client
	self    owner
	session string // value of LabelSession on every container this Backend creates
	// Log receives one line per container event worth knowing (sweeps, kills). Nil discards.
	Log io.Writer
	// Grace bounds how long a kill and forced removal may take after a deadline.
	Grace time.Duration
	// SetupTimeout bounds creating the container and streaming the workspace in.
	SetupTimeout time.Duration
	// SweepForeignAfter, when positive, lets Sweep remove containers made on another host
	// (for example by an earlier container action) once they are this old.
	SweepForeignAfter time.Duration
	// CloseTimeout bounds the removals Close makes.
	CloseTimeout time.Duration
	// ImageCache, when set, is a directory of `docker save` archives of recipe images, one per
	// digest, that EnsureRecipe loads before it builds and saves to after (imagecache.go).
	ImageCache string
}

// New connects to the engine named by the environment (DOCKER_HOST, or the default
// socket), negotiates the API version and pings it.
func New(ctx context.Context) (*Backend, error) {
	return open(ctx, "is the daemon running, and is DOCKER_HOST right?", client.FromEnv)
}

// open connects with opts; hint says what to check when the engine cannot be reached.
func open(ctx context.Context, hint string, opts ...client.Opt) (*Backend, error) {
	cli, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEngine, err)
	}
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("%w: cannot reach it at %s (%s): %w", ErrEngine, cli.DaemonHost(), hint, err)
	}
	self, err := currentOwner()
	if err != nil {
		cli.Close()
		return nil, err
	}
	return &Backend{
		cli: cli, self: self, session: newSession(),
		Grace: 10 * time.Second, SetupTimeout: 2 * time.Minute, CloseTimeout: time.Minute,
	}, nil
}

// newSession names one Backend value's containers, so Close removes those and no others,
// whatever run IDs its callers chose.
func newSession() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Name is "docker".
func (d *Backend) Name() string { return "docker" }

// Close removes every container this Backend created that is still there, then releases the
// engine connection. A check removes its own container when it ends; Close catches what a
// failed removal left, or a create that reached the engine after its caller gave up.
func (d *Backend) Close(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.CloseTimeout)
	defer cancel()
	err := d.removeLabelled(cctx, LabelSession+"="+d.session)
	if err == nil { // a network is removed once its containers are gone
		_, err = d.sweepNetworks(cctx, func(l map[string]string) bool { return l[LabelSession] == d.session })
	}
	if err != nil {
		err = fmt.Errorf(
			"removing the containers this run started (`tender gc` sweeps them once the run has exited): %w",
			err,
		)
	}
	return errors.Join(err, d.cli.Close())
}

// APIVersion is the negotiated Engine API version.
func (d *Backend) APIVersion() string { return d.cli.ClientVersion() }

func (d *Backend) logf(format string, args ...any) {
	if d.Log != nil {
		fmt.Fprintf(d.Log, "sandbox: "+format+"\n", args...)
	}
}

// cleanupContext outlives a cancelled parent, so a cancelled run still removes its
// containers, but it has its own deadline.
func (d *Backend) cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), d.Grace+20*time.Second)
}
