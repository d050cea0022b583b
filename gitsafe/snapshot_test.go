package gitsafe

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var kindFiles = map[string]string{
	"README.md":        "# demo\n",
	"pkg/calc.py":      "def add(a, b):\n    return a + b\n",
	"tests/test_x.py":  "from pkg.calc import add\n",
	"scripts/run.sh":   "#!/bin/sh\necho run\n",
	"data/blob.bin":    "\x00\x01\x02\xff",
	"deep/a/b/c/d.txt": "deep\n",
}

// sources returns the same history as a clone, a bare clone, a bundle and
// a fast-export stream.
func sources(t *testing.T) (map[string]Source, string, string) {
	src, base := newRepo(t, kindFiles)
	writeFiles(t, src, map[string]string{"pkg/calc.py": "def add(a, b):\n    return b + a\n"})
	head := commitAll(t, src, "second")
	tgit(t, src, "tag", "v1", base)
	tmp := t.TempDir()
	bare := filepath.Join(tmp, "bare.git")
	tgit(t, tmp, "clone", "-q", "--bare", "--template=", src, bare)
	bundle := filepath.Join(tmp, "repo.bundle")
	tgit(t, src, "bundle", "create", "-q", bundle, "--all")
	return map[string]Source{
		"clone":       {Kind: SourceClone, Path: src},
		"bare clone":  {Kind: SourceClone, Path: bare},
		"bundle":      {Kind: SourceBundle, Path: bundle},
		"fast-export": {Kind: SourceFastExport, Path: fastExportFile(t, src)},
	}, base, head
}

