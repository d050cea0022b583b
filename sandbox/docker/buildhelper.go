package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

// A container action's own filesystem cannot hold a rootfs: it is mounted nodev (debootstrap
// refuses it), and the action runs without the capabilities debootstrap needs. So, when
// Tender runs in a container of the engine it talks to, it builds the rootfs in a helper
// container on that engine instead, started from its own image (which has debootstrap, and
// is already there: nothing is pulled). The rootfs comes out as a tar stream and is imported
// as BuildImage does on the host. No candidate code ever runs in a helper: only debootstrap,
// installing Debian's signed packages.

// helperDisk bounds the tmpfs the rootfs is built in. It holds only what debootstrap writes:
// about 270 MB for tender-verifier/pytest, 600 MB for tender-verifier/go.
const helperDisk = 4 << 30

// helperCaps are what debootstrap needs as root in a container: owners, modes and set-id bits
// of the unpacked files, device nodes in the target's /dev, and chroot for its second stage.
// Not CAP_SYS_ADMIN: debootstrap's /proc mount in the target then fails, which it allows, and
// the recipes build without it.
var helperCaps = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "MKNOD", "SYS_CHROOT"}

const (
	helperRoot    = "/build"        // the tmpfs
	helperTarget  = "/build/rootfs" // debootstrap's target
	helperKeyring = "/build/keyring.gpg"
)

var asRoot = execUser{"0:0", "/"}

var helperEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"LC_ALL=C.UTF-8",
	"DEBIAN_FRONTEND=noninteractive",
}

// liveContainer is a running container of the engine: its ID and its image's.
type liveContainer struct{ id, image string }

// ownContainer returns the container this process runs in, when that container is running
// on d's engine (the case of a container action).
func (d *Backend) ownContainer(ctx context.Context) (liveContainer, bool) {
	return d.firstRunning(ctx, sandbox.OwnContainerIDs())
}

// firstRunning returns the first of ids that names a running container of d's engine.
func (d *Backend) firstRunning(ctx context.Context, ids []string) (liveContainer, bool) {
	for _, id := range ids {
		in, err := d.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		c := in.Container
		if err != nil || !strings.HasPrefix(c.ID, id) || c.State == nil || !c.State.Running || c.Image == "" {
			continue
		}
		return liveContainer{id: c.ID, image: c.Image}, true
	}
	return liveContainer{}, false
}

// BuildImageIn is BuildImage with the rootfs made in a helper container of image, which must
// have debootstrap, sh, tar and sleep. BuildImage does this with its own container's image
// when Tender runs in a container of this engine.
func (d *Backend) BuildImageIn(
	ctx context.Context,
	r sandbox.Recipe,
	image string,
	progress io.Writer,
) (string, error) {
	return d.buildIn(ctx, r, liveContainer{image: image}, progress)
}

// buildIn builds in a helper of parent's image; parent.id, when known, is the helper's
// LabelParent.
func (d *Backend) buildIn(ctx context.Context, r sandbox.Recipe, parent liveContainer, progress io.Writer) (string, error) {
	progress = orDiscard(progress)
	return d.buildImage(ctx, r, progress, func(ctx context.Context) error {
		return d.buildInHelper(ctx, r, parent, progress)
	})
}

// buildInHelper makes r's rootfs in a helper container of parent's image and imports it as
// r.Ref(). The helper is removed whatever happens; after a crash, its labels let the sweep
// remove it (LabelParent: once parent is gone).
func (d *Backend) buildInHelper(ctx context.Context, r sandbox.Recipe, parent liveContainer, progress io.Writer) error {
	image := parent.image
	mirror, keyring, err := r.Source()
	if err != nil {
		return err
	}
	var key []byte
	if keyring != "" {
		if key, err = os.ReadFile(keyring); err != nil {
			return fmt.Errorf("%w: the mirror's keyring: %w", sandbox.ErrImageBuild, err)
		}
	}
	b, err := d.startHelper(ctx, r, parent)
	if err != nil {
		return err
	}
	defer d.removeBox(ctx, b)
	fmt.Fprintf(progress, "image %s: debootstrap in helper container %s (image %s, host network)\n",
		r.Ref(), b.name, shortID(image))
	if err := d.helperDebootstrap(ctx, b, r, mirror, key, progress); err != nil {
		return err
	}
	return d.helperExport(ctx, b, r, progress)
}

func (d *Backend) startHelper(ctx context.Context, r sandbox.Recipe, parent liveContainer) (*box, error) {
	b := &box{name: containerName("image-build-" + r.Name), imageID: parent.image}
	labels := d.self.labels("image-build-"+r.Digest()[:12], "image build "+r.Ref(), d.session)
	if parent.id != "" {
		labels[LabelParent] = parent.id
	}
	created, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:       b.name,
		Config:     helperConfig(parent.image, labels),
		HostConfig: helperHostConfig(),
	})
	if err != nil {
		return nil, fmt.Errorf("%w: create the image build helper from %s: %w", ErrEngine, shortID(parent.image), err)
	}
	b.id = created.ID
	if _, err := d.cli.ContainerStart(ctx, b.id, client.ContainerStartOptions{}); err != nil {
		d.removeBox(ctx, b)
		return nil, fmt.Errorf("%w: start the image build helper %s: %w", ErrEngine, b.name, err)
	}
	return b, nil
}

