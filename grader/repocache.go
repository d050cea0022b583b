package grader

import (
	"context"
	"sync"
)

// verifiedCommits remembers the commits of one repository that passed the pre-run refusal,
// so a batch asks git once per base commit rather than once per pair. The snapshot is private
// and every workspace comes from its objects, so an answer holds for the whole run. Only
// successes are kept: a refusal is asked again, and a cancelled question is never an answer.
type verifiedCommits struct {
	mu   sync.Mutex
	seen map[verifyKey]string
}

type verifyKey struct {
	requested string
	pinned    bool
}

// verify is Repo.Verify through the cache.
func (h repoHandle) verify(ctx context.Context, requested string, pinned bool) (string, error) {
	k := verifyKey{requested, pinned}
	h.verified.mu.Lock()
	executed, ok := h.verified.seen[k]
	h.verified.mu.Unlock()
	if ok {
		return executed, nil
	}
	executed, err := h.repo.Verify(ctx, requested, pinned)
	if err != nil {
		return "", err
	}
	h.verified.mu.Lock()
	defer h.verified.mu.Unlock()
	if h.verified.seen == nil {
		h.verified.seen = map[verifyKey]string{}
	}
	h.verified.seen[k] = executed
	return executed, nil
}