func fastExportFile(t *testing.T, src string) string {
	p := filepath.Join(t.TempDir(), "repo.fi")
	if err := os.WriteFile(p, []byte(tgit(t, src, "fast-export", "--all")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every source kind yields the same commits, the same HEAD, the same
// workspace and the same fingerprint.
func TestSnapshotKinds(t *testing.T) {
	srcs, base, head := sources(t)
	var digests []string
	for name, src := range srcs {
		t.Run(name, func(t *testing.T) {
			r := mustSnapshot(t, src)
			ctx := testCtx(t)
			if got, err := r.ResolveHEAD(ctx); err != nil || got != head {
				t.Errorf("ResolveHEAD = %q, %v; want %s", got, err, head)
			}
			for _, c := range []string{base, head} {
				if got, err := r.ResolveCommit(ctx, c); err != nil || got != c {
					t.Errorf("ResolveCommit(%s) = %q, %v", c, got, err)
				}
			}
			executed, err := r.Verify(ctx, base, false)
			if err != nil || executed != base {
				t.Errorf("Verify(base, unpinned) = %q, %v; want %s", executed, err, base)
			}
			ws := filepath.Join(t.TempDir(), "ws")
			fp, err := r.Materialize(ctx, base, ws)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(kindFiles, workspaceFiles(t, ws)); diff != "" {
				t.Errorf("workspace (-want +got):\n%s", diff)
			}
			digests = append(digests, fp.IndexDigest)
			checkPrivateCopy(t, r)
		})
	}
	for _, d := range digests[1:] {
		if d != digests[0] {
			t.Errorf("index digests differ between source kinds: %v", digests)
		}
	}
}

// checkPrivateCopy: Tender's config, no hooks, no info/, no logs.
func checkPrivateCopy(t *testing.T, r *Repo) {
	if b, err := os.ReadFile(filepath.Join(r.GitDir(), "config")); err != nil || string(b) != tenderConfig {
		t.Errorf("private config = %q, %v", b, err)
	}
	for _, name := range []string{"hooks", "info", "logs", "index", "description"} {
		if _, err := os.Lstat(filepath.Join(r.GitDir(), name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("private copy holds %s (%v)", name, err)
		}
	}
}

// Status of a clone never writes to the source's .git: the index refresh
// happens in the private copy.
func TestStatusWritesOnlyToTheCopy(t *testing.T) {
	src, _ := newRepo(t, kindFiles)
	writeFiles(
		t,
		src,
		map[string]string{"README.md": "# demo\n"},
	) // same content, new mtime: a refresh would rewrite the index
	before := dirState(t, filepath.Join(src, ".git"))
	r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
	st, err := r.Status(testCtx(t))
	if err != nil || !st.Clean {
		t.Fatalf("Status = %+v, %v; want clean", st, err)
	}
	if diff := cmp.Diff(before, dirState(t, filepath.Join(src, ".git"))); diff != "" {
		t.Errorf("source .git changed (-before +after):\n%s", diff)
	}
}

func TestSnapshotCloseRemovesCopy(t *testing.T) {
	src, _ := newRepo(t, kindFiles)
	tmpRoot := t.TempDir()
	r, err := Snapshot(testCtx(t), Source{Kind: SourceClone, Path: src}, tmpRoot)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.GitDir(), tmpRoot) {
		t.Errorf("private copy %s is not under %s", r.GitDir(), tmpRoot)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmpRoot); len(entries) != 0 {
		t.Errorf("Close left %v", entries)
	}
}

func TestSnapshotRefusesNonRepositories(t *testing.T) {
	plain := t.TempDir()
	junk := filepath.Join(t.TempDir(), "junk")
	if err := os.WriteFile(junk, []byte("not a bundle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]Source{
		"plain directory":  {Kind: SourceClone, Path: plain},
		"junk bundle":      {Kind: SourceBundle, Path: junk},
		"missing stream":   {Kind: SourceFastExport, Path: filepath.Join(plain, "nope.fi")},
		"unknown kind":     {Kind: SourceKind(9), Path: plain},
		"stream with opts": {Kind: SourceFastExport, Path: writeTemp(t, "option git --export-marks=/tmp/x\n")},
	} {
		t.Run(name, func(t *testing.T) {
			tmpRoot := t.TempDir()
			if r, err := Snapshot(testCtx(t), src, tmpRoot); err == nil {
				r.Close()
				t.Fatal("Snapshot succeeded")
			}
			if entries, _ := os.ReadDir(tmpRoot); len(entries) != 0 {
				t.Errorf("failed Snapshot left %v", entries)
			}
		})
	}
}

// TestSnapshotOfAFileIsNotARepository: a clone path that names a file is the operator's
// mistake (ErrNotRepository, which callers report as bad input), not an lstat error.
func TestSnapshotOfAFileIsNotARepository(t *testing.T) {
	file := writeTemp(t, "not a clone\n")
	_, err := Snapshot(testCtx(t), Source{Kind: SourceClone, Path: file}, t.TempDir())
	if !errors.Is(err, ErrNotRepository) || !strings.Contains(err.Error(), file+" is a file, not a directory") {
		t.Errorf("Snapshot of a file: %v, want ErrNotRepository naming the file", err)
	}
}

func writeTemp(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScanFastExport(t *testing.T) {
	ok := "feature done\nblob\nmark :1\ndata 22\nfeature export-marks=x\ncommit refs/heads/main\nmark :2\ncommitter A <a@b> 0 +0000\ndata <<EOF\noption git --x\nEOF\nM 100644 :1 f\n\ndone\n"
	if err := scanFastExport("s", strings.NewReader(ok)); err != nil {
		t.Errorf("payloads that look like commands were read as commands: %v", err)
	}
	for _, bad := range []string{
		"feature export-marks=/tmp/m\n",
		"feature import-marks=/etc/passwd\n",
		"feature import-marks-if-exists=/x\n",
		"feature rewrite-submodules-from=a:/x\n",
		"blob\ndata 3\nabc\noption git --import-marks=/x\n",
		"blob\ndata 99\nshort",
		"data <<EOF\nno end\n",
		"blob\n" + string(bytes.Repeat([]byte("x"), 70<<10)) + "\n",
	} {
		if err := scanFastExport("s", strings.NewReader(bad)); !errors.Is(err, ErrUnsafeRepo) {
			t.Errorf("scanFastExport(%.40q) = %v, want ErrUnsafeRepo", bad, err)
		}
	}
}
