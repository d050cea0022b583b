package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

// readTar lists an archive's members in order: "name type [linkname]".
func readTar(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		m := h.Name + " " + string(rune(h.Typeflag))
		if h.Typeflag == tar.TypeSymlink {
			m += " -> " + h.Linkname
		}
		out = append(out, m)
	}
}

// TestWriteTarLinks: a workspace's links travel as symlinks, each in the place of the regular
// file that stands for it on the host, which is not streamed; every other member is a file or
// a directory.
func TestWriteTarLinks(t *testing.T) {
	ws := writeFiles(t, map[string]string{"data/a.sql": "select 1\n", "test/fixtures/b.sql": "../../data/a.sql",
		"docs/src": "../data", "z.py": "Z = 1\n"})
	links := map[string]string{"test/fixtures/b.sql": "../../data/a.sql", "docs/src": "../data"}
	var buf bytes.Buffer
	if err := WriteTar(&buf, []TarEntry{{Dir: ws, Prefix: "workspace", Links: links}}); err != nil {
		t.Fatal(err)
	}
	members := readTar(t, buf.Bytes())
	want := []string{"workspace/data/ 5", "workspace/data/a.sql 0", "workspace/docs/ 5",
		"workspace/docs/src 2 -> ../data", "workspace/test/ 5", "workspace/test/fixtures/ 5",
		"workspace/test/fixtures/b.sql 2 -> ../../data/a.sql", "workspace/z.py 0"}
	if !slices.Equal(members, want) {
		t.Fatalf("members:\n%q\nwant:\n%q", members, want)
	}
}

// TestLinksRefused: a link that leaves the tree, a host file that does not hold its link's
// target, and a link whose host file is missing are refused by WriteTar and the local
// backend alike, before any link is made; the local backend leaves nothing behind.
func TestLinksRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		links map[string]string
		want  string
	}{
		{"absolute", map[string]string{"x": "/tmp/tender-canary"}, map[string]string{"x": "/tmp/tender-canary"},
			"absolute"},
		{"dot-dot out", map[string]string{"a/x": "../../tender-canary"}, map[string]string{"a/x": "../../tender-canary"},
			"above the root"},
		{"chain out", map[string]string{"sub/up": "..", "sub/a": "up/../tender-canary"},
			map[string]string{"sub/up": "..", "sub/a": "up/../tender-canary"}, "above the root"},
		{"host file retargeted", map[string]string{"x": "../tests/test_a.py"}, map[string]string{"x": "a.py"},
			"should hold the target"},
		{"host file missing", map[string]string{"y": "a.py"}, map[string]string{"x": "a.py"}, "is not in"},
		{"unclean path", map[string]string{"x": "a.py"}, map[string]string{"./x": "a.py"}, "clean relative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := writeFiles(t, tc.files)
			err := WriteTar(io.Discard, []TarEntry{{Dir: ws, Prefix: "workspace", Links: tc.links}})
			if !errors.Is(err, ErrUnsafeTree) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("WriteTar = %v, want ErrUnsafeTree with %q", err, tc.want)
			}
			l, _ := newTestLocal(t)
			l.TempDir = t.TempDir()
			spec := localSpec(t, "true")
			spec.Workspace, spec.Links = ws, tc.links
			if _, err := l.Run(context.Background(), spec); !errors.Is(err, ErrUnsafeTree) ||
				!strings.Contains(err.Error(), tc.want) {
				t.Errorf("local Run = %v, want ErrUnsafeTree with %q", err, tc.want)
			}
			if left, _ := os.ReadDir(l.TempDir); len(left) > 0 {
				t.Errorf("the local backend left %v behind", left)
			}
		})
	}
}

// TestLocalMakesLinks: the local backend makes the links in its copy, after the files, and a
// command reads through them.
func TestLocalMakesLinks(t *testing.T) {
	l, _ := newTestLocal(t)
	spec := localSpec(t, "sh", "-c", "cat test/fixtures/b.sql docs/src/a.sql; test -L docs/src && echo is-a-link")
	spec.Workspace = writeFiles(t, map[string]string{"data/a.sql": "select 1\n", "test/fixtures/b.sql": "../../data/a.sql",
		"docs/src": "../data"})
	spec.Links = map[string]string{"test/fixtures/b.sql": "../../data/a.sql", "docs/src": "../data"}
	res, err := l.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Stdout.String(); got != "select 1\nselect 1\nis-a-link\n" {
		t.Errorf("stdout %q, want the file read twice through the links", got)
	}
}