// helperConfig idles, so that execs can run debootstrap and tar as root.
func helperConfig(image string, labels map[string]string) *container.Config {
	return &container.Config{
		Image: image, User: "0:0", Entrypoint: []string{"sleep"}, Cmd: []string{"infinity"},
		WorkingDir: "/", Env: helperEnv, Labels: labels, StopTimeout: new(int),
	}
}

// helperHostConfig: the host's network (the mirror must be reached, and a CI machine may have
// no default bridge), helperCaps only, and a tmpfs that allows device nodes and executables.
func helperHostConfig() *container.HostConfig {
	yes := true
	pids := int64(4096)
	return &container.HostConfig{
		NetworkMode: "host",
		CapDrop:     []string{"ALL"},
		CapAdd:      helperCaps,
		SecurityOpt: []string{"no-new-privileges"},
		Init:        &yes,
		Tmpfs:       map[string]string{helperRoot: fmt.Sprintf("rw,exec,dev,suid,size=%d,mode=0755", helperDisk)},
		Resources:   container.Resources{PidsLimit: &pids},
		LogConfig:   container.LogConfig{Type: "none"},
	}
}

// helperScript writes the keyring from stdin (when key is set), runs debootstrap and trims
// the rootfs.
const helperScript = `set -e
if [ -n "$1" ]; then cat >"$1"; fi
target=$2
shift 2
debootstrap "$@"
cd "$target"
rm -f -- `

func (d *Backend) helperDebootstrap(
	ctx context.Context,
	b *box,
	r sandbox.Recipe,
	mirror string,
	key []byte,
	progress io.Writer,
) error {
	keyPath, stdin := "", []byte(nil)
	if key != nil {
		keyPath, stdin = helperKeyring, key
	}
	args := r.DebootstrapArgs(helperTarget, mirror, keyPath)
	argv := append([]string{"sh", "-c", helperScript + strings.Join(sandbox.RootfsTrim, " "), "sh", keyPath,
		helperTarget}, args...)
	e, err := d.startExecAs(ctx, b, asRoot, argv, helperEnv, stdin)
	if err != nil {
		return err
	}
	defer e.conn.Close()
	stop := context.AfterFunc(ctx, func() { e.conn.Close() })
	defer stop()
	tail := sandbox.NewCapWriter(16 << 10)
	out := io.MultiWriter(&linePrefixer{w: progress, prefix: "debootstrap: ", mu: &sync.Mutex{}}, tail)
	_, _ = stdcopy.StdCopy(out, out, e.conn.Reader)
	if ctx.Err() != nil {
		return fmt.Errorf("%w: debootstrap in %s: %w", sandbox.ErrImageBuild, b.name, context.Cause(ctx))
	}
	code, running, err := d.waitExit(ctx, e)
	switch {
	case err != nil:
		return err
	case running || code != 0:
		return fmt.Errorf("%w: debootstrap %s in helper %s: exit %d\n%s", sandbox.ErrImageBuild,
			strings.Join(args, " "), b.name, code, tail.Capture())
	}
	return nil
}

// helperExport streams the rootfs out of the helper with tar, into the engine's image import.
// A tar that fails after the import took its stream takes the imported image away again.
func (d *Backend) helperExport(ctx context.Context, b *box, r sandbox.Recipe, progress io.Writer) error {
	argv := append([]string{"tar"}, sandbox.RootfsTarArgs(helperTarget)...)
	e, err := d.startExecAs(ctx, b, asRoot, argv, helperEnv, nil)
	if err != nil {
		return err
	}
	defer e.conn.Close()
	pr, pw := io.Pipe()
	stderr := sandbox.NewCapWriter(8 << 10)
	counted := &byteCounter{w: pw}
	go func() {
		_, err := stdcopy.StdCopy(counted, stderr, e.conn.Reader)
		pw.CloseWithError(err)
	}()
	ierr := d.importRootfs(ctx, r, pr, progress)
	pr.CloseWithError(io.ErrClosedPipe) // an import that stopped early stops the copy
	e.conn.Close()
	code, running, err := d.waitExit(ctx, e)
	if err == nil && (running || code != 0) {
		err = fmt.Errorf("%w: tar of the rootfs in %s: exit %d: %s", sandbox.ErrImageBuild, b.name, code,
			stderr.Capture())
	}
	if err != nil {
		if ierr == nil {
			d.removeImage(ctx, r.Ref())
		}
		return err
	}
	if ierr != nil {
		return ierr
	}
	fmt.Fprintf(progress, "image %s: streamed %d MiB out of %s\n", r.Ref(), counted.n>>20, b.name)
	return nil
}

func (d *Backend) removeImage(ctx context.Context, ref string) {
	cctx, cancel := d.cleanupContext(ctx)
	defer cancel()
	if _, err := d.cli.ImageRemove(cctx, ref, client.ImageRemoveOptions{Force: true}); err != nil {
		d.logf("could not remove the incomplete image %s: %v", ref, err)
	}
}

type byteCounter struct {
	w io.Writer
	n int64
}

func (c *byteCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
