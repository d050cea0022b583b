package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// EnsureImages ensures several images side by side (each recipe has its own build lock, so a
// build by another process is waited for, not repeated), with each progress line prefixed by
// its image. It returns their IDs by name.
func (d *Backend) EnsureImages(ctx context.Context, names []string, progress io.Writer) (map[string]string, error) {
	progress = orDiscard(progress)
	start := time.Now()
	ids := make(map[string]string, len(names))
	var mu sync.Mutex
	var g errgroup.Group
	for _, name := range names {
		g.Go(func() error {
			id, err := d.EnsureImage(ctx, name, &linePrefixer{w: progress, prefix: name + ": ", mu: &mu})
			mu.Lock()
			defer mu.Unlock()
			ids[name] = id
			return err
		})
	}
	err := g.Wait()
	if err == nil {
		fmt.Fprintf(progress, "images %v ready after %s\n", names, time.Since(start).Round(100*time.Millisecond))
	}
	return ids, err
}

// linePrefixer writes complete lines only, each with a prefix, so two builds' progress can
// share a writer.
type linePrefixer struct {
	w      io.Writer
	prefix string
	mu     *sync.Mutex
	buf    []byte
}

func (p *linePrefixer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		fmt.Fprintf(p.w, "%s%s", p.prefix, p.buf[:i+1])
		p.buf = p.buf[i+1:]
	}
}
