package gitsafe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tender-grader/tender/internal/scratch"
)

// Repo is a private, sanitized copy of one source. It is safe for
// concurrent use by several goroutines.
type Repo struct {
	src      Source
	root     string   // private temporary directory, removed by Close
	gitDir   string   // root/repo.git: Tender's config, no hooks
	workTree string   // a clone source's working tree; "" otherwise
	symlinks Symlinks // what its trees may hold at mode 120000 (SetSymlinks); "" refuses
}

// Snapshot copies (clone) or imports (bundle, fast-export stream) src into a
// private temporary directory under tmpRoot (os.TempDir() when ""), with
// Tender's own minimal config and no hooks (tmpRoot is created if needed).
// It never runs git against the source's own .git.
func Snapshot(ctx context.Context, src Source, tmpRoot string) (*Repo, error) {
	if tmpRoot == "" {
		tmpRoot = os.TempDir()
	}
	abs, err := filepath.Abs(src.Path)
	if err != nil {
		return nil, fmt.Errorf("gitsafe: source %q: %w", src.Path, err)
	}
	src.Path = abs
	if err := os.MkdirAll(tmpRoot, 0o700); err != nil {
		return nil, fmt.Errorf("gitsafe: private copy: %w", err)
	}
	root, err := scratch.MkdirTemp(tmpRoot, "tender-git-")
	if err != nil {
		return nil, fmt.Errorf("gitsafe: private copy: %w", err)
	}
	r := &Repo{src: src, root: root, gitDir: filepath.Join(root, "repo.git")}
	if err := r.fill(ctx); err != nil {
		_ = scratch.Remove(root)
		return nil, fmt.Errorf("gitsafe: snapshot of %s source %s: %w", src.Kind, src.Path, err)
	}
	return r, nil
}

func (r *Repo) fill(ctx context.Context) error {
	switch r.src.Kind {
	case SourceClone:
		return r.copyClone(ctx)
	case SourceBundle:
		return r.importBundle(ctx)
	case SourceFastExport:
		return r.importFastExport(ctx)
	}
	return fmt.Errorf("unknown source kind %v", r.src.Kind)
}

// Close removes the private copy.
func (r *Repo) Close() error {
	if r == nil || r.root == "" {
		return nil
	}
	return scratch.Remove(r.root)
}

// Source returns the source the snapshot was taken from.
func (r *Repo) Source() Source { return r.src }

// GitDir returns the private copy's git directory (for diagnostics; never
// hand it to another git invocation: use the methods of Repo).
func (r *Repo) GitDir() string { return r.gitDir }

// git runs a hardened git command against the private copy.
func (r *Repo) git(ctx context.Context, c gitCall) ([]byte, error) {
	c.gitDir = r.gitDir
	if c.dir == "" {
		c.dir = r.root
	}
	return runGit(ctx, c)
}

// initPrivate creates an empty repository layout with Tender's config,
// without running git init (which would copy template hooks).
func initPrivate(gitDir string) error {
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(gitDir, d), 0o755); err != nil {
			return err
		}
	}
	if err := writeNew(filepath.Join(gitDir, "config"), []byte(tenderConfig)); err != nil {
		return err
	}
	head := filepath.Join(gitDir, "HEAD")
	if _, err := os.Lstat(head); errors.Is(err, fs.ErrNotExist) {
		return writeNew(head, []byte("ref: refs/heads/main\n"))
	}
	return nil
}

func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}
