package gitsafe

import (
	"archive/tar"
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The attack corpus: one row per vector of issue 3. Each row plants the
// vector (with a canary helper where a helper applies), runs Snapshot,
// ResolveHEAD, Status, Verify, ListFiles, ReadFile, Materialize and Apply,
// and asserts that the canary never fired and that the vector was refused
// (errors.Is the sentinel) or neutralized (the workspace is the committed
// tree, byte for byte). Where plain git on this machine can fire the canary,
// a control step runs it afterwards and asserts that it does: the vector is
// live, gitsafe is what stopped it.

var attackBaseFiles = map[string]string{
	"app.py":      "print('hello')\n",
	".gitignore":  ".env\n",
	"lib/util.py": "X = 1\n",
}

const attackPatch = "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-print('hello')\n+print('patched')\n"

type attackEnv struct {
	src, head      string
	script, marker string
	files          map[string]string // the committed tree at head
}

type attack struct {
	name       string
	plant      func(t *testing.T, a *attackEnv) Source
	refuse     error // Snapshot must fail with this sentinel
	unsafeTree bool  // Materialize must fail with ErrUnsafeTree
	dirty      bool  // the source working tree is dirty: Status and Verify say so
	control    func(t *testing.T, a *attackEnv)
	check      func(t *testing.T, a *attackEnv, r *Repo, ws string)
}

func newAttackEnv(t *testing.T) *attackEnv {
	a := &attackEnv{files: maps.Clone(attackBaseFiles)}
	a.src, a.head = newRepo(t, a.files)
	a.script, a.marker = canary(t)
	writeFiles(t, a.src, map[string]string{".env": "SECRET=do-not-leak\n"})
	return a
}

func (a *attackEnv) commit(t *testing.T, files map[string]string) {
	writeFiles(t, a.src, files)
	maps.Copy(a.files, files)
	a.head = commitAll(t, a.src, "more")
}

func (a *attackEnv) config(t *testing.T, kv ...string) {
	for i := 0; i < len(kv); i += 2 {
		tgit(t, a.src, "config", kv[i], kv[i+1])
	}
}

func (a *attackEnv) gitDir() string { return filepath.Join(a.src, ".git") }

func (a *attackEnv) clone() Source { return Source{Kind: SourceClone, Path: a.src} }

// hook installs the canary as hook name in dir (the source's hooks/ when "").
func (a *attackEnv) hook(t *testing.T, dir, name string) {
	if dir == "" {
		dir = filepath.Join(a.gitDir(), "hooks")
	}
	body, err := os.ReadFile(a.script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), body, 0o755); err != nil {
		t.Fatal(err)
	}
}

// plainGit runs plain git in the source, as an earlier design did, for the
// control steps. Its error is irrelevant: only the marker counts.
func (a *attackEnv) plainGit(dir string, stdin string, args ...string) {
	var in []byte
	if stdin != "" {
		in = []byte(stdin)
	}
	_, _ = tgitErr(dir, in, args...)
}

func touchAll(t *testing.T, a *attackEnv) {
	for name, content := range a.files {
		writeFiles(t, a.src, map[string]string{name: content})
	}
}

func TestAttackCorpus(t *testing.T) {
	for _, row := range attackRows() {
		t.Run(row.name, func(t *testing.T) { runAttack(t, row) })
	}
}

func runAttack(t *testing.T, row attack) {
	a := newAttackEnv(t)
	src := row.plant(t, a)
	ctx := testCtx(t)
	r, err := Snapshot(ctx, src, t.TempDir())
	if row.refuse != nil {
		if !errors.Is(err, row.refuse) {
			t.Fatalf("Snapshot error = %v, want %v", err, row.refuse)
		}
		var ue *UnsafeError
		if errors.As(err, &ue) && ue.Path == "" {
			t.Errorf("UnsafeError names no path: %v", err)
		}
		t.Logf("refused: %v", err)
	} else {
		if err != nil {
			t.Fatalf("Snapshot: %v", err)
		}
		defer r.Close()
		exercise(t, a, r, row)
	}
	assertNoMarker(t, a.marker)
	if row.control != nil {
		row.control(t, a)
		if _, err := os.Stat(a.marker); err != nil {
			t.Errorf("control: plain git did not fire the canary, so this row does not prove a live vector")
		}
	}
}

