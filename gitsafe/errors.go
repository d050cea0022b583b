package gitsafe

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error gitsafe returns for one of these conditions
// wraps the matching sentinel, so callers test them with errors.Is.
var (
	// ErrUnsafeRepo: the snapshot was refused (symlink, special file, gitdir
	// file, alternates, non-SHA-1 object format, oversize config, ...).
	ErrUnsafeRepo = errors.New("gitsafe: unsafe repository")
	// ErrUnsafePath: a patch path was refused (absolute, "..", a .git
	// component in any case or Unicode disguise, symlink or submodule mode).
	ErrUnsafePath = errors.New("gitsafe: unsafe path")
	// ErrGitPath is the unsafe path that names the git directory, in any disguise. It wraps
	// ErrUnsafePath.
	ErrGitPath = fmt.Errorf("%w: a .git component", ErrUnsafePath)
	// ErrPatchFailed: the patch parsed but does not apply; the directory is
	// left exactly as it was.
	ErrPatchFailed = errors.New("gitsafe: patch does not apply")
	// ErrPatchInvalid: the patch cannot be parsed (or holds no file change
	// although it is not empty).
	ErrPatchInvalid = errors.New("gitsafe: patch cannot be parsed")
	// ErrPatchTooLarge: the patch is larger than MaxPatchBytes.
	ErrPatchTooLarge = errors.New("gitsafe: patch too large")
	// ErrCommitNotFound: the requested commit is not in the snapshot.
	ErrCommitNotFound = errors.New("gitsafe: commit not found")
	// ErrDirty: the source working tree has uncommitted or untracked changes.
	ErrDirty = errors.New("gitsafe: source working tree is dirty")
	// ErrHeadMismatch: the source HEAD is not the pinned commit.
	ErrHeadMismatch = errors.New("gitsafe: source HEAD does not match the requested commit")
	// ErrUnsafeTree: the tree holds a symlink (120000), a submodule (160000)
	// or a path that could not be written safely.
	ErrUnsafeTree = errors.New("gitsafe: unsafe tree")
	// ErrTooLarge: git output or a tree exceeded a configured bound.
	ErrTooLarge = errors.New("gitsafe: output exceeds limit")
	// ErrNotRepository: a clone source is no git repository at all.
	ErrNotRepository = errors.New("not a git repository")
)

// UnsafeError names the offending path and why it was refused. Err is one of
// the sentinels above.
type UnsafeError struct {
	Path   string
	Reason string
	Err    error
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("%v: %q: %s", e.Err, e.Path, e.Reason)
}

func (e *UnsafeError) Unwrap() error { return e.Err }

func unsafeRepo(path, reason string) error {
	return &UnsafeError{Path: path, Reason: reason, Err: ErrUnsafeRepo}
}

func unsafePath(path, reason string) error {
	return &UnsafeError{Path: path, Reason: reason, Err: ErrUnsafePath}
}

func unsafeTree(path, reason string) error {
	return &UnsafeError{Path: path, Reason: reason, Err: ErrUnsafeTree}
}

// RunError reports a failed git command: its arguments (after the fixed
// hardening flags), the underlying error and git's (bounded) stderr.
type RunError struct {
	Args   []string
	Err    error
	Stderr string
}

func (e *RunError) Error() string {
	msg := fmt.Sprintf("git %s: %v", strings.Join(e.Args, " "), e.Err)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

func (e *RunError) Unwrap() error { return e.Err }
