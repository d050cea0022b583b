package restore

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// dirBase is a Base over a real directory: the base commit, checked out.
type dirBase struct{ dir string }

func (b dirBase) Files() []string {
	var out []string
	err := filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(b.dir, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		panic(err)
	}
	return out
}

func (b dirBase) ReadFile(p string) ([]byte, error) {
	return os.ReadFile(filepath.Join(b.dir, filepath.FromSlash(p)))
}

func (b dirBase) FileMode(p string) (fs.FileMode, error) {
	fi, err := os.Lstat(filepath.Join(b.dir, filepath.FromSlash(p)))
	if err != nil {
		return 0, err
	}
	return fi.Mode(), nil
}

// noModeBase hides FileMode, to test the 0644 fallback.
type noModeBase struct{ b dirBase }

func (n noModeBase) Files() []string                   { return n.b.Files() }
func (n noModeBase) ReadFile(p string) ([]byte, error) { return n.b.ReadFile(p) }

// file is the content and mode of one regular file; a tree maps slash paths to files.
type file struct {
	Data string
	Mode fs.FileMode
}

func writeTree(t testing.TB, dir string, tree map[string]file) {
	t.Helper()
	for p, f := range tree {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(full, []byte(f.Data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree reads every entry under dir; directories appear as "dir/" with no content.
func readTree(t testing.TB, dir string) map[string]file {
	t.Helper()
	out := map[string]file{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[rel+"/"] = file{Mode: info.Mode().Perm() | fs.ModeDir}
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = file{Data: string(data), Mode: info.Mode().Perm()}
		default:
			out[rel] = file{Mode: info.Mode()}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyTree(t testing.TB, from, to string) {
	t.Helper()
	tree := readTree(t, from)
	files := map[string]file{}
	for p, f := range tree {
		if f.Mode&fs.ModeDir == 0 {
			files[p] = f
		}
	}
	writeTree(t, to, files)
}