func exercise(t *testing.T, a *attackEnv, r *Repo, row attack) {
	ctx := testCtx(t)
	if head, err := r.ResolveHEAD(ctx); err != nil || head != a.head {
		t.Errorf("ResolveHEAD = %q, %v; want %s", head, err, a.head)
	}
	st, err := r.Status(ctx)
	if err != nil || st.Clean == row.dirty {
		t.Errorf("Status = %+v, %v; want clean=%v", st, err, !row.dirty)
	}
	executed, err := r.Verify(ctx, a.head, true)
	switch {
	case row.dirty && !errors.Is(err, ErrDirty):
		t.Errorf("Verify = %q, %v; want ErrDirty", executed, err)
	case !row.dirty && (err != nil || executed != a.head):
		t.Errorf("Verify = %q, %v; want %s", executed, err, a.head)
	}
	if _, err := r.ListFiles(ctx, a.head); err != nil && !row.unsafeTree {
		t.Errorf("ListFiles: %v", err)
	}
	if got, err := r.ReadFile(ctx, a.head, "app.py"); err != nil || string(got) != a.files["app.py"] {
		t.Errorf("ReadFile(app.py) = %q, %v; want %q", got, err, a.files["app.py"])
	}
	ws := filepath.Join(t.TempDir(), "ws")
	fp, err := r.Materialize(ctx, a.head, ws)
	if row.unsafeTree {
		if !errors.Is(err, ErrUnsafeTree) {
			t.Errorf("Materialize error = %v, want ErrUnsafeTree", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Materialize: %v", err)
	}
	if !fp.Clean || fp.Commit != a.head {
		t.Errorf("fingerprint = %+v, want clean at %s", fp, a.head)
	}
	if diff := cmp.Diff(a.files, workspaceFiles(t, ws)); diff != "" {
		t.Errorf("workspace is not the committed tree (-want +got):\n%s", diff)
	}
	applyAttackPatch(t, ws)
	if row.check != nil {
		row.check(t, a, r, ws)
	}
}

func applyAttackPatch(t *testing.T, ws string) {
	p, err := ParsePatch([]byte(attackPatch))
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(testCtx(t), p, ws); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "app.py")); string(got) != "print('patched')\n" {
		t.Errorf("after Apply app.py = %q", got)
	}
}

