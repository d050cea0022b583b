package docker

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/tender-grader/tender/sandbox"
)

func writeTar(t *testing.T, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "image.tar")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckArchive: the cache loads an archive only when every image name in it is the
// recipe's: `docker load` would retag any image the archive names.
func TestCheckArchive(t *testing.T) {
	const ref = "tender-verifier/pytest:latest"
	good := `[{"Config":"c.json","RepoTags":["tender-verifier/pytest:latest"],"Layers":["l/layer.tar"]}]`
	for _, tc := range []struct {
		name  string
		files map[string]string
		ok    bool
	}{
		{"the image alone", map[string]string{"manifest.json": good}, true},
		{"with an OCI index naming it", map[string]string{"manifest.json": good, "index.json": `{"manifests":[` +
			`{"annotations":{"io.containerd.image.name":"docker.io/tender-verifier/pytest:latest"}}]}`}, true},
		{"a second tag", map[string]string{"manifest.json": `[{"RepoTags":["tender-verifier/pytest:latest",` +
			`"tender-action:local"]}]`}, false},
		{"a second image", map[string]string{"manifest.json": good[:len(good)-1] +
			`,{"RepoTags":["debian:bookworm"]}]`}, false},
		{"another image", map[string]string{"manifest.json": `[{"RepoTags":["tender-verifier/go:latest"]}]`}, false},
		{"an index naming another", map[string]string{"manifest.json": good, "index.json": `{"manifests":[` +
			`{"annotations":{"io.containerd.image.name":"docker.io/library/debian:bookworm"}}]}`}, false},
		{"legacy repositories naming another", map[string]string{"manifest.json": good,
			"repositories": `{"debian":{"bookworm":"abc"}}`}, false},
		{"no name", map[string]string{"manifest.json": `[{"RepoTags":null}]`}, false},
		{"no manifest", map[string]string{"layer.tar": "x"}, false},
		{"not JSON", map[string]string{"manifest.json": "{"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkArchive(writeTar(t, tc.files), ref)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, errArchive)) {
				t.Errorf("checkArchive = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	junk := filepath.Join(t.TempDir(), "junk.tar")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("x"), 2000), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkArchive(junk, ref); !errors.Is(err, errArchive) {
		t.Errorf("checkArchive(junk) = %v, want errArchive", err)
	}
}

func TestNormalRef(t *testing.T) {
	for in, want := range map[string]string{
		"debian":                         "docker.io/library/debian:latest",
		"debian:bookworm":                "docker.io/library/debian:bookworm",
		"tender-verifier/pytest":         "docker.io/tender-verifier/pytest:latest",
		"docker.io/tender-verifier/x:v1": "docker.io/tender-verifier/x:v1",
		"localhost:5000/a/b":             "localhost:5000/a/b:latest",
	} {
		if got := normalRef(in); got != want {
			t.Errorf("normalRef(%q) = %q, want %q", in, got, want)
		}
	}
}

// cacheRecipe is a recipe of this test's own, whose image is a one-file rootfs imported with
// the recipe's labels (importRootfs), so no debootstrap runs. Its mirror answers nothing, so
// an attempt to build it fails at once instead of building.
func cacheRecipe(t *testing.T) sandbox.Recipe {
	r := sandbox.Recipe{Name: "tender-test/" + testRunID(t), Suite: "bookworm", Variant: "minbase",
		Packages: []string{"tender-test-none"}, Mirror: "http://127.0.0.1:1/debian"}
	t.Cleanup(func() { removeTestImage(r.Ref()) })
	return r
}

func importTiny(t *testing.T, r sandbox.Recipe) {
	t.Helper()
	f, err := os.Open(writeTar(t, map[string]string{"etc/tender-test": r.Name + "\n"}))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := engine.importRootfs(t.Context(), r, f, io.Discard); err != nil {
		t.Fatal(err)
	}
}

func imageGone(t *testing.T, ref string) bool {
	t.Helper()
	_, err := engine.cli.ImageInspect(t.Context(), ref)
	if err != nil && !cerrdefs.IsNotFound(err) {
		t.Fatal(err)
	}
	return err != nil
}

// TestImageCacheSavesAndLoads: an image present is saved to the cache (and an archive of an
// older digest of it removed); once the image is gone, EnsureRecipe loads it from the cache
// and builds nothing; an archive that names another image is refused, and then the build runs.
func TestImageCacheSavesAndLoads(t *testing.T) {
	r := cacheRecipe(t)
	importTiny(t, r)
	d := *engine
	d.ImageCache = t.TempDir()
	stale := filepath.Join(d.ImageCache, cachePrefix(r)+strings.Repeat("0", 64)+".tar")
	other := filepath.Join(d.ImageCache, "tender-verifier_go_latest."+strings.Repeat("0", 64)+".tar")
	for _, p := range []string{stale, other} {
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	id, err := d.EnsureRecipe(t.Context(), r, &log)
	if err != nil {
		t.Fatalf("EnsureRecipe of the present image: %v\n%s", err, &log)
	}
	archive := cacheFile(d.ImageCache, r)
	if _, err := os.Stat(archive); err != nil || !strings.Contains(log.String(), "saved to the image cache") {
		t.Fatalf("the image was not saved to the cache (%v):\n%s", err, &log)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the archive of an older digest was kept: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the archive of another image was removed: %v", err)
	}

	removeTestImage(r.Ref())
	log.Reset()
	got, err := d.EnsureRecipe(t.Context(), r, &log)
	if err != nil || got != id {
		t.Fatalf("EnsureRecipe from the cache = %s, %v; want %s\n%s", got, err, id, &log)
	}
	if !strings.Contains(log.String(), "from the image cache") || strings.Contains(log.String(), "building") {
		t.Errorf("want the image loaded from the cache, not built:\n%s", &log)
	}

	// An archive that also names another image is not loaded: the build runs (and fails here).
	removeTestImage(r.Ref())
	canary := "tender-test/canary-" + testRunID(t)
	t.Cleanup(func() { removeTestImage(canary) })
	forged := writeTar(t, map[string]string{"manifest.json": `[{"RepoTags":["` + r.Ref() + `","` + canary + `"]}]`})
	b, err := os.ReadFile(forged)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(archive, b, 0o644); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	if _, err := d.EnsureRecipe(t.Context(), r, &log); !errors.Is(err, sandbox.ErrImageBuild) {
		t.Errorf("EnsureRecipe with a forged archive = %v, want the build tried (ErrImageBuild)\n%s", err, &log)
	}
	if !strings.Contains(log.String(), "is not used") || !imageGone(t, canary) || !imageGone(t, r.Ref()) {
		t.Errorf("the forged archive was loaded:\n%s", &log)
	}
}
