package sandbox

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteTarStreamsTreesAndExtras(t *testing.T) {
	ws := writeFiles(t, map[string]string{"README": "workspace\n", "pkg/mod.py": "VALUE = 1\n"})
	if err := os.Chmod(filepath.Join(ws, "README"), 0o755); err != nil {
		t.Fatal(err)
	}
	support := writeFiles(t, map[string]string{"assets/hidden.txt": "hidden\n"})
	var buf bytes.Buffer
	err := WriteTar(&buf, []TarEntry{
		{Dir: ws, Prefix: "workspace"},
		{Dir: support, Prefix: "tender", Extra: []string{"out", "home"}},
		{Prefix: "empty", Extra: []string{"only"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		got[h.Name] = string(rune(h.Typeflag)) + " " + os.FileMode(h.Mode).String() + " " + string(body)
	}
	want := map[string]string{
		"workspace/README":         "0 -rwxr-xr-x workspace\n",
		"workspace/pkg/":           "5 -rwxr-xr-x ",
		"workspace/pkg/mod.py":     "0 -rw-r--r-- VALUE = 1\n",
		"tender/out/":              "5 -rwxr-xr-x ",
		"tender/home/":             "5 -rwxr-xr-x ",
		"tender/assets/":           "5 -rwxr-xr-x ",
		"tender/assets/hidden.txt": "0 -rw-r--r-- hidden\n",
		"empty/only/":              "5 -rwxr-xr-x ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("archive (-want +got):\n%s", diff)
	}
}

func TestWriteTarRefusesLinksAndSpecialFiles(t *testing.T) {
	tests := []struct {
		name  string
		plant func(dir string) error
	}{
		{
			"symlink to a host file",
			func(dir string) error { return os.Symlink("/etc/passwd", filepath.Join(dir, "link")) },
		},
		{
			"symlink to a directory",
			func(dir string) error { return os.Symlink("/", filepath.Join(dir, "sub", "root")) },
		},
		{"fifo", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"sub/ok.txt": "ok\n"})
			if err := tt.plant(dir); err != nil {
				t.Fatal(err)
			}
			err := WriteTar(io.Discard, []TarEntry{{Dir: dir, Prefix: "workspace"}})
			if !errors.Is(err, ErrUnsafeTree) {
				t.Errorf("WriteTar = %v, want ErrUnsafeTree", err)
			}
			l, _ := NewLocal(true)
			spec := Spec{RunID: testRunID(t), Name: t.Name(), Workspace: dir, Command: []string{"true"}}
			if _, err := l.Run(t.Context(), spec); !errors.Is(err, ErrUnsafeTree) || !errors.Is(err, ErrCopyIn) {
				t.Errorf("local Run = %v, want ErrCopyIn wrapping ErrUnsafeTree", err)
			}
		})
	}
}