// workspaceFiles maps each regular file under dir to its content; any
// other kind of entry fails the test.
func workspaceFiles(t *testing.T, dir string) map[string]string {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			t.Errorf("workspace entry %s is %v", p, d.Type())
			return nil
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func attackRows() []attack {
	rows := configRows()
	rows = append(rows, layoutRows()...)
	return append(rows, otherRows()...)
}

func configRows() []attack {
	return []attack{
		{
			name: "core.fsmonitor",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.config(t, "core.fsmonitor", a.script)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "status") },
		},
		{
			name: "hook post-checkout",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.hook(t, "", "post-checkout")
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "checkout", "-q", "HEAD", "--", "app.py") },
		},
		{
			name: "hook post-index-change",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.hook(t, "", "post-index-change")
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "read-tree", "HEAD") },
		},
		{
			name: "hook reference-transaction",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.hook(t, "", "reference-transaction")
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "update-ref", "refs/heads/control", "HEAD") },
		},
		{
			name: "core.hooksPath",
			plant: func(t *testing.T, a *attackEnv) Source {
				dir := filepath.Join(filepath.Dir(a.marker), "evil-hooks")
				for _, h := range []string{"post-checkout", "post-index-change", "reference-transaction"} {
					a.hook(t, dir, h)
				}
				a.config(t, "core.hooksPath", dir)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "read-tree", "HEAD") },
		},
		{
			// Config-defined hooks arrived after git 2.39 (this machine's),
			// so there is no control; the row still proves the key is dropped.
			name: "hook.<name>.command",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.config(t, "hook.evil.command", a.script, "hook.evil.event", "post-index-change",
					"hook.evil2.command", a.script, "hook.evil2.event", "reference-transaction")
				return a.clone()
			},
		},
		{
			name: "filter clean/smudge via .gitattributes",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.commit(t, map[string]string{".gitattributes": "* filter=evil\n"})
				a.config(t, "filter.evil.clean", a.script, "filter.evil.smudge", a.script)
				touchAll(t, a)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "checkout-index", "-f", "-a") },
		},
		{
			name: "filter process via .gitattributes",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.commit(t, map[string]string{".gitattributes": "* filter=evil\n"})
				a.config(t, "filter.evil.process", a.script, "filter.evil.required", "true")
				touchAll(t, a)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "checkout-index", "-f", "-a") },
		},
		{
			name: "filter clean/smudge/process via info/attributes",
			plant: func(t *testing.T, a *attackEnv) Source {
				writeFiles(t, a.gitDir(), map[string]string{"info/attributes": "* filter=evil\n"})
				a.config(
					t,
					"filter.evil.clean",
					a.script,
					"filter.evil.smudge",
					a.script,
					"filter.evil.process",
					a.script,
				)
				touchAll(t, a)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "checkout-index", "-f", "-a") },
		},
		{
			name: "diff.external",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.config(t, "diff.external", a.script)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) {
				writeFiles(t, a.src, map[string]string{"app.py": "changed\n"})
				a.plainGit(a.src, "", "diff")
			},
		},
		{
			name: "textconv",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.commit(t, map[string]string{".gitattributes": "*.py diff=evil\n"})
				a.config(t, "diff.evil.textconv", a.script)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "log", "-p", "--textconv") },
		},
		{
			name: "include.path",
			plant: func(t *testing.T, a *attackEnv) Source {
				writeFiles(t, a.gitDir(), map[string]string{"evil.cfg": "[core]\n\tfsmonitor = " + a.script + "\n"})
				a.config(t, "include.path", "evil.cfg")
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "status") },
		},
		{
			name: "includeIf",
			plant: func(t *testing.T, a *attackEnv) Source {
				writeFiles(t, a.gitDir(), map[string]string{"evil.cfg": "[core]\n\tfsmonitor = " + a.script + "\n"})
				a.config(t, "includeIf.gitdir:/.path", "evil.cfg")
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "status") },
		},
		{
			// core.worktree points git at a clean decoy, hiding the dirty
			// source: gitsafe must look at the real working tree.
			name:  "core.worktree",
			dirty: true,
			plant: func(t *testing.T, a *attackEnv) Source {
				decoy := filepath.Join(t.TempDir(), "decoy")
				writeFiles(t, decoy, a.files)
				a.config(t, "core.worktree", decoy, "core.fsmonitor", a.script)
				writeFiles(t, a.src, map[string]string{"app.py": "uncommitted\n", "untracked.py": "x\n"})
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "status") },
		},
		{
			// The pager only starts on a terminal, so there is no control.
			name: "core.pager",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.config(t, "core.pager", a.script, "pager.status", a.script)
				return a.clone()
			},
		},
		{
			name: "core.editor",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.config(t, "core.editor", a.script)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "commit", "--allow-empty") },
		},
		{
			name: "core.sshCommand",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.config(t, "core.sshCommand", a.script)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "ls-remote", "ssh://example.invalid/x") },
		},
		{
			name: "credential.helper",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.config(t, "credential.helper", a.script)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) {
				a.plainGit(
					a.src,
					"protocol=https\nhost=example.invalid\n\n",
					"-c",
					"core.askPass=true",
					"credential",
					"fill",
				)
			},
		},
		{
			// gc.recentObjectsHook arrived after git 2.39: no control.
			name: "gc.recentObjectsHook with gc.auto",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.config(
					t,
					"gc.recentObjectsHook",
					a.script,
					"gc.auto",
					"1",
					"gc.autoDetach",
					"false",
					"gc.autoPackLimit",
					"1",
				)
				return a.clone()
			},
		},
		{
			name: "alias with !",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.config(t, "alias.evil", "!"+a.script, "alias.status", "!"+a.script, "alias.apply", "!"+a.script)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "evil") },
		},
		{
			name: "inherited GIT_* environment",
			plant: func(t *testing.T, a *attackEnv) Source {
				t.Setenv("GIT_CONFIG_COUNT", "2")
				t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
				t.Setenv("GIT_CONFIG_VALUE_0", a.script)
				t.Setenv("GIT_CONFIG_KEY_1", "core.hooksPath")
				t.Setenv("GIT_CONFIG_VALUE_1", filepath.Dir(a.script))
				t.Setenv("GIT_EXTERNAL_DIFF", a.script)
				t.Setenv("GIT_SSH_COMMAND", a.script)
				t.Setenv("GIT_DIR", a.gitDir())
				t.Setenv("GIT_WORK_TREE", a.src)
				a.hook(t, filepath.Dir(a.script), "post-index-change")
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) {
				cmd := exec.Command("git", "status")
				cmd.Dir = a.src
				_ = cmd.Run() // the inherited environment, unscrubbed
			},
		},
	}
}

