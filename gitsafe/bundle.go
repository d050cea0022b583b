package gitsafe

import (
	"context"
	"path/filepath"
)

// WriteBundle writes a git bundle of the given commits and their history to dst, with one
// ref refs/tender/base/<commit> per commit, so that a suite vendors exactly what it grades.
// It runs against the private copy only.
func (r *Repo) WriteBundle(ctx context.Context, dst string, commits []string) error {
	abs, err := filepath.Abs(dst)
	if err != nil {
		return err
	}
	args := []string{"bundle", "create", abs}
	for _, c := range commits {
		full, err := r.ResolveCommit(ctx, c)
		if err != nil {
			return err
		}
		ref := "refs/tender/base/" + full
		if _, err := r.git(ctx, gitCall{args: []string{"update-ref", ref, full}}); err != nil {
			return err
		}
		args = append(args, ref)
	}
	_, err = r.git(ctx, gitCall{args: args})
	return err
}
