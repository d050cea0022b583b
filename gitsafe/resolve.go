package gitsafe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// ResolveCommit returns the full 40-hex id of the commit that rev names. rev
// must be a hexadecimal object id (4 to 40 digits); it is never read as an
// option, a ref name or a revision expression.
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (string, error) {
	rev = strings.ToLower(strings.TrimSpace(rev))
	if len(rev) < 4 || len(rev) > 40 || !isHex(rev) {
		return "", fmt.Errorf("%w: %q is not a hexadecimal commit id", ErrCommitNotFound, rev)
	}
	out, err := r.git(
		ctx,
		gitCall{args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"}},
	)
	if err != nil {
		return "", fmt.Errorf("%w: %s in %s: %w", ErrCommitNotFound, rev, r.src.Path, err)
	}
	return parseOID(out)
}

// ResolveHEAD returns the commit HEAD names in the snapshot: for a clone
// source, the HEAD of the source working tree at snapshot time.
func (r *Repo) ResolveHEAD(ctx context.Context) (string, error) {
	out, err := r.git(ctx, gitCall{args: []string{"rev-parse", "--verify", "--quiet", "HEAD^{commit}"}})
	if err != nil {
		return "", fmt.Errorf("%w: HEAD of %s: %w", ErrCommitNotFound, r.src.Path, err)
	}
	return parseOID(out)
}

func parseOID(out []byte) (string, error) {
	oid := strings.TrimSpace(string(out))
	if !IsObjectID(oid) {
		return "", fmt.Errorf("gitsafe: git printed %q, not a SHA-1 object id", oid)
	}
	return oid, nil
}

// Status reports whether a clone source's working tree equals its HEAD tree
// (ignored files aside). Git is pointed from the private copy at the source
// working tree, with a private index built from HEAD, so no index, hook or
// config of the source is ever used and any index write lands in the copy.
// Bundle, fast-export and bare sources have no working tree and are clean.
type Status struct {
	Clean   bool
	Changed []string // paths (relative, slash-separated) that differ or are untracked
}

var indexSeq atomic.Int64

// Status computes the working tree status of a clone source.
func (r *Repo) Status(ctx context.Context) (Status, error) {
	if r.workTree == "" {
		return Status{Clean: true}, nil
	}
	head, err := r.ResolveHEAD(ctx)
	if err != nil {
		return Status{}, err
	}
	index := filepath.Join(r.root, fmt.Sprintf("status-%d.index", indexSeq.Add(1)))
	defer os.Remove(index)
	if _, err := r.git(ctx, gitCall{args: []string{"read-tree", "--end-of-options", head}, index: index}); err != nil {
		return Status{}, err
	}
	out, err := r.git(ctx, gitCall{
		args: []string{
			"status",
			"--porcelain=v1",
			"-z",
			"--untracked-files=all",
			"--ignore-submodules=all",
			"--no-renames",
		},
		workTree: r.workTree,
		index:    index,
	})
	if err != nil {
		return Status{}, err
	}
	changed := parsePorcelain(out)
	return Status{Clean: len(changed) == 0, Changed: changed}, nil
}

// parsePorcelain reads `status --porcelain=v1 -z --no-renames` records:
// "XY path" separated by NUL.
func parsePorcelain(out []byte) []string {
	var paths []string
	for _, rec := range strings.Split(string(out), "\x00") {
		if len(rec) > 3 {
			paths = append(paths, rec[3:])
		}
	}
	return paths
}

// Verify is the pre-run refusal. It resolves requested (HEAD when requested
// is "" and pinned is false) and returns the executed commit. For a clone
// source with a working tree it refuses a dirty tree (ErrDirty); in pinned
// mode it refuses an empty request and a HEAD that differs from the
// requested commit (ErrHeadMismatch). Bundle and fast-export sources are
// only resolved.
func (r *Repo) Verify(ctx context.Context, requested string, pinned bool) (string, error) {
	executed, err := r.resolveRequested(ctx, requested, pinned)
	if err != nil {
		return "", err
	}
	if r.src.Kind != SourceClone {
		return executed, nil
	}
	if err := r.requireClean(ctx); err != nil {
		return "", err
	}
	if !pinned {
		return executed, nil
	}
	head, err := r.ResolveHEAD(ctx)
	if err != nil {
		return "", err
	}
	if head != executed {
		return "", fmt.Errorf("%w: requested %s, source %s is at %s", ErrHeadMismatch, executed, r.src.Path, head)
	}
	return executed, nil
}

func (r *Repo) resolveRequested(ctx context.Context, requested string, pinned bool) (string, error) {
	if requested != "" {
		return r.ResolveCommit(ctx, requested)
	}
	if pinned {
		return "", fmt.Errorf("%w: pinned mode needs a requested commit", ErrCommitNotFound)
	}
	return r.ResolveHEAD(ctx)
}

func (r *Repo) requireClean(ctx context.Context) error {
	st, err := r.Status(ctx)
	if err != nil {
		return err
	}
	if st.Clean {
		return nil
	}
	shown := st.Changed
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("... and %d more", len(st.Changed)-10))
	}
	return fmt.Errorf("%w: %s: %s; commit or remove these changes", ErrDirty, r.src.Path, strings.Join(shown, ", "))
}
