package restore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// workspace is the candidate's tree. Every access goes through root, so even a symlink that
// appeared between two checks could not lead outside; and every path is Lstat-ed component by
// component first, so none is followed inside either.
type workspace struct {
	root *os.Root
	dirs map[string]bool // directories already seen by Lstat; pruneEmpty forgets the ones it removes
}

type unsafeEntry struct{ path, kind string }

// walk lists every regular file (slash paths, sorted) and every entry that is neither a
// regular file nor a directory. It follows nothing. A top-level .git is skipped.
func (ws *workspace) walk() (files []string, unsafe []unsafeEntry, err error) {
	err = fs.WalkDir(ws.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		t := d.Type()
		switch {
		case p == ".git" && t.IsDir():
			return fs.SkipDir
		case p == ".git" && t.IsRegular():
		case t.IsDir() || p == ".":
		case t.IsRegular():
			files = append(files, p)
		default:
			unsafe = append(unsafe, unsafeEntry{p, kindOf(t)})
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("walking the workspace: %w", err)
	}
	return files, unsafe, nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "regular file"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// lstat is Lstat through the root; a missing entry gives (nil, nil).
func (ws *workspace) lstat(p string) (fs.FileInfo, error) {
	fi, err := ws.root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return fi, err
}

// blockingAncestor returns the first ancestor of p that exists and is not a directory, or "".
func (ws *workspace) blockingAncestor(p string) (string, fs.FileInfo, error) {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		a := strings.Join(parts[:i], "/")
		if ws.dirs[a] {
			continue
		}
		fi, err := ws.lstat(a)
		if err != nil || fi == nil {
			return "", nil, err // missing: MkdirAll makes the rest
		}
		if !fi.IsDir() {
			return a, fi, nil
		}
		ws.dirs[a] = true
	}
	return "", nil, nil
}

// sameFile reports whether p is a regular file with exactly data and perm.
func (ws *workspace) sameFile(p string, fi fs.FileInfo, data []byte, perm fs.FileMode) (bool, error) {
	if fi.Size() != int64(len(data)) || fi.Mode().Perm() != perm {
		return false, nil
	}
	got, err := ws.root.ReadFile(p)
	if err != nil {
		return false, err
	}
	return bytes.Equal(got, data), nil
}

// writeFile replaces p (a regular file or nothing) with data and mode perm, exactly.
func (ws *workspace) writeFile(p string, data []byte, perm fs.FileMode) error {
	if err := ws.root.MkdirAll(path.Dir(p), 0o755); err != nil {
		return err
	}
	if err := ws.root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := ws.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	return ws.root.Chmod(p, perm) // exact, whatever the umask
}

// pruneEmpty removes the directories among the ancestors of removed that are empty and that
// keep returns false for, deepest first.
func (ws *workspace) pruneEmpty(removed []string, keep func(string) bool) error {
	seen := map[string]bool{}
	var dirs []string
	for _, f := range removed {
		for d := path.Dir(f); d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range dirs {
		if keep(d) {
			continue
		}
		entries, err := fs.ReadDir(ws.root.FS(), d)
		if err != nil {
			return err
		}
		if len(entries) == 0 {
			if err := ws.root.Remove(d); err != nil {
				return err
			}
			delete(ws.dirs, d)
		}
	}
	return nil
}
