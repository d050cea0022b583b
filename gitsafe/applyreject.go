package gitsafe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tender-grader/tender/internal/scratch"
)

// rejectStep runs `git apply --reject` on a private mirror of the paths the patch touches,
// never on dir: --reject applies the hunks it can and writes a .rej file for each one it
// cannot, and exits non-zero then. The step counts only when git exits 0 and wrote no .rej
// file, that is when every hunk applied; it then returns the touched paths' new states for
// commit. (In SWE-bench's chain a failed --reject leaves its partial result in the tree for
// `patch` to run on; here nothing of it survives.)
func rejectStep(ctx context.Context, p *Patch, dir string) (map[string]entry, error) {
	root, err := scratch.MkdirTemp("", "tender-reject-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = scratch.Remove(root) }()
	tree := filepath.Join(root, "tree")
	if err := os.Mkdir(tree, 0o700); err != nil {
		return nil, err
	}
	paths := p.Paths()
	if err := mirror(dir, tree, paths); err != nil {
		return nil, err
	}
	if _, err := runGit(ctx, applyCall(tree, p.Raw, "--reject", "--whitespace=nowarn")); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrPatchFailed, rejectSummary(err))
	}
	if rej, err := findRejects(tree, paths); err != nil || rej != "" {
		return nil, errors.Join(err, fmt.Errorf("%w: git apply --reject exited 0 but left %s", ErrPatchFailed, rej))
	}
	states := make(map[string]entry, len(paths))
	for _, path := range paths {
		e, err := readEntry(filepath.Join(tree, filepath.FromSlash(path)), path)
		if err != nil {
			return nil, err
		}
		states[path] = e
	}
	return states, nil
}

// occupied names the file that stands, in the mirror, for what a directory holds besides the
// touched paths: git may replace or remove an empty directory, never one with files in it.
const occupied = ".tender-occupied"

// mirror copies into tree what git apply looks at when it applies to dir: every touched path
// and every directory or file on the way to it. A directory that holds more than the touched
// paths gets a stand-in file, so that it is not empty in the mirror either.
func mirror(dir, tree string, paths []string) error {
	covered := map[string]bool{}
	for _, p := range paths {
		for q := p; q != "."; q = filepath.ToSlash(filepath.Dir(q)) {
			covered[q] = true
		}
	}
	for _, p := range paths {
		parts := strings.Split(p, "/")
		for i := range parts {
			rel := strings.Join(parts[:i+1], "/")
			more, err := mirrorOne(dir, tree, rel, covered)
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	return nil
}

// mirrorOne copies one path and reports whether a path below it can exist.
func mirrorOne(dir, tree, rel string, covered map[string]bool) (bool, error) {
	src, dst := filepath.Join(dir, filepath.FromSlash(rel)), filepath.Join(tree, filepath.FromSlash(rel))
	e, err := readEntry(src, rel)
	if err != nil {
		return false, err
	}
	switch e.kind {
	case entryAbsent:
		return false, nil
	case entryFile:
		if _, err := os.Lstat(dst); err == nil {
			return false, nil
		}
		return false, writeEntry(tree, rel, e)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return false, err
	}
	more, err := holdsMore(src, rel, covered)
	if err != nil || !more {
		return true, err
	}
	return true, os.WriteFile(filepath.Join(dst, occupiedName(rel, covered)), nil, 0o600)
}

// holdsMore reports whether the directory holds an entry that is not a touched path or on
// the way to one.
func holdsMore(src, rel string, covered map[string]bool) (bool, error) {
	f, err := os.Open(src)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for {
		names, err := f.Readdirnames(256)
		for _, n := range names {
			if !covered[rel+"/"+n] {
				return true, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

func occupiedName(rel string, covered map[string]bool) string {
	name := occupied
	for i := 1; covered[rel+"/"+name]; i++ {
		name = fmt.Sprintf("%s-%d", occupied, i)
	}
	return name
}

// findRejects returns the first .rej file under tree that is not one of the patch's own paths.
func findRejects(tree string, paths []string) (string, error) {
	own := map[string]bool{}
	for _, p := range paths {
		own[p] = true
	}
	var found string
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		if found == "" && !d.IsDir() && strings.HasSuffix(d.Name(), ".rej") && !own[filepath.ToSlash(rel)] {
			found = rel
		}
		return nil
	})
	return found, err
}

// rejectSummary says what --reject left undone, without git's "Applied patch ... cleanly"
// lines, which here speak of the mirror and not of the workspace.
func rejectSummary(err error) string {
	var re *RunError
	if !errors.As(err, &re) {
		return err.Error()
	}
	var files []string
	hunks := 0
	for _, l := range strings.Split(re.Stderr, "\n") {
		if strings.HasPrefix(l, "Rejected hunk") {
			hunks++
		}
		if name, ok := strings.CutPrefix(l, "Applying patch "); ok && strings.Contains(name, " with ") {
			files = append(files, name[:strings.LastIndex(name, " with ")])
		}
	}
	if hunks == 0 {
		return err.Error()
	}
	return fmt.Sprintf("%d hunk(s) rejected in %s; nothing of its partial result is kept",
		hunks, strings.Join(files, ", "))
}