func layoutRows() []attack {
	return []attack{
		{
			name:   "objects/info/alternates",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				other, _ := newRepo(t, map[string]string{"x": "y\n"})
				writeFiles(
					t,
					a.gitDir(),
					map[string]string{"objects/info/alternates": filepath.Join(other, ".git", "objects") + "\n"},
				)
				return a.clone()
			},
		},
		{
			name:   "objects as a symlink",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				moved := filepath.Join(t.TempDir(), "objects")
				mustRename(t, filepath.Join(a.gitDir(), "objects"), moved)
				mustSymlink(t, moved, filepath.Join(a.gitDir(), "objects"))
				return a.clone()
			},
		},
		{
			name:   "a symlinked ref",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				outside := filepath.Join(t.TempDir(), "ref")
				writeFiles(t, filepath.Dir(outside), map[string]string{"ref": a.head + "\n"})
				mustSymlink(t, outside, filepath.Join(a.gitDir(), "refs", "heads", "evil"))
				return a.clone()
			},
		},
		{
			name:   ".git as a gitdir: file",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				real := filepath.Join(t.TempDir(), "real.git")
				mustRename(t, a.gitDir(), real)
				writeFiles(t, a.src, map[string]string{".git": "gitdir: " + real + "\n"})
				tgit(t, a.src, "config", "core.fsmonitor", a.script)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "status") },
		},
		{
			name:   "a linked worktree",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				wt := filepath.Join(t.TempDir(), "wt")
				tgit(t, a.src, "worktree", "add", "-q", wt)
				a.config(t, "core.fsmonitor", a.script)
				return Source{Kind: SourceClone, Path: wt}
			},
		},
		{
			name:   "extensions.objectFormat=sha256",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				return Source{Kind: SourceClone, Path: sha256Repo(t)}
			},
		},
		{
			name: "export-subst / export-ignore in .gitattributes",
			plant: func(t *testing.T, a *attackEnv) Source {
				a.commit(t, map[string]string{
					".gitattributes": "subst.txt export-subst\nsecret.txt export-ignore\n* -text\n",
					"subst.txt":      "commit $Format:%H$\n",
					"secret.txt":     "kept\n",
					"crlf.txt":       "line\r\n",
				})
				return a.clone()
			},
			check: func(t *testing.T, a *attackEnv, r *Repo, ws string) {
				// The vector is live: plain git archive drops and rewrites.
				out, _ := tgitErr(a.src, nil, "archive", "--format=tar", "HEAD")
				files := tarFiles(t, out)
				if _, kept := files["secret.txt"]; kept || strings.Contains(files["subst.txt"], "$Format") {
					t.Errorf("control: git archive kept secret.txt or $Format, so export attributes were not live")
				}
			},
		},
		{
			name:   "special file (FIFO) in .git",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				if err := syscall.Mkfifo(filepath.Join(a.gitDir(), "refs", "heads", "fifo"), 0o644); err != nil {
					t.Fatal(err)
				}
				return a.clone()
			},
		},
	}
}

