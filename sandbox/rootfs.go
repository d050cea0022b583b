package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tender-grader/tender/internal/scratch"
)

// Rootfs is the root filesystem of a verifier image, made on the host by debootstrap. Making
// it needs no engine: a backend turns it into an image by streaming it into its engine.
type Rootfs struct {
	Recipe Recipe
	Dir    string // the root filesystem
	tmp    string // Dir's parent, deleted by Remove
}

// BuildRootfs runs debootstrap for r from the machine's apt mirror (or r.Mirror) into a new
// temporary directory, then drops what a verifier never needs. It needs root (debootstrap
// does) and the mirror, and nothing else: no engine, no registry. The caller removes it.
func BuildRootfs(ctx context.Context, r Recipe, progress io.Writer) (*Rootfs, error) {
	progress = orDiscard(progress)
	mirror, keyring, err := r.Source()
	if err != nil {
		return nil, err
	}
	tmp, err := scratch.MkdirTemp("", "tender-rootfs-")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrImageBuild, err)
	}
	f := &Rootfs{Recipe: r, Dir: filepath.Join(tmp, "rootfs"), tmp: tmp}
	if err := debootstrap(ctx, r, f.Dir, mirror, keyring, progress); err != nil {
		f.Remove()
		return nil, err
	}
	trimRootfs(f.Dir)
	return f, nil
}

// Source returns the mirror debootstrap fetches r from, and the keyring that checks it: r's
// own, else the first apt source of this machine that carries r's suite (with its Signed-By
// keyring when that file exists here).
func (r Recipe) Source() (uri, keyring string, err error) {
	if r.Mirror != "" {
		return r.Mirror, r.Keyring, nil
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
	args := r.DebootstrapArgs(rootfs, mirror, keyring)
	cmd := exec.CommandContext(ctx, "debootstrap", args...)
	cmd.Env = []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LC_ALL=C.UTF-8",
		"DEBIAN_FRONTEND=noninteractive",
	}
	cmd.WaitDelay = 10 * time.Second
	// debootstrap dies with Tender: an orphan would go on writing into a directory the next
	// run's sweep removes. (It follows the thread that started debootstrap; Go's threads
	// live as long as the process.)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	tail := NewCapWriter(16 << 10)
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
		return fmt.Errorf("%w: debootstrap %s: %w\n%s", ErrImageBuild, strings.Join(args, " "), err, tail.Capture())
	}
	return nil
}

// DebootstrapArgs are debootstrap's arguments for r into target from mirror, checked with
// keyring when it is not empty.
func (r Recipe) DebootstrapArgs(target, mirror, keyring string) []string {
	args := []string{"--variant=" + r.Variant, "--include=" + strings.Join(r.Packages, ",")}
	if keyring != "" {
		args = append(args, "--keyring="+keyring)
	}
	return append(args, r.Suite, target, mirror)
}

// RootfsTrim are the globs, relative to a rootfs, of what a verifier never needs: downloaded
// packages, apt lists and logs.
var RootfsTrim = []string{"var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_*", "var/log/*.log"}

// RootfsTarArgs are tar's arguments that write the rootfs in dir to stdout: numeric owners,
// hard links and modes kept, one file system, /dev, /proc and /sys left empty.
func RootfsTarArgs(dir string) []string {
	return []string{"--numeric-owner", "--one-file-system", "-C", dir, "-cf", "-",
		"--exclude=./dev/*", "--exclude=./proc/*", "--exclude=./sys/*", "."}
}

// trimRootfs drops RootfsTrim from a rootfs.
func trimRootfs(rootfs string) {
	for _, g := range RootfsTrim {
		matches, _ := filepath.Glob(filepath.Join(rootfs, g))
		for _, m := range matches {
			os.Remove(m)
		}
	}
}

// Stream pipes the rootfs through tar (numeric owners, hard links and modes kept; /dev,
// /proc and /sys left empty) into consume, with progress every 64 MiB. An error from consume
// comes back as it is, and stops tar; a failure of tar itself wraps ErrImageBuild.
func (f *Rootfs) Stream(ctx context.Context, progress io.Writer, consume func(io.Reader) error) error {
	progress = orDiscard(progress)
	cmd := exec.CommandContext(ctx, "tar", RootfsTarArgs(f.Dir)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrImageBuild, err)
	}
	stderr := NewCapWriter(8 << 10)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: tar: %w", ErrImageBuild, err)
	}
	counted := &countingReader{r: out, progress: progress, every: 64 << 20}
	cerr := consume(counted)
	if cerr != nil {
		_ = cmd.Process.Kill()
	}
	io.Copy(io.Discard, out)
	werr := cmd.Wait()
	switch {
	case cerr != nil:
		return cerr
	case werr != nil:
		return fmt.Errorf("%w: tar of the rootfs: %w: %s", ErrImageBuild, werr, stderr.Capture())
	}
	fmt.Fprintf(progress, "image %s: streamed %d MiB\n", f.Recipe.Ref(), counted.n>>20)
	return nil
}

// Remove deletes the rootfs. It first detaches anything debootstrap left mounted (it mounts
// /proc and /sys in the target and may not unmount them on failure), and deletes nothing
// through a mount that would not go.
func (f *Rootfs) Remove() { _ = scratch.Remove(f.tmp) }

// buildLockDir holds the build locks. It is not os.TempDir(): TMPDIR differs between
// processes (testscript gives each script its own), and a lock is one per machine.
const buildLockDir = "/tmp"

// LockBuild serialises builds of one recipe on this machine, so concurrent graders (or test
// binaries) do not run debootstrap twice and do not re-import an image another process has
// just built. Hold it from the check that the image is missing until the image is in place,
// then call unlock. Waiting for another build ends with ctx.
func LockBuild(ctx context.Context, r Recipe) (unlock func(), err error) {
	return LockImage(ctx, r.Ref(), r.Digest())
}

// LockImage is LockBuild for any image build keyed by a digest (a Dockerfile's context).
func LockImage(ctx context.Context, ref, digest string) (unlock func(), err error) {
	path := filepath.Join(buildLockDir, "tender-image-"+digest[:16]+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: lock %s: %w", ErrImageBuild, path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("%w: lock %s: %w", ErrImageBuild, path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf(
				"%w: waiting for another build of %s (lock %s): %w",
				ErrImageBuild,
				ref,
				path,
				context.Cause(ctx),
			)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
