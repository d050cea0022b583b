package gitsafe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// entryKind is what a path holds.
type entryKind int

const (
	entryAbsent entryKind = iota
	entryFile
	entryDir
)

// entry is the state a fallback step wants one touched path to have.
type entry struct {
	kind entryKind
	data []byte
	mode fs.FileMode // permission bits of a file
}

// commit writes the states a fallback step computed outside dir into dir, touching only the
// paths in states (each one a validated patch path with no symlink on the way, checked by
// checkApplyDir). It never replaces a directory that still holds anything, never writes
// through a symlink, and on any error leaves the rest to the caller's backup, which puts
// every touched path back.
func commit(dir string, states map[string]entry) error {
	paths := make([]string, 0, len(states))
	for p := range states {
		paths = append(paths, p)
	}
	// Removals deepest first, then directories and files shallowest first.
	sort.Slice(paths, func(i, j int) bool { return depth(paths[i]) > depth(paths[j]) })
	for _, p := range paths {
		if states[p].kind == entryAbsent {
			if err := removeEntry(dir, p); err != nil {
				return err
			}
		}
	}
	sort.SliceStable(paths, func(i, j int) bool { return depth(paths[i]) < depth(paths[j]) })
	for _, p := range paths {
		var err error
		switch e := states[p]; e.kind {
		case entryDir:
			err = makeDir(dir, p)
		case entryFile:
			err = writeEntry(dir, p, e)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func depth(p string) int { return strings.Count(p, "/") }

// removeEntry removes a file, or an empty directory, and then the parent directories the
// removal left empty, as git apply does.
func removeEntry(dir, p string) error {
	full := filepath.Join(dir, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.Remove(full); err != nil {
		if fi.IsDir() {
			return fmt.Errorf("%w: %s is a directory that is not empty", ErrPatchFailed, p)
		}
		return err
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if os.Remove(filepath.Join(dir, filepath.FromSlash(d))) != nil {
			break // not empty, or not there
		}
	}
	return nil
}

func makeDir(dir, p string) error {
	full := filepath.Join(dir, filepath.FromSlash(p))
	if fi, err := os.Lstat(full); err == nil && !fi.IsDir() {
		if err := os.Remove(full); err != nil {
			return err
		}
	}
	return os.MkdirAll(full, 0o755)
}

// writeEntry writes one file. An empty directory in its place is removed; anything else in
// its place, or a file where a parent directory should be, fails.
func writeEntry(dir, p string, e entry) error {
	full := filepath.Join(dir, filepath.FromSlash(p))
	if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
		if err := os.Remove(full); err != nil {
			return fmt.Errorf("%w: %s is a directory that is not empty", ErrPatchFailed, p)
		}
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrPatchFailed, p, err)
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, e.mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(e.data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return err
	}
	return os.Chmod(full, e.mode) // OpenFile's mode is filtered by the umask, and not applied to an existing file
}
