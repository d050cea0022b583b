package gitsafe

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrMissingObjects marks a commit whose history, trees or blobs are not all in the copy: a
// clone made with --filter whose promisor was dropped, or a damaged one. A shallow clone's
// history ends at its boundary, which is not missing.
var ErrMissingObjects = errors.New("objects are missing")

// CheckObjects checks that everything reachable from commit (its history down to a shallow
// boundary, and their trees and blobs) is in the copy, so that a bundle of it can be written.
// It never fetches: lazy fetching is off for every git call.
func (r *Repo) CheckObjects(ctx context.Context, commit string) error {
	oid, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return err
	}
	_, err = r.git(
		ctx,
		gitCall{args: []string{"rev-list", "--objects", "--missing=error", "--quiet", "--end-of-options", oid}},
	)
	var re *RunError
	if err == nil || ctx.Err() != nil || !errors.As(err, &re) {
		return err
	}
	line, _, _ := strings.Cut(strings.TrimSpace(re.Stderr), "\n")
	return fmt.Errorf("%w: %s", ErrMissingObjects, strings.TrimPrefix(line, "fatal: "))
}
