package gitsafe

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/tender-grader/tender/internal/scratch"
)

// applyBackup holds the state of every path a patch touches, so that a
// failed git apply (which can fail half way through writing) is undone.
type applyBackup struct {
	dir     string
	store   string                 // private copies of existing files, under store/files
	files   map[string]fs.FileMode // path -> original mode of files that existed
	absent  []string               // touched paths that did not exist
	dirs    []string               // touched paths that were directories
	newDirs []string               // directories that did not exist
	patch   *Patch                 // what is applied
}

func backup(dir string, paths []string) (*applyBackup, error) {
	store, err := scratch.MkdirTemp("", "tender-apply-")
	if err != nil {
		return nil, err
	}
	b := &applyBackup{dir: dir, store: store, files: map[string]fs.FileMode{}}
	for _, p := range paths {
		if err := b.save(p); err != nil {
			b.discard()
			return nil, err
		}
	}
	return b, nil
}

func (b *applyBackup) save(path string) error {
	full := filepath.Join(b.dir, filepath.FromSlash(path))
	fi, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		b.absent = append(b.absent, path)
		b.noteNewDirs(path)
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		b.dirs = append(b.dirs, path) // only an empty one is ever replaced (commit.go)
		return nil
	}
	if !fi.Mode().IsRegular() {
		return unsafePath(path, "is neither a regular file nor a directory in the target directory")
	}
	dst := b.saved(path)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	b.files[path] = fi.Mode().Perm()
	return copyFile(full, dst)
}

func (b *applyBackup) noteNewDirs(path string) {
	parts := strings.Split(path, "/")
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		if _, err := os.Lstat(filepath.Join(b.dir, filepath.FromSlash(d))); errors.Is(err, fs.ErrNotExist) {
			b.newDirs = append(b.newDirs, d)
		}
	}
}

// restore puts every touched path back as it was.
func (b *applyBackup) restore() error {
	var errs []error
	for _, p := range b.absent {
		err := os.RemoveAll(filepath.Join(b.dir, filepath.FromSlash(p)))
		if err != nil && !errors.Is(err, syscall.ENOTDIR) { // a parent is a file: p cannot exist
			errs = append(errs, err)
		}
	}
	for _, d := range b.dirs {
		errs = append(errs, restoreDir(filepath.Join(b.dir, filepath.FromSlash(d))))
	}
	for p, mode := range b.files {
		errs = append(errs, b.restoreFile(p, mode))
	}
	sort.Slice(b.newDirs, func(i, j int) bool { return len(b.newDirs[i]) > len(b.newDirs[j]) })
	for _, d := range b.newDirs {
		_ = os.Remove(filepath.Join(b.dir, filepath.FromSlash(d))) // only if empty
	}
	return errors.Join(errs...)
}

// restoreDir puts back a directory that a file replaced; it was empty (commit.go).
func restoreDir(full string) error {
	if fi, err := os.Lstat(full); err == nil && !fi.IsDir() {
		if err := os.Remove(full); err != nil {
			return err
		}
	}
	return os.MkdirAll(full, 0o755)
}

func (b *applyBackup) restoreFile(path string, mode fs.FileMode) error {
	full := filepath.Join(b.dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
		if err := os.RemoveAll(full); err != nil {
			return err
		}
	} else if err == nil {
		if err := os.Remove(full); err != nil {
			return err
		}
	}
	if err := copyFile(b.saved(path), full); err != nil {
		return err
	}
	return os.Chmod(full, mode)
}

// saved is where path's copy is kept: under files/, so no patch path meets the store's
// owner file.
func (b *applyBackup) saved(path string) string {
	return filepath.Join(b.store, "files", filepath.FromSlash(path))
}

func (b *applyBackup) discard() { _ = scratch.Remove(b.store) }

// changed lists the touched paths whose state now differs from the saved one: content or
// permissions of a file, a file or directory that appeared, went or changed kind.
func (b *applyBackup) changed() ([]string, error) {
	var out []string
	for _, p := range b.absent {
		if _, err := os.Lstat(filepath.Join(b.dir, filepath.FromSlash(p))); err == nil {
			out = append(out, p)
		}
	}
	for _, p := range b.dirs {
		if fi, err := os.Lstat(filepath.Join(b.dir, filepath.FromSlash(p))); err != nil || !fi.IsDir() {
			out = append(out, p)
		}
	}
	for p, mode := range b.files {
		same, err := b.sameFile(p, mode)
		if err != nil {
			return nil, err
		}
		if !same {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (b *applyBackup) sameFile(path string, mode fs.FileMode) (bool, error) {
	full := filepath.Join(b.dir, filepath.FromSlash(path))
	fi, err := os.Lstat(full)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != mode {
		return false, nil
	}
	now, err := os.ReadFile(full)
	if err != nil {
		return false, err
	}
	was, err := os.ReadFile(b.saved(path))
	if err != nil {
		return false, err
	}
	return bytes.Equal(now, was), nil
}
