package gitsafe

import (
	"context"
	"errors"
	"fmt"
)

// ApplyPolicy says what ApplyWith may try when a patch does not apply as it stands.
type ApplyPolicy string

const (
	// ApplyStrict is `git apply` alone: every hunk's context must match, at its line or
	// moved.
	ApplyStrict ApplyPolicy = "strict"
	// ApplySWEBench is SWE-bench's chain (harness v4.1), in its order: `git apply`, then
	// `git apply --reject`, then `patch --batch --fuzz=5 -p1`, the last done by Tender's own
	// code (fuzzStep). Each step starts from the untouched directory and counts only if every
	// hunk of every file applied.
	ApplySWEBench ApplyPolicy = "swebench"
)

// ParseApplyPolicy reads a suite's `apply` value; "" is ApplyStrict.
func ParseApplyPolicy(s string) (ApplyPolicy, error) {
	switch ApplyPolicy(s) {
	case "", ApplyStrict:
		return ApplyStrict, nil
	case ApplySWEBench:
		return ApplySWEBench, nil
	}
	return "", fmt.Errorf("apply: %q is not a policy; use %q (the default) or %q", s, ApplyStrict, ApplySWEBench)
}

// ApplyMethod names the step that applied a patch.
type ApplyMethod string

const (
	MethodGitApply       ApplyMethod = "git_apply"        // `git apply`
	MethodGitApplyReject ApplyMethod = "git_apply_reject" // `git apply --reject`, every hunk applied
	MethodFuzz           ApplyMethod = "fuzz"             // hunks moved or fuzzed (Hunks says how)
)

// Applied says how a patch was applied.
type Applied struct {
	Method ApplyMethod `json:"method"` // "" when the patch was empty
	// Changed lists every path whose content, permissions or existence the patch changed,
	// sorted: always among the patch's own paths, but after a fuzz step the caller may
	// want to check again which of them fall under its protected or restored paths.
	Changed []string `json:"changed,omitempty"`
	// Hunks says where each hunk went, for MethodFuzz.
	Hunks []HunkPlacement `json:"hunks,omitempty"`
}

// errRestore marks a failure to put the directory back: no further step may run on it.
var errRestore = errors.New("gitsafe: restoring the directory failed")

// ApplyWith applies a validated patch inside dir, a plain directory (not a repository), and
// says which step applied it. Before any step, git's own reading of the patch (--numstat
// --summary) must name the same files in the same order as ParsePatch, with no symlink or
// submodule mode, and no touched path may pass through a symlink in dir. Every step is
// atomic: when it fails, every touched path is put back exactly as it was, and the next
// step (ApplySWEBench only) starts from there. Only the patch's own paths are ever written,
// and no .rej or .orig file is left. When no step applies the patch the error wraps
// ErrPatchFailed with git's message, and under ApplySWEBench each fallback's.
func ApplyWith(ctx context.Context, p *Patch, dir string, policy ApplyPolicy) (Applied, error) {
	if _, err := ParseApplyPolicy(string(policy)); err != nil {
		return Applied{}, err
	}
	if p == nil || len(p.Files) == 0 {
		return Applied{}, nil
	}
	dir, err := checkApplyDir(dir, p)
	if err != nil {
		return Applied{}, err
	}
	if err := crossCheck(ctx, p, dir); err != nil {
		return Applied{}, err
	}
	b, err := backup(dir, p.Paths())
	if err != nil {
		return Applied{}, err
	}
	b.patch = p
	defer b.discard()
	gerr := b.attempt(func() error { return gitApplyStep(ctx, p, dir) })
	if gerr == nil {
		return b.result(MethodGitApply, nil)
	}
	if policy != ApplySWEBench || ctx.Err() != nil || errors.Is(gerr, errRestore) {
		return Applied{}, gerr
	}
	return b.fallbacks(ctx, p, gerr)
}

// fallbacks are ApplySWEBench's steps after `git apply` failed with gerr.
func (b *applyBackup) fallbacks(ctx context.Context, p *Patch, gerr error) (Applied, error) {
	states, rerr := rejectStep(ctx, p, b.dir)
	if rerr == nil {
		if rerr = b.attempt(func() error { return commit(b.dir, states) }); rerr == nil {
			return b.result(MethodGitApplyReject, nil)
		}
	}
	if ctx.Err() != nil || errors.Is(rerr, errRestore) {
		return Applied{}, rerr
	}
	states, placed, ferr := fuzzStep(p, b.dir)
	if ferr == nil {
		if ferr = b.attempt(func() error { return commit(b.dir, states) }); ferr == nil {
			return b.result(MethodFuzz, placed)
		}
	}
	if errors.Is(ferr, errRestore) {
		return Applied{}, ferr
	}
	return Applied{}, fmt.Errorf("%w\n(apply: swebench) git apply --reject: %v\n(apply: swebench) fuzz: %v",
		gerr, trimSentinel(rerr), trimSentinel(ferr))
}

// trimSentinel drops ErrPatchFailed's text from a fallback's error: the whole error wraps
// it once already.
func trimSentinel(err error) string {
	s := err.Error()
	if p := ErrPatchFailed.Error() + ": "; len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// attempt runs one step; if it fails, every touched path is put back.
func (b *applyBackup) attempt(step func() error) error {
	err := step()
	if err == nil {
		return nil
	}
	if rerr := b.restore(); rerr != nil {
		return errors.Join(err, fmt.Errorf("%w: %s: %w", errRestore, b.dir, rerr))
	}
	return err
}

func (b *applyBackup) result(m ApplyMethod, placed []HunkPlacement) (Applied, error) {
	if err := checkLinkFiles(b.dir, b.patch); err != nil {
		return Applied{}, errors.Join(err, b.restore())
	}
	changed, err := b.changed()
	if err != nil {
		return Applied{}, err
	}
	return Applied{Method: m, Changed: changed, Hunks: placed}, nil
}
