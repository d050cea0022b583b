package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
)

// ErrImageBuild wraps a failed verifier image build.
var ErrImageBuild = errors.New("verifier image build failed")

// EnsureImage returns the ID of image, building a built-in one when it is missing or its
// recipe digest label differs. Any other image must exist locally, or be pullable.
func (d *Docker) EnsureImage(ctx context.Context, ref string, progress io.Writer) (string, error) {
	progress = orDiscard(progress)
	r, builtin := BuiltinRecipe(ref)
	if builtin {
		if id, ok := d.currentImage(ctx, r); ok {
			return id, nil
		}
		unlock, err := lockBuild(r)
		if err != nil {
			return "", err
		}
		defer unlock()
		if id, ok := d.currentImage(ctx, r); ok { // another process built it meanwhile
			return id, nil
		}
		fmt.Fprintf(progress, "image %s: missing or out of date; building it offline\n", r.ref())
		return d.BuildImage(ctx, r, progress)
	}
	in, err := d.cli.ImageInspect(ctx, ref)
	if err == nil {
		return in.ID, nil
	}
	if !cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("%w: inspect image %s: %w", ErrEngine, ref, err)
	}
	return d.pull(ctx, ref, progress)
}

func (d *Docker) currentImage(ctx context.Context, r Recipe) (string, bool) {
	in, err := d.cli.ImageInspect(ctx, r.ref())
	if err != nil || in.Config == nil {
		return "", false
	}
	return in.ID, in.Config.Labels[LabelRecipeDigest] == r.Digest()
}

func (d *Docker) pull(ctx context.Context, ref string, progress io.Writer) (string, error) {
	fmt.Fprintf(progress, "image %s: not on this machine; pulling\n", ref)
	rc, err := d.cli.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return "", fmt.Errorf("%w: %s is not on this machine and cannot be pulled: %w", ErrImageMissing, ref, err)
	}
	err = relayJSON(rc, progress)
	rc.Close()
	if err != nil {
		return "", fmt.Errorf("%w: pull %s: %w", ErrImageMissing, ref, err)
	}
	in, err := d.cli.ImageInspect(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("%w: %s after pull: %w", ErrImageMissing, ref, err)
	}
	return in.ID, nil
}

// BuildImage makes the rootfs with debootstrap from the machine's apt mirror, then streams
// it as a tar into the engine's image import. It needs root (debootstrap does) and network
// access to the mirror, and nothing else: no registry.
func (d *Docker) BuildImage(ctx context.Context, r Recipe, progress io.Writer) (string, error) {
	progress = orDiscard(progress)
	start := time.Now()
	mirror, keyring, err := r.mirror()
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "tender-rootfs-")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrImageBuild, err)
	}
	defer removeRootfs(tmp)
	rootfs := filepath.Join(tmp, "rootfs")
	if err := debootstrap(ctx, r, rootfs, mirror, keyring, progress); err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "image %s: rootfs ready after %s; importing\n", r.ref(), time.Since(start).Round(time.Second))
	trimRootfs(rootfs)
	if err := d.importRootfs(ctx, r, rootfs, progress); err != nil {
		return "", err
	}
	id, ok := d.currentImage(ctx, r)
	if !ok {
		return "", fmt.Errorf("%w: %s imported but its recipe label is not %s", ErrImageBuild, r.ref(), r.Digest())
	}
	fmt.Fprintf(progress, "image %s: built %s in %s\n", r.ref(), shortID(id), time.Since(start).Round(time.Second))
	return id, nil
}

func (r Recipe) mirror() (uri, keyring string, err error) {
	if r.Mirror != "" {
		return r.Mirror, "", nil
	}
	src, err := FindMirror("/", r.Suite)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrImageBuild, err)
	}
	if src.SignedBy != "" {
		if _, err := os.Stat(src.SignedBy); err != nil {
			src.SignedBy = ""
		}
	}
	return src.URI, src.SignedBy, nil
}