func otherRows() []attack {
	return []attack{
		{
			name: "replace refs",
			plant: func(t *testing.T, a *attackEnv) Source {
				orig := strings.TrimSpace(tgit(t, a.src, "rev-parse", "HEAD:app.py"))
				evil, _ := tgitErr(a.src, []byte("import os; os.system('evil')\n"), "hash-object", "-w", "--stdin")
				tgit(t, a.src, "replace", orig, strings.TrimSpace(evil))
				return a.clone()
			},
			check: func(t *testing.T, a *attackEnv, r *Repo, ws string) {
				if out := tgit(t, a.src, "show", "HEAD:app.py"); !strings.Contains(out, "evil") {
					t.Errorf("control: plain git did not honour the replace ref: %q", out)
				}
			},
		},
		{
			// A commit-graph caches each commit's root tree; a forged one
			// makes plain git report another tree for the base commit.
			name: "a commit-graph that lies about a commit's tree",
			plant: func(t *testing.T, a *attackEnv) Source {
				real := strings.TrimSpace(tgit(t, a.src, "rev-parse", a.head+"^{tree}"))
				evilBlob, _ := tgitErr(a.src, []byte("import os; os.system('evil')\n"), "hash-object", "-w", "--stdin")
				evilTree, _ := tgitErr(a.src, []byte("100644 blob "+strings.TrimSpace(evilBlob)+"\tapp.py\n"), "mktree")
				evil := strings.TrimSpace(
					tgit(t, a.src, "commit-tree", "-p", a.head, "-m", "side", strings.TrimSpace(evilTree)),
				)
				tgit(t, a.src, "update-ref", "refs/heads/side", evil)
				tgit(t, a.src, "commit-graph", "write", "--reachable")
				swapBytes(
					t,
					filepath.Join(a.gitDir(), "objects", "info", "commit-graph"),
					real,
					strings.TrimSpace(evilTree),
				)
				return a.clone()
			},
			check: func(t *testing.T, a *attackEnv, r *Repo, ws string) {
				lie := strings.TrimSpace(tgit(t, a.src, "log", "--format=%T", "-1", a.head))
				fp, err := r.Materialize(testCtx(t), a.head, filepath.Join(t.TempDir(), "ws"))
				if err != nil || lie == fp.Tree {
					t.Errorf("fingerprint tree %s (%v) equals the forged %s", fp.Tree, err, lie)
				}
				if _, err := os.Lstat(filepath.Join(r.GitDir(), "objects", "info", "commit-graph")); !errors.Is(
					err,
					fs.ErrNotExist,
				) {
					t.Errorf("the commit-graph was copied (%v)", err)
				}
				if real := strings.TrimSpace(tgit(t, a.src, "-c", "core.commitGraph=false", "log", "--format=%T", "-1", a.head)); real == lie {
					t.Errorf("control: the forged commit-graph did not fool plain git")
				}
			},
		},
		{
			name:   "a promisor remote with lazy fetch",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				tgit(t, a.src, "config", "uploadpack.allowFilter", "true")
				partial := filepath.Join(t.TempDir(), "partial")
				tgit(
					t,
					a.src,
					"clone",
					"-q",
					"--no-local",
					"--filter=blob:none",
					"--no-checkout",
					"file://"+a.src,
					partial,
				)
				tgit(t, partial, "config", "remote.origin.uploadpack", a.script)
				a.src = partial
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "cat-file", "-p", "HEAD:app.py") },
		},
		{
			name: "a config value with a trailing CR",
			plant: func(t *testing.T, a *attackEnv) Source {
				hooks := filepath.Join(filepath.Dir(a.marker), "crhooks")
				a.hook(t, hooks, "post-index-change")
				appendFile(
					t,
					filepath.Join(a.gitDir(), "config"),
					"[core]\r\n\tfsmonitor = "+a.script+"\r\n\thooksPath = "+hooks+"\r\n",
				)
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "status") },
		},
		{
			name:   "a trailing CR hiding objectFormat=sha256",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				repo := sha256Repo(t)
				cfg := filepath.Join(repo, ".git", "config")
				b, err := os.ReadFile(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(string(b), "\n", "\r\n")), 0o644); err != nil {
					t.Fatal(err)
				}
				return Source{Kind: SourceClone, Path: repo}
			},
		},
		{
			name:   "a 100 MB config file",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				cfg := filepath.Join(a.gitDir(), "config")
				appendFile(t, cfg, "[core]\n\tfsmonitor = "+a.script+"\n")
				if err := os.Truncate(cfg, 100<<20); err != nil {
					t.Fatal(err)
				}
				return a.clone()
			},
		},
		{
			name:       "a submodule with its own core.fsmonitor",
			unsafeTree: true,
			plant: func(t *testing.T, a *attackEnv) Source {
				sub := filepath.Join(a.src, "sub")
				writeFiles(t, sub, map[string]string{"s.txt": "s\n"})
				tgit(t, sub, "init", "-q", "-b", "main", "--template=", ".")
				tgit(t, sub, "add", "-A")
				tgit(t, sub, "commit", "-q", "-m", "sub")
				a.head = commitAll(t, a.src, "add submodule")
				tgit(t, sub, "config", "core.fsmonitor", a.script)
				writeFiles(t, sub, map[string]string{"s.txt": "s\n"})
				return a.clone()
			},
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "status") },
		},
		{
			name:       "a symlink in the tree",
			unsafeTree: true,
			plant: func(t *testing.T, a *attackEnv) Source {
				mustSymlink(t, "/etc/passwd", filepath.Join(a.src, "passwd"))
				a.head = commitAll(t, a.src, "symlink")
				return a.clone()
			},
		},
		{
			name: "a bundle made from a hostile repository",
			plant: func(t *testing.T, a *attackEnv) Source {
				plantHostile(t, a)
				b := filepath.Join(t.TempDir(), "repo.bundle")
				tgit(t, a.src, "-c", "core.hooksPath=/dev/null", "bundle", "create", "-q", b, "--all")
				return Source{Kind: SourceBundle, Path: b}
			},
			check:   checkTenderConfigOnly,
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "status") },
		},
		{
			name: "a fast-export stream made from a hostile repository",
			plant: func(t *testing.T, a *attackEnv) Source {
				plantHostile(t, a)
				return Source{Kind: SourceFastExport, Path: fastExport(t, a.src, "")}
			},
			check:   checkTenderConfigOnly,
			control: func(t *testing.T, a *attackEnv) { a.plainGit(a.src, "", "status") },
		},
		{
			name:   "a fast-export stream with feature export-marks",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				return Source{Kind: SourceFastExport, Path: fastExport(t, a.src, "feature export-marks="+a.marker+"\n")}
			},
			control: func(t *testing.T, a *attackEnv) {
				dir := t.TempDir()
				tgit(t, dir, "init", "-q", "--bare", "--template=", ".")
				stream, _ := os.ReadFile(fastExport(t, a.src, "feature export-marks="+a.marker+"\n"))
				_, _ = tgitErr(dir, stream, "fast-import", "--quiet", "--allow-unsafe-features")
			},
		},
		{
			name:   "a bundle with object-format sha256",
			refuse: ErrUnsafeRepo,
			plant: func(t *testing.T, a *attackEnv) Source {
				repo := sha256Repo(t)
				b := filepath.Join(t.TempDir(), "sha256.bundle")
				tgit(t, repo, "bundle", "create", "-q", b, "--all")
				return Source{Kind: SourceBundle, Path: b}
			},
		},
	}
}

