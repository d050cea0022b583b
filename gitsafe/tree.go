package gitsafe

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// TreeEntry is one entry of a commit's tree, listed recursively.
type TreeEntry struct {
	Path string // slash-separated, relative to the tree root
	Mode uint32 // git mode: 0100644, 0100755, 0120000, 0160000
	Blob string // object id (a commit id for a submodule)
	Size int64  // blob size; -1 for a submodule
}

// ListFiles lists every entry of the tree of commit, recursively. A path
// that could not be written safely (".." , a .git component in any
// disguise, ...) fails with ErrUnsafeTree.
func (r *Repo) ListFiles(ctx context.Context, commit string) ([]TreeEntry, error) {
	oid, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, err
	}
	return r.lsTree(ctx, oid)
}

func (r *Repo) lsTree(ctx context.Context, oid string, paths ...string) ([]TreeEntry, error) {
	args := []string{"ls-tree", "-r", "-z", "-l", "--full-tree", "--end-of-options", oid}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	out, err := r.git(ctx, gitCall{args: args})
	if err != nil {
		return nil, err
	}
	return parseLsTree(out)
}

// parseLsTree reads `ls-tree -r -z -l` records:
// "<mode> SP <type> SP <oid> SP+ <size> TAB <path> NUL".
func parseLsTree(out []byte) ([]TreeEntry, error) {
	var entries []TreeEntry
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		e, err := parseLsTreeRecord(rec)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func parseLsTreeRecord(rec string) (TreeEntry, error) {
	meta, path, ok := strings.Cut(rec, "\t")
	f := strings.Fields(meta)
	if !ok || len(f) != 4 {
		return TreeEntry{}, fmt.Errorf("gitsafe: unexpected ls-tree record %q", rec)
	}
	mode, err := strconv.ParseUint(f[0], 8, 32)
	if err != nil {
		return TreeEntry{}, fmt.Errorf("gitsafe: ls-tree mode %q: %w", f[0], err)
	}
	size := int64(-1)
	if f[3] != "-" {
		if size, err = strconv.ParseInt(f[3], 10, 64); err != nil {
			return TreeEntry{}, fmt.Errorf("gitsafe: ls-tree size %q: %w", f[3], err)
		}
	}
	if err := ValidatePath(path); err != nil {
		return TreeEntry{}, &UnsafeError{Path: path, Reason: err.Error(), Err: ErrUnsafeTree}
	}
	return TreeEntry{Path: path, Mode: uint32(mode), Blob: f[2], Size: size}, nil
}

// checkEntryMode refuses symlinks (unless the repository's setting is SymlinksInTree),
// submodules and any non-file mode.
func (r *Repo) checkEntryMode(e TreeEntry) error {
	switch e.Mode {
	case modeFile, modeExec, 0o100664:
		return nil
	case modeLink:
		if r.symlinks == SymlinksInTree {
			return nil
		}
		return unsafeTree(e.Path, "is a symlink (mode 120000); to allow symlinks that stay inside the tree, set "+
			"`symlinks: in-tree` on the repository in tender.yaml")
	case 0o160000:
		return unsafeTree(e.Path, "submodule (mode 160000) in the tree")
	}
	return unsafeTree(e.Path, fmt.Sprintf("unsupported mode %o in the tree", e.Mode))
}

// ReadFile returns the content of the blob at path in commit, checked
// against its id like everything Materialize writes.
func (r *Repo) ReadFile(ctx context.Context, commit, path string) ([]byte, error) {
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	oid, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, err
	}
	entries, err := r.lsTree(ctx, oid, path)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Path != path {
			continue
		}
		if err := r.checkEntryMode(e); err != nil {
			return nil, err
		}
		return r.readBlob(ctx, e.Blob)
	}
	return nil, fmt.Errorf("gitsafe: %s at %s: %w", path, oid, fs.ErrNotExist)
}

func (r *Repo) readBlob(ctx context.Context, oid string) ([]byte, error) {
	var data []byte
	err := r.catVerified(ctx, []string{oid}, func(_, typ string, body []byte) error {
		if typ != "blob" {
			return unsafeRepo(oid, "expected a blob, found "+typ)
		}
		data = body
		return nil
	})
	return data, err
}
