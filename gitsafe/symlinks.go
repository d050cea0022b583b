package gitsafe

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/tender-grader/tender/internal/treelink"
)

// Symlinks says what a repository's tree may hold at mode 120000: a suite's
// `repositories.<id>.symlinks`.
type Symlinks string

const (
	// SymlinksRefuse (the default) refuses a tree that holds any symlink.
	SymlinksRefuse Symlinks = "refuse"
	// SymlinksInTree allows symlinks whose target is relative and, resolved through the tree's
	// other links (internal/treelink), stays inside the tree. They never exist on the host:
	// Materialize writes each as a regular file that holds its target, as git does with
	// core.symlinks=false, and Fingerprint.Links names them for the verifier, which alone
	// makes them links.
	SymlinksInTree Symlinks = "in-tree"
)

// SymlinksSetting names the setting in refusals, for the person who must decide it.
const SymlinksSetting = "the repository's `symlinks: in-tree` in tender.yaml"

// ParseSymlinks reads a suite's `symlinks` value; "" is SymlinksRefuse.
func ParseSymlinks(s string) (Symlinks, error) {
	switch Symlinks(s) {
	case "", SymlinksRefuse:
		return SymlinksRefuse, nil
	case SymlinksInTree:
		return SymlinksInTree, nil
	}
	return "", fmt.Errorf("symlinks: %q is not a setting; use %q (the default) or %q", s, SymlinksRefuse, SymlinksInTree)
}

// SetSymlinks sets what the repository's trees may hold at mode 120000. Call it once, before
// the Repo is used.
func (r *Repo) SetSymlinks(s Symlinks) { r.symlinks = s }

// TreeLinks returns the symlinks of the tree of commit (path -> target), every one checked as
// Materialize checks them. A tree without links gives an empty map; under SymlinksRefuse a
// tree with one fails with ErrUnsafeTree.
func (r *Repo) TreeLinks(ctx context.Context, commit string) (map[string]string, error) {
	oid, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, err
	}
	entries, err := r.lsTree(ctx, oid)
	if err != nil {
		return nil, err
	}
	if err := r.checkEntries(entries); err != nil {
		return nil, err
	}
	return r.readLinks(ctx, entries)
}

// readLinks reads the targets of the tree's links (each blob checked against its id) and
// refuses the tree unless every link stays inside it.
func (r *Repo) readLinks(ctx context.Context, entries []TreeEntry) (map[string]string, error) {
	byBlob := map[string][]string{}
	for _, e := range entries {
		if e.Mode == modeLink {
			byBlob[e.Blob] = append(byBlob[e.Blob], e.Path)
		}
	}
	links := map[string]string{}
	if len(byBlob) == 0 {
		return links, nil
	}
	err := r.catVerified(ctx, slices.Sorted(maps.Keys(byBlob)), func(oid, typ string, body []byte) error {
		if typ != "blob" {
			return unsafeRepo(oid, "expected a blob for a symlink, found "+typ)
		}
		for _, p := range byBlob[oid] {
			links[p] = string(body)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := treelink.Check(links); err != nil {
		return nil, linkRefused(err)
	}
	for _, e := range entries { // a forged tree may name a link and a directory alike
		if l := treelink.Through(links, e.Path); l != "" && l != e.Path {
			return nil, unsafeTree(e.Path, fmt.Sprintf("lies under the symlink %q in the tree", l))
		}
	}
	return links, nil
}

// linkRefused turns a treelink refusal into the tree's refusal, naming the path and the setting.
func linkRefused(err error) error {
	var e *treelink.Error
	if !errors.As(err, &e) {
		return err
	}
	return unsafeTree(e.Path, fmt.Sprintf("symlink to %q: %s; %s allows only relative symlinks that stay inside "+
		"the tree", e.Target, e.Reason, SymlinksSetting))
}

// modeLink is git's mode of a symlink.
const modeLink = 0o120000

// createdLinks are the symlinks the patch creates: path -> target.
func (p *Patch) createdLinks() map[string]string {
	out := map[string]string{}
	for _, f := range p.Files {
		if f.LinkTarget != "" {
			out[f.NewPath] = f.LinkTarget
		}
	}
	return out
}

// Links returns the symlinks the patch creates (path -> target), in a new map.
func (p *Patch) Links() map[string]string { return p.createdLinks() }

// CheckLinks refuses a patch that touches a symlink of links (the tree's, path -> target):
// a path that is one, or passes through one. No patch may write a link's file (that would
// retarget it) or anything under it (the host holds a regular file there; the verifier, a link
// a write would go through). The links the patch itself creates are checked against links and
// against each other's paths the same way, and each must stay inside the tree together with
// links. The error is an *UnsafeError (ErrUnsafePath) naming the path, the link and the
// setting.
func (p *Patch) CheckLinks(links map[string]string) error {
	created := p.createdLinks()
	all := maps.Clone(links)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, created)
	for _, f := range p.Files {
		for _, path := range []string{f.OldPath, f.NewPath} {
			if path == "" {
				continue
			}
			check := path
			if f.LinkTarget != "" && path == f.NewPath && links[path] == "" {
				check = path[:max(strings.LastIndexByte(path, '/'), 0)] // the link it creates: its directories
			}
			l := treelink.Through(all, check)
			if l == "" {
				continue
			}
			return fmt.Errorf("patch line %d: %w", f.Line, unsafePath(path, fmt.Sprintf(
				"is, or passes through, the symlink %q (-> %q); no patch may write a symlink's file or through it (%s)",
				l, all[l], SymlinksSetting)))
		}
	}
	if len(created) == 0 {
		return nil
	}
	if err := treelink.Check(all); err != nil {
		var e *treelink.Error
		if errors.As(err, &e) {
			return unsafePath(e.Path, fmt.Sprintf("symlink to %q: %s; %s allows only relative symlinks that stay "+
				"inside the tree", e.Target, e.Reason, SymlinksSetting))
		}
		return err
	}
	return nil
}

// checkLinkFiles checks that each symlink the patch created was written as git writes a link
// with core.symlinks=false: a regular file that holds exactly its target. git and the parser
// agree on the patch's files (crossCheck); this holds them to the same content.
func checkLinkFiles(dir string, p *Patch) error {
	created := p.createdLinks()
	if len(created) == 0 {
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, path := range slices.Sorted(maps.Keys(created)) {
		fi, err := root.Lstat(path)
		if err != nil {
			return err
		}
		data, rerr := root.ReadFile(path)
		if !fi.Mode().IsRegular() || rerr != nil || string(data) != created[path] {
			return unsafePath(path, fmt.Sprintf("git wrote the symlink the patch creates as a %v that does not hold "+
				"its target %q", fi.Mode().Type(), created[path]))
		}
	}
	return nil
}
