package docker

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// An image cache is a directory of `docker save` archives, one per recipe image and digest
// (Backend.ImageCache), that a CI job keeps between runs (actions/cache): EnsureRecipe loads
// an image from it instead of building it, and saves what it builds, or finds, there.
// An archive is loaded only when it names the recipe's image and nothing else, since
// `docker load` would otherwise retag any image of the engine; the loaded image must then
// carry the recipe's digest. What the cache holds is trusted as far as whoever wrote it.

var unsafeFileChars = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// cacheFile is the archive of r's image in the cache dir: NAME.DIGEST.tar, the name with
// its "/" and ":" made "_".
func cacheFile(dir string, r sandbox.Recipe) string {
	return filepath.Join(dir, cachePrefix(r)+r.Digest()+".tar")
}

func cachePrefix(r sandbox.Recipe) string {
	return unsafeFileChars.ReplaceAllString(r.Ref(), "_") + "."
}

// loadCached loads r's archive from the cache, when there is one, and returns the image's ID
// when it then carries r's digest. Any failure is a line of progress: the image is built.
func (d *Backend) loadCached(ctx context.Context, r sandbox.Recipe, progress io.Writer) (string, bool) {
	if d.ImageCache == "" {
		return "", false
	}
	path := cacheFile(d.ImageCache, r)
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(progress, "image %s: not in the image cache %s\n", r.Ref(), d.ImageCache)
		return "", false
	}
	start := time.Now()
	err := checkArchive(path, r.Ref())
	if err == nil {
		err = loadFile(ctx, d, path)
	}
	if err != nil {
		fmt.Fprintf(progress, "image %s: the image cache's %s is not used: %v\n", r.Ref(), path, err)
		return "", false
	}
	id, ok := d.currentImage(ctx, r)
	if !ok {
		fmt.Fprintf(progress, "image %s: %s loaded, but the image does not carry recipe digest %s\n",
			r.Ref(), path, r.Digest())
		return "", false
	}
	fmt.Fprintf(progress, "image %s: loaded %s from the image cache in %s (not built)\n", r.Ref(), shortID(id),
		time.Since(start).Round(100*time.Millisecond))
	return id, true
}

func loadFile(ctx context.Context, d *Backend, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return d.LoadImage(ctx, f)
}

// keepCached saves r's image to the cache when the cache has no archive of it, and removes
// the archives of r's image name with other digests. A failure is a line of progress: the
// image is there, and the next run builds it again.
func (d *Backend) keepCached(ctx context.Context, r sandbox.Recipe, progress io.Writer) {
	if d.ImageCache == "" {
		return
	}
	path := cacheFile(d.ImageCache, r)
	if _, err := os.Stat(path); err == nil {
		return
	}
	start := time.Now()
	if err := d.saveFile(ctx, r.Ref(), path); err != nil {
		fmt.Fprintf(progress, "image %s: not saved to the image cache: %v\n", r.Ref(), err)
		return
	}
	old, _ := filepath.Glob(filepath.Join(d.ImageCache, cachePrefix(r)+"*.tar"))
	for _, p := range old {
		if p != path {
			os.Remove(p)
		}
	}
	fmt.Fprintf(progress, "image %s: saved to the image cache as %s in %s\n", r.Ref(), path,
		time.Since(start).Round(100*time.Millisecond))
}

// saveFile writes ref's archive next to path, then renames it there: a reader never sees half.
func (d *Backend) saveFile(ctx context.Context, ref, path string) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tender-save-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = d.SaveImage(ctx, ref, f); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// errArchive is an archive the cache will not load.
var errArchive = errors.New("not an archive of that image alone")

// checkArchive reads a `docker save` archive and refuses it unless every image name in it
// (manifest.json's RepoTags; index.json's image-name annotations, read by engines with the
// containerd image store) is ref, and it names ref at least once.
func checkArchive(path, ref string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var names []string
	found := false
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %w", errArchive, err)
		}
		switch strings.TrimPrefix(h.Name, "./") {
		case "manifest.json":
			found = true
			n, err := manifestNames(tr)
			if err != nil {
				return fmt.Errorf("%w: manifest.json: %w", errArchive, err)
			}
			names = append(names, n...)
		case "index.json":
			n, err := indexNames(tr)
			if err != nil {
				return fmt.Errorf("%w: index.json: %w", errArchive, err)
			}
			names = append(names, n...)
		case "repositories":
			found = true // the legacy format names images here; refused below unless ref alone
			n, err := repositoriesNames(tr)
			if err != nil {
				return fmt.Errorf("%w: repositories: %w", errArchive, err)
			}
			names = append(names, n...)
		}
	}
	if !found || len(names) == 0 {
		return fmt.Errorf("%w: it names no image (want %s)", errArchive, ref)
	}
	for _, n := range names {
		if normalRef(n) != normalRef(ref) {
			return fmt.Errorf("%w: it names %s (want %s alone)", errArchive, n, ref)
		}
	}
	return nil
}

func manifestNames(r io.Reader) ([]string, error) {
	var m []struct{ RepoTags []string }
	if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&m); err != nil {
		return nil, err
	}
	var names []string
	for _, e := range m {
		names = append(names, e.RepoTags...)
	}
	return names, nil
}

func indexNames(r io.Reader) ([]string, error) {
	var ix struct {
		Manifests []struct{ Annotations map[string]string }
	}
	if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&ix); err != nil {
		return nil, err
	}
	var names []string
	for _, m := range ix.Manifests {
		if n := m.Annotations["io.containerd.image.name"]; n != "" {
			names = append(names, n)
		}
	}
	return names, nil
}

func repositoriesNames(r io.Reader) ([]string, error) {
	var repos map[string]map[string]string
	if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&repos); err != nil {
		return nil, err
	}
	var names []string
	for repo, tags := range repos {
		for tag := range tags {
			names = append(names, repo+":"+tag)
		}
	}
	slices.Sort(names)
	return names, nil
}

// normalRef is ref as the engine's containerd store writes it: docker.io/library/NAME:TAG
// for an official name, docker.io/NAME:TAG for one with a path, the tag latest when none.
func normalRef(ref string) string {
	if i := strings.LastIndex(ref, "/"); !strings.Contains(ref[i+1:], ":") {
		ref += ":latest"
	}
	first, _, hasPath := strings.Cut(ref, "/")
	switch {
	case !hasPath:
		return "docker.io/library/" + ref
	case strings.ContainsAny(first, ".:") || first == "localhost":
		return ref // a registry host already
	}
	return "docker.io/" + ref
}
