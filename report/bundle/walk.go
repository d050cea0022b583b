package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
)

// tree is what a walk of a bundle directory found: the regular files by bundle-relative
// path, and the entries it refused (symlinks, special files, unsafe names).
type tree struct {
	files   []string
	refused []*FileError
}

// walkBundle lists dir through root without following any symlink. The top-level envelope
// is left out; directories are not subjects (an empty directory is ignored).
func walkBundle(root *os.Root) (*tree, error) {
	t := &tree{}
	err := fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("bundle: reading %s: %w", name, err)
		}
		if name == "." || name == EnvelopeName {
			return nil
		}
		t.visit(name, d.Type())
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(t.files)
	return t, nil
}

// visit records one entry. A symlinked directory has ModeSymlink, so WalkDir never enters it.
func (t *tree) visit(name string, mode fs.FileMode) {
	switch {
	case mode.IsDir():
	case mode&fs.ModeSymlink != 0:
		t.refused = append(t.refused, fileErr(name, ErrUnsafe, "is a symlink; a bundle holds regular files only"))
	case !mode.IsRegular():
		t.refused = append(t.refused, fileErr(name, ErrUnsafe, "is a special file (%s); a bundle holds regular files only", mode.Type()))
	default:
		if err := checkFileName(name); err != nil {
			t.refused = append(t.refused, err)
			return
		}
		t.files = append(t.files, name)
	}
}

// digestFile opens name under root without following a final symlink, checks that what it
// opened is a regular file, and digests it.
func digestFile(root *os.Root, name string) (string, error) {
	f, err := root.OpenFile(name, openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fileErr(name, ErrMissing, "no such file")
	}
	if err != nil {
		return "", fileErr(name, ErrUnsafe, "cannot open as a regular file: %v", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("bundle: %s: %w", name, err)
	}
	if !info.Mode().IsRegular() {
		return "", fileErr(name, ErrUnsafe, "is not a regular file (%s)", info.Mode().Type())
	}
	sum, err := Digest(f)
	if err != nil {
		return "", fmt.Errorf("bundle: reading %s: %w", name, err)
	}
	return sum, nil
}
