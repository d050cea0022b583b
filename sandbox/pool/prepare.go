package pool

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// Images is what a pool needs of an engine to give it an image another engine has.
type Images interface {
	// ImageID returns the image's ID on this engine, "" when it does not have it.
	ImageID(ctx context.Context, ref string) (string, error)
	// SaveImage writes the image as an archive that LoadImage reads.
	SaveImage(ctx context.Context, ref string, w io.Writer) error
	LoadImage(ctx context.Context, r io.Reader) error
}

// Ensure makes an image on one engine (finding, building or pulling it) and returns its ID.
type Ensure func(ctx context.Context, e Engine) (string, error)

// PrepareImage gives every engine in the pool the image ref, with the same ID. The image is
// ensured once, on an engine that has it already when one does (so nothing is rebuilt that
// a peer holds), and copied from there to each engine that lacks it. An engine that cannot
// get it is taken out. The error is ensure's, or ErrNoEngine.
func (p *Pool) PrepareImage(ctx context.Context, ref string, ensure Ensure, progress io.Writer) (string, error) {
	in := p.In()
	if len(in) == 0 {
		return "", p.noEngine()
	}
	have := make([]string, len(in))
	src := 0
	for i := len(in) - 1; i >= 0; i-- {
		if im, ok := in[i].Engine.(Images); ok {
			have[i], _ = im.ImageID(ctx, ref)
		}
		if have[i] != "" {
			src = i
		}
	}
	id, err := ensure(ctx, in[src].Engine)
	if err != nil {
		return "", err
	}
	for i, m := range in {
		if i == src || have[i] == id {
			continue
		}
		if err := p.copyImage(ctx, in[src], m, ref, id, progress); err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			p.TakeOut(
				m.Name,
				fmt.Sprintf("it cannot get image %s (%s) from %s: %s", ref, short(id), in[src].Name, oneLine(err)),
			)
		}
	}
	if len(p.In()) == 0 {
		return "", p.noEngine()
	}
	return id, nil
}

// copyImage streams the image from src to dst through the two engines' APIs and checks that
// dst then has it under the same ID. A reference pinned by digest is copied by its ID.
func (p *Pool) copyImage(ctx context.Context, src, dst Member, ref, id string, progress io.Writer) error {
	from, ok1 := src.Engine.(Images)
	to, ok2 := dst.Engine.(Images)
	if !ok1 || !ok2 {
		return fmt.Errorf("the engine cannot copy images")
	}
	name := ref
	if strings.Contains(ref, "@") || strings.HasPrefix(ref, "sha256:") {
		name = id
	}
	start := time.Now()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(from.SaveImage(ctx, name, pw)) }()
	err := to.LoadImage(ctx, pr)
	pr.CloseWithError(err)
	if err != nil {
		return err
	}
	got, err := to.ImageID(ctx, name)
	if err != nil {
		return err
	}
	if got != id {
		return fmt.Errorf("after the copy %s is %s there, not %s", name, short(got), short(id))
	}
	if progress != nil {
		fmt.Fprintf(progress, "tender: pool: image %s (%s) copied from %s to %s in %s\n", ref, short(id), src.Name,
			dst.Name, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

func short(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	return id[:min(12, len(id))]
}
