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
	"syscall"
)

// forbiddenInGitDir are files whose mere presence makes a git directory
// point somewhere else: object alternates and linked-worktree links.
var forbiddenInGitDir = map[string]string{
	"objects/info/alternates":      "object alternates borrow objects from another repository",
	"objects/info/http-alternates": "object alternates borrow objects from another repository",
	"commondir":                    "a linked worktree's git directory points to another repository",
	"gitdir":                       "a linked worktree's git directory points to a working tree elsewhere",
}

// copyClone copies a local clone's metadata as plain bytes.
func (r *Repo) copyClone(ctx context.Context) error {
	gitDir, workTree, err := locateGitDir(r.src.Path)
	if err != nil {
		return err
	}
	r.workTree = workTree
	if err := checkGitDir(gitDir); err != nil {
		return err
	}
	if err := os.MkdirAll(r.gitDir, 0o755); err != nil {
		return err
	}
	if err := copyMetadata(ctx, gitDir, r.gitDir); err != nil {
		return err
	}
	return initPrivate(r.gitDir)
}

// locateGitDir finds the git directory of a clone: <path>/.git for a
// working tree, or path itself for a bare repository.
func locateGitDir(path string) (gitDir, workTree string, err error) {
	dotGit := filepath.Join(path, ".git")
	fi, err := os.Lstat(dotGit)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return "", "", unsafeRepo(dotGit, ".git is a symlink")
	case err == nil && fi.Mode().IsRegular():
		return "", "", unsafeRepo(
			dotGit,
			".git is a file (gitdir: link to a linked worktree or a git directory elsewhere)",
		)
	case err == nil && fi.IsDir():
		return dotGit, path, nil
	case err == nil:
		return "", "", unsafeRepo(dotGit, "special file")
	case errors.Is(err, syscall.ENOTDIR):
		return "", "", fmt.Errorf("%w: %s is a file, not a directory; give the directory of the clone",
			ErrNotRepository, path)
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", err
	}
	if looksBare(path) {
		return path, "", nil
	}
	return "", "", fmt.Errorf(
		"%w: %s is neither a working tree with a .git directory nor a bare repository",
		ErrNotRepository,
		path,
	)
}

func looksBare(path string) bool {
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(path, name)); err != nil {
			return false
		}
	}
	return true
}

// checkGitDir refuses forbidden files and reads the source config.
func checkGitDir(gitDir string) error {
	for rel, reason := range forbiddenInGitDir {
		p := filepath.Join(gitDir, filepath.FromSlash(rel))
		if _, err := os.Lstat(p); err == nil {
			return unsafeRepo(p, reason)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return unsafeRepo(p, err.Error())
		}
	}
	return checkConfigFile(filepath.Join(gitDir, "config"))
}

func checkConfigFile(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return unsafeRepo(path, "config is not a regular file")
	}
	if fi.Size() > MaxConfigBytes {
		return unsafeRepo(path, fmt.Sprintf("oversize config: %d bytes, limit %d", fi.Size(), MaxConfigBytes))
	}
	data, err := readNoFollow(path, MaxConfigBytes)
	if err != nil {
		return err
	}
	return checkSourceConfig(path, data)
}

// copyMetadata walks the whole source git directory, refusing any symlink
// or special file anywhere, and copies only what a read-only private copy
// needs: HEAD, refs, packed-refs, shallow and objects. Config, hooks, info/
// (attributes, grafts, exclude), logs and worktrees are never copied.
func copyMetadata(ctx context.Context, src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if err := checkEntryType(path, d); err != nil {
			return err
		}
		if rel == "." || !wanted(rel) {
			return nil
		}
		if err := checkObjectName(path, rel); err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if isTempObject(rel) {
			return nil
		}
		return copyFile(path, target)
	})
}

func checkEntryType(path string, d fs.DirEntry) error {
	t := d.Type()
	switch {
	case t&fs.ModeSymlink != 0:
		return unsafeRepo(path, "symlink inside the git directory")
	case t.IsDir() || t.IsRegular():
		return nil
	}
	return unsafeRepo(path, "special file ("+t.String()+") inside the git directory")
}

// notCopied are caches under objects/ that could lie about commits (a
// commit-graph names each commit's tree) and are disabled in the copy.
func notCopied(rel string) bool {
	return rel == "objects/info/commit-graph" || strings.HasPrefix(rel, "objects/info/commit-graphs") ||
		strings.HasPrefix(rel, "objects/pack/multi-pack-index")
}

func wanted(rel string) bool {
	if notCopied(rel) {
		return false
	}
	switch rel {
	case "HEAD", "packed-refs", "shallow", "refs", "objects":
		return true
	}
	return strings.HasPrefix(rel, "refs/") || strings.HasPrefix(rel, "objects/")
}

// checkObjectName refuses loose objects whose names are not SHA-1 ids: a
// SHA-256 repository stores 62-hex names under objects/xx/.
func checkObjectName(path, rel string) error {
	parts := strings.Split(rel, "/")
	if len(parts) != 3 || parts[0] != "objects" {
		return nil
	}
	name := parts[len(parts)-1]
	if strings.HasSuffix(name, ".promisor") {
		return unsafeRepo(path, "a promisor pack: "+partialClone)
	}
	if len(parts[1]) == 2 && isHex(parts[1]) && len(name) == 62 && isHex(name) {
		return unsafeRepo(path, "loose object with a SHA-256 name: only SHA-1 repositories are supported")
	}
	return nil
}

func isTempObject(rel string) bool {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	return strings.HasPrefix(base, "tmp_") || strings.HasSuffix(base, ".lock")
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// copyFile copies one regular file without following a symlink swapped in
// after the walk looked at it.
func copyFile(src, dst string) error {
	in, err := openNoFollow(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, unsafeRepo(path, "symlink inside the git directory")
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = unsafeRepo(path, "not a regular file")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func readNoFollow(path string, limit int64) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, unsafeRepo(path, fmt.Sprintf("oversize file: more than %d bytes", limit))
	}
	return data, nil
}
