package docker

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

// EnsureRecipe returns the ID of the image of an offline recipe (a built-in one, or a suite
// environment's), building it with debootstrap when it is missing or its recipe digest label
// differs. A build of the same recipe by another process is waited for, not repeated.
func (d *Backend) EnsureRecipe(ctx context.Context, r sandbox.Recipe, progress io.Writer) (string, error) {
	progress = orDiscard(progress)
	if id, ok := d.currentImage(ctx, r); ok {
		return id, nil
	}
	if err := d.inspectFailed(ctx, r.Ref()); err != nil {
		return "", err // the engine did not say the image is missing
	}
	fmt.Fprintf(progress, "image %s: missing or out of date; taking the build lock (another build of it is waited for)\n", r.Ref())
	unlock, err := sandbox.LockBuild(ctx, r)
	if err != nil {
		return "", err
	}
	defer unlock()
	if id, ok := d.currentImage(ctx, r); ok {
		fmt.Fprintf(progress, "image %s: built by another process meanwhile\n", r.Ref())
		return id, nil
	}
	if err := d.inspectFailed(ctx, r.Ref()); err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "image %s: building it offline\n", r.Ref())
	return d.BuildImage(ctx, r, progress)
}

// DockerfileBuild is an image built from a Dockerfile through the engine's API.
type DockerfileBuild struct {
	Ref        string // the tag, e.g. tender-env/NAME:<digest[:12]>
	Digest     string // over the build context's files; labelled on the image
	ContextDir string // host directory sent as the build context (regular files only)
	Dockerfile string // its path inside the context, slash-separated
}

// EnsureDockerfile returns the ID of b's image, building it when no image carries its tag
// and context digest. The build has no network: a FROM must name an image on this machine.
func (d *Backend) EnsureDockerfile(ctx context.Context, b DockerfileBuild, progress io.Writer) (string, error) {
	progress = orDiscard(progress)
	if id, ok, err := d.builtFrom(ctx, b); ok || err != nil {
		return id, err
	}
	unlock, err := sandbox.LockImage(ctx, b.Ref, b.Digest)
	if err != nil {
		return "", err
	}
	defer unlock()
	if id, ok, err := d.builtFrom(ctx, b); ok || err != nil { // another process built it meanwhile
		return id, err
	}
	start := time.Now()
	fmt.Fprintf(progress, "image %s: building %s through the engine (no network)\n", b.Ref, b.Dockerfile)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(sandbox.WriteTar(pw, []sandbox.TarEntry{{Dir: b.ContextDir}})) }()
	resp, err := d.cli.ImageBuild(ctx, pr, client.ImageBuildOptions{
		Tags: []string{b.Ref}, Dockerfile: b.Dockerfile, NetworkMode: "none", Remove: true, ForceRemove: true,
		Labels: map[string]string{LabelRecipeDigest: b.Digest, LabelRecipeName: b.Ref}, Version: build.BuilderV1,
	})
	if err != nil {
		pr.CloseWithError(err)
		return "", fmt.Errorf("%w: build %s from %s: %w", sandbox.ErrImageBuild, b.Ref, b.Dockerfile, err)
	}
	err = relayJSON(resp.Body, prefixedWriter{progress, "build: "})
	resp.Body.Close()
	pr.Close()
	if err != nil {
		return "", fmt.Errorf("%w: build %s from %s: %s", sandbox.ErrImageBuild, b.Ref, b.Dockerfile, oneLine(err.Error()))
	}
	in, err := d.cli.ImageInspect(ctx, b.Ref)
	if err != nil {
		return "", fmt.Errorf("%w: %s after its build: %w", sandbox.ErrImageBuild, b.Ref, err)
	}
	fmt.Fprintf(progress, "image %s: built %s in %s\n", b.Ref, shortID(in.ID), time.Since(start).Round(time.Second))
	return in.ID, nil
}

// builtFrom returns the ID of b's image when one carries its tag and context digest.
func (d *Backend) builtFrom(ctx context.Context, b DockerfileBuild) (string, bool, error) {
	in, err := d.cli.ImageInspect(ctx, b.Ref)
	switch {
	case err == nil:
		return in.ID, in.Config != nil && in.Config.Labels[LabelRecipeDigest] == b.Digest, nil
	case cerrdefs.IsNotFound(err):
		return "", false, nil
	}
	return "", false, fmt.Errorf("%w: inspect image %s: %w", ErrEngine, b.Ref, err)
}

var rePinned = regexp.MustCompile(`^(?:(.+)@)?(sha256:[0-9a-f]{64})$`)

// EnsurePinned returns the ID of an image named by its ID (sha256:...) or by NAME@sha256:...,
// where the digest is one of the image's repository digests or its ID (a locally built image
// has no repository digest). An image that is not on this machine is pulled by its digest.
func (d *Backend) EnsurePinned(ctx context.Context, ref string, progress io.Writer) (string, error) {
	g := rePinned.FindStringSubmatch(ref)
	if g == nil {
		return "", fmt.Errorf("%w: %s is not pinned by an ID or a digest", ErrImageMissing, ref)
	}
	name, digest := g[1], g[2]
	if name == "" {
		in, err := d.cli.ImageInspect(ctx, digest)
		if err != nil {
			return "", d.missing(ref, err)
		}
		if in.ID != digest {
			return "", fmt.Errorf("%w: %s names image %s, not an image with that ID", ErrImageMissing, ref, in.ID)
		}
		return in.ID, nil
	}
	if in, err := d.cli.ImageInspect(ctx, name); err == nil {
		for _, rd := range in.RepoDigests {
			if strings.HasSuffix(rd, "@"+digest) {
				return in.ID, nil
			}
		}
		if in.ID == digest {
			return in.ID, nil
		}
		fmt.Fprintf(orDiscard(progress), "image %s: the local %s is %s, not the pinned digest\n", ref, name, shortID(in.ID))
	} else if !cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("%w: inspect image %s: %w", ErrEngine, name, err)
	}
	return d.pull(ctx, name+"@"+digest, progress)
}

func (d *Backend) missing(ref string, err error) error {
	if cerrdefs.IsNotFound(err) {
		return fmt.Errorf("%w: %s is not on this machine; load or build it first (docker load, docker build)", ErrImageMissing, ref)
	}
	return fmt.Errorf("%w: inspect image %s: %w", ErrEngine, ref, err)
}

// prefixedWriter puts a prefix before each write (relayJSON writes whole lines).
type prefixedWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixedWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