// plantHostile gives the source every helper a bundle or stream might try
// to carry along.
func plantHostile(t *testing.T, a *attackEnv) {
	a.config(t, "core.fsmonitor", a.script, "filter.evil.smudge", a.script, "alias.status", "!"+a.script)
	for _, h := range []string{"post-checkout", "post-index-change", "reference-transaction"} {
		a.hook(t, "", h)
	}
}

func checkTenderConfigOnly(t *testing.T, a *attackEnv, r *Repo, ws string) {
	cfg, err := os.ReadFile(filepath.Join(r.GitDir(), "config"))
	if err != nil || string(cfg) != tenderConfig {
		t.Errorf("private config = %q, %v; want Tender's own", cfg, err)
	}
	if _, err := os.Lstat(filepath.Join(r.GitDir(), "hooks")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("private copy has a hooks directory (%v)", err)
	}
}

func fastExport(t *testing.T, src, prefix string) string {
	out := tgit(t, src, "fast-export", "--all")
	p := filepath.Join(t.TempDir(), "repo.fi")
	if err := os.WriteFile(p, []byte(prefix+out), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func sha256Repo(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "sha256")
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	tgit(t, dir, "init", "-q", "-b", "main", "--template=", "--object-format=sha256", ".")
	tgit(t, dir, "add", "-A")
	tgit(t, dir, "commit", "-q", "-m", "sha256")
	return dir
}

// swapBytes exchanges the raw 20-byte forms of two object ids in a file.
func swapBytes(t *testing.T, path, a, b string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := hex.DecodeString(a)
	rb, _ := hex.DecodeString(b)
	tmp := bytes.Repeat([]byte{0}, 20)
	data = bytes.ReplaceAll(bytes.ReplaceAll(bytes.ReplaceAll(data, ra, tmp), rb, ra), tmp, rb)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func tarFiles(t *testing.T, data string) map[string]string {
	files := map[string]string{}
	tr := tar.NewReader(strings.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = string(b)
	}
}

func mustRename(t *testing.T, from, to string) {
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, s string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