func debootstrap(ctx context.Context, r Recipe, rootfs, mirror, keyring string, progress io.Writer) error {
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return fmt.Errorf("%w: debootstrap is not installed (apt-get install debootstrap): %w", ErrImageBuild, err)
	}
	args := []string{"--variant=" + r.Variant, "--include=" + strings.Join(r.Packages, ",")}
	if keyring != "" {
		args = append(args, "--keyring="+keyring)
	}
	args = append(args, r.Suite, rootfs, mirror)
	cmd := exec.CommandContext(ctx, "debootstrap", args...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C.UTF-8", "DEBIAN_FRONTEND=noninteractive"}
	cmd.WaitDelay = 10 * time.Second
	tail := newCapWriter(16 << 10)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
		relayLines(pr, io.MultiWriter(prefixed{progress, "debootstrap: "}, tail))
	}()
	err := cmd.Run()
	pw.Close()
	<-relayed
	if err != nil {
		return fmt.Errorf("%w: debootstrap %s: %w\n%s", ErrImageBuild, strings.Join(args, " "), err, tail.capture())
	}
	return nil
}

// trimRootfs drops what a verifier never needs: downloaded packages and apt lists.
func trimRootfs(rootfs string) {
	for _, g := range []string{"var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_*", "var/log/*.log"} {
		matches, _ := filepath.Glob(filepath.Join(rootfs, g))
		for _, m := range matches {
			os.Remove(m)
		}
	}
}

// importRootfs pipes the rootfs through tar (numeric owners, hard links and modes kept) into
// the engine's import, with the user, working directory, environment and recipe label set.
func (d *Docker) importRootfs(ctx context.Context, r Recipe, rootfs string, progress io.Writer) error {
	cmd := exec.CommandContext(ctx, "tar", "--numeric-owner", "--one-file-system", "-C", rootfs, "-cf", "-",
		"--exclude=./dev/*", "--exclude=./proc/*", "--exclude=./sys/*", ".")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrImageBuild, err)
	}
	stderr := newCapWriter(8 << 10)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: tar: %w", ErrImageBuild, err)
	}
	counted := &countingReader{r: out, progress: progress, every: 64 << 20}
	changes := append(r.changes(), "LABEL "+LabelRecipeDigest+"="+r.Digest(), "LABEL "+LabelRecipeName+"="+r.Name)
	rc, ierr := d.cli.ImageImport(ctx, image.ImportSource{Source: counted, SourceName: "-"}, r.ref(),
		image.ImportOptions{Changes: changes, Message: "tender " + recipeFormat + " " + r.Digest()})
	if ierr == nil {
		ierr = relayJSON(rc, progress)
		rc.Close()
	}
	io.Copy(io.Discard, out)
	werr := cmd.Wait()
	switch {
	case ierr != nil:
		return fmt.Errorf("%w: import %s: %w", ErrImageBuild, r.ref(), ierr)
	case werr != nil:
		return fmt.Errorf("%w: tar of the rootfs: %w: %s", ErrImageBuild, werr, stderr.capture())
	}
	fmt.Fprintf(progress, "image %s: imported %d MiB\n", r.ref(), counted.n>>20)
	return nil
}

// removeRootfs detaches anything debootstrap left mounted (it mounts /proc and /sys in the
// target and may not unmount them on failure) before deleting, so no host mount is touched.
func removeRootfs(dir string) {
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	sc := bufio.NewScanner(strings.NewReader(string(mounts)))
	var under []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			under = append(under, f[4])
		}
	}
	for i := len(under) - 1; i >= 0; i-- {
		_ = syscall.Unmount(under[i], syscall.MNT_DETACH)
	}
	if len(under) > 0 {
		return // leave it rather than risk deleting through a mount we could not detach
	}
	os.RemoveAll(dir)
}

// lockBuild serialises builds of one recipe on this machine, so concurrent graders do not
// run debootstrap twice.
func lockBuild(r Recipe) (func(), error) {
	path := filepath.Join(os.TempDir(), "tender-image-"+r.Digest()[:16]+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: lock %s: %w", ErrImageBuild, path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: lock %s: %w", ErrImageBuild, path, err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// relayJSON forwards the engine's JSON progress messages as plain lines, and returns the
// first error message in the stream.
func relayJSON(r io.Reader, progress io.Writer) error {
	dec := json.NewDecoder(r)
	for {
		var m struct {
			Status, Progress, ID string
			Error                string
		}
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if m.Error != "" {
			return errors.New(m.Error)
		}
		if m.Status != "" && m.Progress == "" {
			fmt.Fprintf(progress, "engine: %s %s\n", m.ID, m.Status)
		}
	}
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	return id[:min(12, len(id))]
}
