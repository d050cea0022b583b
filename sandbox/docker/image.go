package docker

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

// Labels on built images.
const (
	LabelRecipeDigest = "tender.recipe.digest"
	LabelRecipeName   = "tender.recipe.name"
)

// EnsureImage returns the ID of image, building a built-in one when it is missing or its
// recipe digest label differs. Any other image must exist locally, or be pullable. A build
// of the same recipe by another process is waited for, not repeated.
func (d *Backend) EnsureImage(ctx context.Context, ref string, progress io.Writer) (string, error) {
	progress = orDiscard(progress)
	if r, builtin := sandbox.BuiltinRecipe(ref); builtin {
		return d.EnsureRecipe(ctx, r, progress)
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

func (d *Backend) currentImage(ctx context.Context, r sandbox.Recipe) (string, bool) {
	in, err := d.cli.ImageInspect(ctx, r.Ref())
	if err != nil || in.Config == nil {
		return "", false
	}
	return in.ID, in.Config.Labels[LabelRecipeDigest] == r.Digest()
}

// inspectFailed returns the engine's error when inspecting ref fails for another reason than
// the image being absent: an engine in trouble is no reason for an offline rebuild.
func (d *Backend) inspectFailed(ctx context.Context, ref string) error {
	_, err := d.cli.ImageInspect(ctx, ref)
	if err == nil || cerrdefs.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("%w: inspect image %s: %w", ErrEngine, ref, err)
}

func (d *Backend) pull(ctx context.Context, ref string, progress io.Writer) (string, error) {
	fmt.Fprintf(progress, "image %s: not on this machine; pulling\n", ref)
	rc, err := d.cli.ImagePull(ctx, ref, client.ImagePullOptions{})
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

// BuildImage makes r's rootfs with debootstrap and streams it as a tar into the engine's
// image import. It needs the mirror, and no registry. Where the rootfs is made:
//   - when Tender runs in a container of this engine (a container action), in a helper
//     container started from that container's own image (BuildImageIn);
//   - otherwise on the host (sandbox.BuildRootfs), which needs root, as debootstrap does.
//
// Callers that may race another build of r hold sandbox.LockBuild, as EnsureImage does.
func (d *Backend) BuildImage(ctx context.Context, r sandbox.Recipe, progress io.Writer) (string, error) {
	progress = orDiscard(progress)
	if own, ok := d.ownContainer(ctx); ok {
		return d.buildIn(ctx, r, own, progress)
	}
	return d.buildImage(ctx, r, progress, func(ctx context.Context) error { return d.buildOnHost(ctx, r, progress) })
}

// buildImage runs build, which imports r's rootfs, and checks that the image carries r's
// digest.
func (d *Backend) buildImage(ctx context.Context, r sandbox.Recipe, progress io.Writer,
	build func(context.Context) error) (string, error) {
	start := time.Now()
	if err := build(ctx); err != nil {
		return "", err
	}
	id, ok := d.currentImage(ctx, r)
	if !ok {
		return "", fmt.Errorf(
			"%w: %s imported but its recipe label is not %s",
			sandbox.ErrImageBuild,
			r.Ref(),
			r.Digest(),
		)
	}
	fmt.Fprintf(progress, "image %s: built %s in %s\n", r.Ref(), shortID(id), time.Since(start).Round(time.Second))
	return id, nil
}

// buildOnHost makes the rootfs on the host and streams it into the engine.
func (d *Backend) buildOnHost(ctx context.Context, r sandbox.Recipe, progress io.Writer) error {
	start := time.Now()
	rootfs, err := sandbox.BuildRootfs(ctx, r, progress)
	if err != nil {
		return err
	}
	defer rootfs.Remove()
	fmt.Fprintf(progress, "image %s: rootfs ready after %s; importing\n", r.Ref(), time.Since(start).Round(time.Second))
	return rootfs.Stream(ctx, progress, func(tar io.Reader) error { return d.importRootfs(ctx, r, tar, progress) })
}

// importRootfs imports the tar stream of a rootfs as r.Ref(), with the recipe's user,
// working directory and environment, and its digest as a label.
func (d *Backend) importRootfs(ctx context.Context, r sandbox.Recipe, tar io.Reader, progress io.Writer) error {
	changes := append(r.Changes(), "LABEL "+LabelRecipeDigest+"="+r.Digest(), "LABEL "+LabelRecipeName+"="+r.Name)
	rc, err := d.cli.ImageImport(ctx, client.ImageImportSource{Source: tar, SourceName: "-"}, r.Ref(),
		client.ImageImportOptions{Changes: changes, Message: "tender " + sandbox.RecipeFormat + " " + r.Digest()})
	if err == nil {
		err = relayJSON(rc, progress)
		rc.Close()
	}
	if err != nil {
		return fmt.Errorf("%w: import %s: %w", sandbox.ErrImageBuild, r.Ref(), err)
	}
	return nil
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	return id[:min(12, len(id))]
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
