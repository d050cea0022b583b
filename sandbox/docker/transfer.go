package docker

import (
	"context"
	"fmt"
	"io"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// ImageID returns the ID of ref on this engine, "" when the engine does not have it.
func (d *Backend) ImageID(ctx context.Context, ref string) (string, error) {
	in, err := d.cli.ImageInspect(ctx, ref)
	switch {
	case err == nil:
		return in.ID, nil
	case cerrdefs.IsNotFound(err):
		return "", nil
	}
	return "", fmt.Errorf("%w: inspect image %s: %w", ErrEngine, ref, err)
}

// SaveImage writes ref as a `docker save` archive to w, so another engine can load it: no
// registry is needed to give a pool's engines the same image.
func (d *Backend) SaveImage(ctx context.Context, ref string, w io.Writer) error {
	rc, err := d.cli.ImageSave(ctx, []string{ref})
	if err != nil {
		return fmt.Errorf("%w: save image %s: %w", ErrEngine, ref, err)
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("%w: save image %s: %w", ErrEngine, ref, err)
	}
	return nil
}

// LoadImage loads a `docker save` archive read from r, and returns the engine's first error.
func (d *Backend) LoadImage(ctx context.Context, r io.Reader) error {
	rc, err := d.cli.ImageLoad(ctx, r, client.ImageLoadWithQuiet(true))
	if err != nil {
		return fmt.Errorf("%w: load image: %w", ErrEngine, err)
	}
	defer rc.Close()
	if err := relayJSON(rc, io.Discard); err != nil {
		return fmt.Errorf("%w: load image: %w", ErrEngine, err)
	}
	return nil
}
