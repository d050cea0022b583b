package grader

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/integrity"
	"github.com/tender-grader/tender/internal/treelink"
)

// A repository with `symlinks: in-tree` may hold relative symlinks that stay inside its tree.
// On the host they never exist: a workspace holds, at each link's path, a regular file with
// the link's target (git's core.symlinks=false), and a table (path -> target) travels with it
// to the verifier, which alone makes them links (sandbox.Spec.Links). The table is Tender's:
// the base tree's links, the ones the candidate's patch and the test patch create (each
// checked by gitsafe and the pre-scan), and nothing else. No host step writes a link's file or
// through a link: patches are refused (gitsafe's CheckLinks), hidden assets too (writeAsset),
// and the restore never meets a link (the pre-scan keeps a created one out of restored paths).

// inTree reports whether the pair's repository allows symlinks.
func (pl *pipeline) inTree() bool {
	return pl.suite.Repositories[pl.pair.Repository].Symlinks == gitsafe.SymlinksInTree
}

// patchOptions are the options a patch of this pair is parsed with.
func (pl *pipeline) patchOptions() gitsafe.PatchOptions {
	return gitsafe.PatchOptions{Links: pl.inTree()}
}

// treeLinks is what the pre-scan knows of the base tree's links, read once per pair.
func (pl *pipeline) treeLinks(ctx context.Context) (integrity.Links, error) {
	if !pl.inTree() {
		return integrity.Links{}, nil
	}
	if pl.links != nil {
		return *pl.links, nil
	}
	links, err := pl.repo.repo.TreeLinks(ctx, pl.executed)
	if err != nil {
		return integrity.Links{}, err
	}
	entries, err := pl.repo.repo.ListFiles(ctx, pl.executed)
	if err != nil {
		return integrity.Links{}, err
	}
	il := integrity.Links{Allowed: true, Base: links}
	for _, e := range entries {
		il.Files = append(il.Files, e.Path)
	}
	pl.links = &il
	return il, nil
}

// linkTable is a new workspace's table of links: the tree's.
func linkTable(fp gitsafe.Fingerprint) map[string]string {
	if fp.Links == nil {
		return map[string]string{}
	}
	return fp.Links
}

// addLinks adds the links a patch created to a workspace's table.
func addLinks(links map[string]string, p *gitsafe.Patch) {
	for k, v := range p.Links() {
		links[k] = v
	}
}

// writeAsset writes an evaluator file at rel beneath dir, replacing whatever the candidate
// left there, through an os.Root and after an Lstat of every directory on the way: it never
// passes through a symlink, and refuses rel when it is, or passes through, one of links.
func writeAsset(dir, rel string, data []byte, mode uint32, links map[string]string) error {
	if l := treelink.Through(links, rel); l != "" {
		return fmt.Errorf("the hidden asset %s is, or passes through, the symlink %s (-> %s) of the tree; "+
			"an evaluator file is never written through a link (%s)", rel, l, links[l], gitsafe.SymlinksSetting)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		fi, err := root.Lstat(strings.Join(parts[:i], "/"))
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("the hidden asset %s passes through %s, which is a %v and no directory",
				rel, strings.Join(parts[:i], "/"), fi.Mode().Type())
		}
	}
	if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
		return err
	}
	if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	perm := os.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close(), root.Chmod(rel, perm))
}
