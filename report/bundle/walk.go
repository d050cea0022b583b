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
		t.refused = append(
			t.refused,
			fileErr(name, ErrUnsafe, "is a special file (%s); a bundle holds regular files only", mode.Type()),
		)
	default:
		if err := checkFileName(name); err != nil {
			t.refused = append(t.refused, err)
			return
		}
		t.files = append(t.files, name)
	}
}

// digestFile digests a regular file of the bundle.
func digestFile(root *os.Root, name string) (string, error) {
	f, err := openRegular(root, name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sum, err := Digest(f)
	if err != nil {
		return "", &FileError{Path: name, Err: err}
	}
	return sum, nil
}

// openRegular opens name under root without following a final symlink (O_NOFOLLOW, and
// os.Root refuses links that leave the bundle), and checks that it opened a regular file.
func openRegular(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, openProblem(root, name, err)
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fileErr(name, ErrUnsafe, "is not a regular file (%s)", describeMode(info.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openProblem classifies a failed open: a symlink (even one pointing out of the bundle) is
// unsafe, an absent file is missing, a permission error is itself.
func openProblem(root *os.Root, name string, err error) error {
	if info, lerr := root.Lstat(name); lerr == nil && info.Mode()&fs.ModeSymlink != 0 || isSymlinkErr(err) {
		return fileErr(name, ErrUnsafe, "is a symlink; a bundle holds regular files only")
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fileErr(name, ErrMissing, "no such file")
	case errors.Is(err, fs.ErrPermission):
		return &FileError{Path: name, Err: err}
	}
	return fileErr(name, ErrUnsafe, "cannot open it inside the bundle: %v", err)
}
