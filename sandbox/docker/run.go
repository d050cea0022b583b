package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

// boxLayout is where the tokens point inside a container. The JUnit file lives under
// /tender, outside the workspace the candidate's tree was written to.
var boxLayout = sandbox.NewLayout("/workspace", "/tender")

// box is one started container.
type box struct {
	id, name, imageID string
}

// Run creates a new container for spec, streams the workspace in, runs the command under the
// deadline, collects the results and removes the container, whatever happened.
func (d *Backend) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Image == "" {
		return nil, fmt.Errorf("%w: %s: no image", sandbox.ErrBadSpec, spec.Name)
	}
	lim := spec.Limits.WithDefaults()
	b, err := d.startBox(ctx, spec, lim)
	if err != nil {
		return nil, err
	}
	defer d.removeBox(ctx, b)
	res := &sandbox.Result{Backend: "docker", Isolated: true, ImageID: b.imageID}
	dead, err := d.runCommand(ctx, b, spec, lim, res)
	if err != nil {
		return nil, err
	}
	if !res.TimedOut && !dead {
		if err := d.collect(ctx, b, lim, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func (d *Backend) startBox(ctx context.Context, spec sandbox.Spec, lim sandbox.Limits) (*box, error) {
	sctx, cancel := context.WithTimeout(ctx, d.SetupTimeout)
	defer cancel()
	img, err := d.cli.ImageInspect(sctx, spec.Image)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("%w: image %s is not on this machine (run `tender image build`, or pull it): %w", ErrImageMissing, spec.Image, err)
		}
		return nil, fmt.Errorf("%w: inspect image %s: %w", ErrEngine, spec.Image, err)
	}
	b := &box{name: containerName(spec.Name), imageID: img.ID}
	created, err := d.cli.ContainerCreate(sctx, client.ContainerCreateOptions{
		Config: containerConfig(spec, d.self, d.session), HostConfig: hostConfig(lim), Name: b.name,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: create container for %s: %w", ErrEngine, spec.Name, err)
	}
	b.id = created.ID
	if err := d.receive(sctx, b, spec); err != nil {
		d.removeBox(ctx, b)
		return nil, err
	}
	return b, nil
}

// receiveScript is the container's main process under docker-init. It unpacks the tar
// stream of the workspace and support trees from its stdin, says how that went on stdout
// (nothing else writes there), then idles so execs can run the command and read the report.
const receiveScript = `tar -x -f - -C / --no-same-owner --no-overwrite-dir || { echo ` + copyFailed + `; exec sleep infinity; }
echo ` + copyDone + `
exec sleep infinity`

const (
	copyDone   = "TENDER-COPY-DONE"
	copyFailed = "TENDER-COPY-FAILED"
)

// containerConfig opens stdin once, for the tar stream read by receiveScript.
func containerConfig(spec sandbox.Spec, o owner, session string) *container.Config {
	return &container.Config{
		Image:           spec.Image,
		User:            sandbox.VerifierUser,
		Entrypoint:      []string{"sh", "-c", receiveScript},
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

func hostConfig(lim sandbox.Limits) *container.HostConfig {
	yes := true
	pids := lim.Pids
	tmpfs := fmt.Sprintf("rw,exec,nosuid,nodev,size=%d,uid=65532,gid=65532,mode=0755", lim.DiskBytes)
	return &container.HostConfig{
		NetworkMode:    "none",
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		Init:           &yes,
		IpcMode:        "private",
		Tmpfs: map[string]string{
			boxLayout.Workspace: tmpfs,
			boxLayout.Tender:    tmpfs,
			"/tmp":              tmpfs,
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
	_, err := d.cli.ContainerRemove(cctx, b.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
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
