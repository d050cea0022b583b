package gitsafe

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxBundleHeaderBytes bounds the text header of a bundle.
const MaxBundleHeaderBytes = 1 << 20

// importBundle unbundles a vendored bundle into an empty private copy. A
// bundle carries a pack and ref names only: no config, no hooks.
func (r *Repo) importBundle(ctx context.Context) error {
	f, err := openNoFollow(r.src.Path)
	if err != nil {
		return err
	}
	err = checkBundleHeader(r.src.Path, f)
	f.Close()
	if err != nil {
		return err
	}
	if err := initPrivate(r.gitDir); err != nil {
		return err
	}
	out, err := r.git(ctx, gitCall{args: []string{"bundle", "unbundle", r.src.Path}})
	if err != nil {
		return err
	}
	refs, err := parseRefLines(out)
	if err != nil {
		return err
	}
	return r.storeRefs(ctx, refs)
}

// checkBundleHeader accepts v2 and v3 bundles of SHA-1 objects without a
// filter (a partial bundle would leave objects missing).
func checkBundleHeader(path string, rd io.Reader) error {
	br := bufio.NewReader(io.LimitReader(rd, int64(MaxBundleHeaderBytes)))
	first, err := br.ReadString('\n')
	if err != nil {
		return unsafeRepo(path, "not a git bundle: "+err.Error())
	}
	switch first {
	case "# v2 git bundle\n", "# v3 git bundle\n":
	default:
		return unsafeRepo(path, "not a v2 or v3 git bundle")
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return unsafeRepo(path, "bundle header is truncated or too large")
		}
		if line == "\n" {
			return nil
		}
		if err := checkBundleCapability(path, strings.TrimSuffix(line, "\n")); err != nil {
			return err
		}
	}
}

func checkBundleCapability(path, line string) error {
	if !strings.HasPrefix(line, "@") {
		return nil
	}
	switch {
	case line == "@object-format=sha1":
		return nil
	case strings.HasPrefix(line, "@object-format="):
		return unsafeRepo(path, "bundle "+line[1:]+": only SHA-1 repositories are supported")
	}
	return unsafeRepo(path, "unsupported bundle capability "+line)
}

// importFastExport feeds a fast-export stream to git fast-import. In-stream
// features that read or write host files (import-marks, export-marks) are
// refused by fast-import without --allow-unsafe-features, which gitsafe
// never passes.
func (r *Repo) importFastExport(ctx context.Context) error {
	f, err := openNoFollow(r.src.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := scanFastExport(r.src.Path, f); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := initPrivate(r.gitDir); err != nil {
		return err
	}
	if _, err := r.git(ctx, gitCall{args: []string{"fast-import", "--quiet"}, stdin: f}); err != nil {
		return err
	}
	out, err := r.git(ctx, gitCall{args: []string{"for-each-ref", "--format=%(objectname) %(refname)"}})
	if err != nil {
		return err
	}
	refs, err := parseRefLines(out)
	if err != nil {
		return err
	}
	return r.writeHead(refs)
}

type ref struct{ oid, name string }

func parseRefLines(out []byte) ([]ref, error) {
	var refs []ref
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		oid, name, ok := strings.Cut(line, " ")
		if !ok || !IsObjectID(oid) || name == "" {
			return nil, fmt.Errorf("unexpected ref line %q", line)
		}
		refs = append(refs, ref{oid: oid, name: name})
	}
	return refs, nil
}

// storeRefs records a bundle's refs in the private copy and points HEAD.
func (r *Repo) storeRefs(ctx context.Context, refs []ref) error {
	var in bytes.Buffer
	for _, rf := range refs {
		if rf.name == "HEAD" {
			continue
		}
		if !strings.HasPrefix(rf.name, "refs/") {
			return unsafeRepo(rf.name, "bundle ref outside refs/")
		}
		fmt.Fprintf(&in, "update %s %s\n", rf.name, rf.oid)
	}
	if in.Len() > 0 {
		if _, err := r.git(ctx, gitCall{args: []string{"update-ref", "--stdin"}, stdin: &in}); err != nil {
			return err
		}
	}
	return r.writeHead(refs)
}

// writeHead points HEAD at the branch a bundle's HEAD names (or main,
// master, the first branch, the first ref), or detaches it at the bundle's
// HEAD commit.
func (r *Repo) writeHead(refs []ref) error {
	head := chooseHead(refs)
	if head == "" {
		return writeFile(r.gitDir, "HEAD", "ref: refs/heads/main\n")
	}
	if isHex(head) {
		return writeFile(r.gitDir, "HEAD", head+"\n")
	}
	return writeFile(r.gitDir, "HEAD", "ref: "+head+"\n")
}

func chooseHead(refs []ref) string {
	headOID := ""
	byName := map[string]string{}
	var branches, all []string
	for _, rf := range refs {
		if rf.name == "HEAD" {
			headOID = rf.oid
			continue
		}
		byName[rf.name] = rf.oid
		all = append(all, rf.name)
		if strings.HasPrefix(rf.name, "refs/heads/") {
			branches = append(branches, rf.name)
		}
	}
	sort.Strings(branches)
	sort.Strings(all)
	candidates := append([]string{"refs/heads/main", "refs/heads/master"}, branches...)
	candidates = append(candidates, all...)
	for _, name := range candidates {
		oid, ok := byName[name]
		if ok && (headOID == "" || oid == headOID) {
			return name
		}
	}
	return headOID
}

func writeFile(dir, name, content string) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
}
