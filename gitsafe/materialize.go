package gitsafe

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// MaxTreeBytes bounds the total size of the blobs Materialize writes.
const MaxTreeBytes int64 = 4 << 30

// Fingerprint identifies a materialized workspace before any patch.
type Fingerprint struct {
	Commit string // full commit id
	Tree   string // its tree id
	// IndexDigest is the hex SHA-256 of the sorted entry list, one
	// "<mode octal> <blob id>\t<path>\x00" record per file: it pins modes and
	// contents of every path, the way an index does.
	IndexDigest string
	// Clean is true when every written file was hashed back to its blob id
	// and the directory holds exactly the tree's files and nothing else.
	Clean bool
	// Links are the tree's symlinks (path -> target) under SymlinksInTree, each written as a
	// regular file that holds its target: only a verifier makes them links. Empty otherwise.
	Links map[string]string
}

// Materialize writes the exact tree of commit into dir, which must be empty
// or absent, from git objects. No attribute, filter, export-subst,
// export-ignore or eol rule applies: each file holds its blob's bytes. A
// tree with a submodule, or a symlink (unless the repository's setting is
// SymlinksInTree and every link stays inside the tree), fails with
// ErrUnsafeTree before anything is written; an allowed link is written as a
// regular file that holds its target, and named in Fingerprint.Links.
// Every blob is hashed back to its id while it is written (a mismatch
// fails with ErrUnsafeRepo). On error dir may hold a partial tree: discard
// it.
func (r *Repo) Materialize(ctx context.Context, commit, dir string) (Fingerprint, error) {
	oid, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return Fingerprint{}, err
	}
	tree, err := r.treeOf(ctx, oid)
	if err != nil {
		return Fingerprint{}, err
	}
	entries, err := r.lsTree(ctx, oid)
	if err != nil {
		return Fingerprint{}, err
	}
	if err := r.checkEntries(entries); err != nil {
		return Fingerprint{}, err
	}
	links, err := r.readLinks(ctx, entries)
	if err != nil {
		return Fingerprint{}, err
	}
	if err := prepareDir(dir); err != nil {
		return Fingerprint{}, err
	}
	if err := r.writeBlobs(ctx, entries, dir); err != nil {
		return Fingerprint{}, err
	}
	clean, err := onlyTheseFiles(dir, entries)
	if err != nil {
		return Fingerprint{}, err
	}
	return Fingerprint{Commit: oid, Tree: tree, IndexDigest: indexDigest(entries), Clean: clean, Links: links}, nil
}

func (r *Repo) treeOf(ctx context.Context, commit string) (string, error) {
	out, err := r.git(
		ctx,
		gitCall{args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", commit + "^{tree}"}},
	)
	if err != nil {
		return "", err
	}
	return parseOID(out)
}

func (r *Repo) checkEntries(entries []TreeEntry) error {
	var total int64
	for _, e := range entries {
		if err := r.checkEntryMode(e); err != nil {
			return err
		}
		total += e.Size
	}
	if total > MaxTreeBytes {
		return fmt.Errorf("%w: tree holds %d bytes, limit %d (MaxTreeBytes)", ErrTooLarge, total, MaxTreeBytes)
	}
	return nil
}

// prepareDir creates dir, or accepts an existing empty directory.
func prepareDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("gitsafe: materialize target %s is not a directory", dir)
	}
	names, err := readDirNames(dir)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return fmt.Errorf("gitsafe: materialize target %s is not empty", dir)
	}
	return nil
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	return names, err
}

// writeBlobs streams every blob through one `cat-file --batch` and writes
// it under dir through an os.Root, so no write can leave dir.
func (r *Repo) writeBlobs(ctx context.Context, entries []TreeEntry, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var in bytes.Buffer
	for _, e := range entries {
		in.WriteString(e.Blob + "\n")
	}
	w := &treeWriter{root: root, dirs: map[string]bool{".": true}}
	_, err = r.git(ctx, gitCall{
		args:  []string{"cat-file", "--batch", "--buffer"},
		stdin: &in,
		consume: func(out io.Reader) error {
			return w.writeAll(ctx, bufio.NewReaderSize(out, 1<<20), entries)
		},
	})
	return err
}

type treeWriter struct {
	root *os.Root
	dirs map[string]bool
}

func (w *treeWriter) writeAll(ctx context.Context, br *bufio.Reader, entries []TreeEntry) error {
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.writeOne(br, e); err != nil {
			return fmt.Errorf("gitsafe: materialize %s: %w", e.Path, err)
		}
	}
	return nil
}

func (w *treeWriter) writeOne(br *bufio.Reader, e TreeEntry) error {
	size, err := readBatchHeader(br, e.Blob)
	if err != nil {
		return err
	}
	if err := w.mkdirs(path.Dir(e.Path)); err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	if e.Mode == modeExec {
		perm = 0o755
	}
	f, err := w.root.OpenFile(e.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", size)
	_, err = io.CopyN(io.MultiWriter(f, h), br, size)
	err = errors.Join(err, f.Chmod(perm), f.Close())
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != e.Blob {
		return unsafeRepo(
			e.Blob,
			fmt.Sprintf("blob content hashes to %s: the pack index or object store is forged or corrupt", got),
		)
	}
	if b, err := br.ReadByte(); err != nil || b != '\n' {
		return fmt.Errorf("cat-file output is not terminated after blob %s", e.Blob)
	}
	return nil
}

// readBatchHeader reads "<oid> blob <size>\n".
func readBatchHeader(br *bufio.Reader, want string) (int64, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("cat-file output ended before blob %s: %w", want, err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != want || f[1] != "blob" {
		return 0, fmt.Errorf("cat-file answered %q for blob %s", strings.TrimSpace(line), want)
	}
	return strconv.ParseInt(f[2], 10, 64)
}

func (w *treeWriter) mkdirs(dir string) error {
	if w.dirs[dir] {
		return nil
	}
	if err := w.mkdirs(path.Dir(dir)); err != nil {
		return err
	}
	if err := w.root.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	w.dirs[dir] = true
	return nil
}

// onlyTheseFiles walks dir and reports whether it holds exactly the
// entries' regular files (and their directories), nothing else.
func onlyTheseFiles(dir string, entries []TreeEntry) (bool, error) {
	want := make(map[string]bool, len(entries))
	for _, e := range entries {
		want[e.Path] = true
	}
	seen := 0
	clean := true
	root := os.DirFS(dir)
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
		case d.Type().IsRegular() && want[p]:
			seen++
		default:
			clean = false
		}
		return nil
	})
	return clean && seen == len(entries), err
}

func indexDigest(entries []TreeEntry) string {
	h := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(h, "%06o %s\t%s\x00", e.Mode, e.Blob, e.Path)
	}
	return hex.EncodeToString(h.Sum(nil))
}
