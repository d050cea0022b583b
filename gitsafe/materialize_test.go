package gitsafe

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Ignored and uncommitted files never reach a workspace: it is the commit's
// tree, read from objects.
func TestMaterializeOnlyCommittedFiles(t *testing.T) {
	files := map[string]string{"app.py": "v1\n", ".gitignore": ".env\nbuild/\n", "run.sh": "#!/bin/sh\n"}
	src, head := newRepo(t, files)
	writeFiles(t, src, map[string]string{
		".env":          "TOKEN=secret\n",
		"build/out.bin": "x",
		"app.py":        "uncommitted edit\n",
		"untracked.py":  "x\n",
	})
	r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
	ws := filepath.Join(t.TempDir(), "ws")
	fp, err := r.Materialize(testCtx(t), head, ws)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(files, workspaceFiles(t, ws)); diff != "" {
		t.Errorf("workspace (-want +got):\n%s", diff)
	}
	if !fp.Clean || fp.Commit != head || len(fp.Tree) != 40 || len(fp.IndexDigest) != 64 {
		t.Errorf("fingerprint = %+v", fp)
	}
	fi, err := os.Stat(filepath.Join(ws, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode = %v, %v; want 0755", fi.Mode(), err)
	}
	fi, err = os.Stat(filepath.Join(ws, "app.py"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("app.py mode = %v, %v; want 0644", fi.Mode(), err)
	}
}

// The fingerprint is stable for a commit and changes with its content.
func TestFingerprint(t *testing.T) {
	src, base := newRepo(t, map[string]string{"a": "a\n"})
	writeFiles(t, src, map[string]string{"a": "b\n"})
	head := commitAll(t, src, "b")
	r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
	ctx := testCtx(t)
	fp := func(c string) Fingerprint {
		f, err := r.Materialize(ctx, c, filepath.Join(t.TempDir(), "ws"))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	b1, b2, h := fp(base), fp(base[:8]), fp(head)
	if !reflect.DeepEqual(b1, b2) {
		t.Errorf("same commit, different fingerprints: %+v %+v", b1, b2)
	}
	if h.IndexDigest == b1.IndexDigest || h.Tree == b1.Tree {
		t.Errorf("different content, same fingerprint: %+v %+v", h, b1)
	}
}

func TestMaterializeTarget(t *testing.T) {
	src, head := newRepo(t, map[string]string{"a": "a\n"})
	r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
	ctx := testCtx(t)
	empty := t.TempDir()
	if _, err := r.Materialize(ctx, head, empty); err != nil {
		t.Errorf("empty existing directory: %v", err)
	}
	nonEmpty := t.TempDir()
	writeFiles(t, nonEmpty, map[string]string{"keep": "k"})
	if _, err := r.Materialize(ctx, head, nonEmpty); err == nil {
		t.Errorf("non-empty directory accepted")
	}
	if got := workspaceFiles(t, nonEmpty); len(got) != 1 {
		t.Errorf("non-empty directory was written: %v", got)
	}
	file := filepath.Join(t.TempDir(), "file")
	writeFiles(t, filepath.Dir(file), map[string]string{"file": "f"})
	if _, err := r.Materialize(ctx, head, file); err == nil {
		t.Errorf("a file as target accepted")
	}
	if _, err := r.Materialize(ctx, "0123456789abcdef0123456789abcdef01234567", filepath.Join(t.TempDir(), "x")); !errors.Is(
		err,
		ErrCommitNotFound,
	) {
		t.Errorf("missing commit: %v", err)
	}
}

// Trees crafted with names no checkout would accept are refused before
// anything is written.
func TestMaterializeRefusesCraftedTrees(t *testing.T) {
	for _, name := range []string{".GIT", "..", "git~1", ".git", "a\\b"} {
		t.Run(name, func(t *testing.T) {
			src, _ := newRepo(t, map[string]string{"ok": "ok\n"})
			blob := strings.TrimSpace(tgit(t, src, "hash-object", "-w", "ok"))
			out, err := tgitErr(src, []byte("100644 blob "+blob+"\t"+name+"\n100644 blob "+blob+"\tok\n"), "mktree")
			if err != nil {
				t.Fatalf("mktree: %v", err)
			}
			commit := strings.TrimSpace(tgit(t, src, "commit-tree", "-m", "crafted", strings.TrimSpace(out)))
			tgit(t, src, "update-ref", "refs/heads/crafted", commit)
			r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
			ws := filepath.Join(t.TempDir(), "ws")
			if _, err := r.Materialize(testCtx(t), commit, ws); !errors.Is(err, ErrUnsafeTree) {
				t.Fatalf("Materialize = %v, want ErrUnsafeTree", err)
			}
			if _, err := r.ListFiles(testCtx(t), commit); !errors.Is(err, ErrUnsafeTree) {
				t.Errorf("ListFiles = %v, want ErrUnsafeTree", err)
			}
			if _, err := os.Lstat(ws); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("workspace was created (%v)", err)
			}
		})
	}
}

func TestListFilesAndReadFile(t *testing.T) {
	src, _ := newRepo(t, map[string]string{"a.txt": "hello\n", "d/run.sh": "#!/bin/sh\n"})
	mustSymlink(t, "a.txt", filepath.Join(src, "link"))
	head := commitAll(t, src, "link")
	r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
	ctx := testCtx(t)
	entries, err := r.ListFiles(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint32{}
	for _, e := range entries {
		got[e.Path] = e.Mode
		if e.Path == "a.txt" && (e.Size != 6 || len(e.Blob) != 40) {
			t.Errorf("a.txt entry = %+v", e)
		}
	}
	want := map[string]uint32{"a.txt": 0o100644, "d/run.sh": 0o100755, "link": 0o120000}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListFiles modes (-want +got):\n%s", diff)
	}
	if b, err := r.ReadFile(ctx, head, "a.txt"); err != nil || string(b) != "hello\n" {
		t.Errorf("ReadFile(a.txt) = %q, %v", b, err)
	}
	for path, want := range map[string]error{"missing": fs.ErrNotExist, "d": fs.ErrNotExist, "../a.txt": ErrUnsafePath, "link": ErrUnsafeTree, ".git/config": ErrUnsafePath} {
		if _, err := r.ReadFile(ctx, head, path); !errors.Is(err, want) {
			t.Errorf("ReadFile(%q) = %v, want %v", path, err, want)
		}
	}
}
