package gitsafe

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// applyOutcome is what one policy must make of a row.
type applyOutcome struct {
	err     error // nil, ErrPatchFailed or ErrUnsafePath
	method  ApplyMethod
	changed []string
}

func refused(err error) applyOutcome { return applyOutcome{err: err} }

// fileIs checks one workspace file's content.
func fileIs(t *testing.T, w applyWorld, name, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.ws, filepath.FromSlash(name)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if string(b) != want {
		t.Errorf("%s = %q, want %q", name, b, want)
	}
}

// gitDiff is a real git diff (as gitPatch) of base against changed.
func gitDiff(base, changed map[string]string) func(*testing.T) string {
	return func(t *testing.T) string {
		p, _ := gitPatch(t, base, changed, nil)
		return p
	}
}

func literal(s string) func(*testing.T) string { return func(*testing.T) string { return s } }

var (
	twenty = numbered(20, nil)
	tenFix = numbered(20, map[int]string{10: "TEN"})
	fiveFx = numbered(20, map[int]string{5: "FIVE"})
	// abPatch changes line 10 of a.txt and line 5 of b.txt.
	abPatch = gitDiff(map[string]string{"a.txt": twenty, "b.txt": twenty},
		map[string]string{"a.txt": tenFix, "b.txt": fiveFx})
	calcFix = strings.Replace(calcBase, "a + b\n\n\ndef mul", "a - b\n\n\ndef mul", 1)
)

// TestApplyPolicyAttacks plants the attacks on the fallback chain, with real git and real
// files, and runs each row under both policies. Every row also goes through applyChecked:
// a failed apply leaves the workspace exactly as it was, a successful one changes only the
// paths it reports (all of them the patch's own) and leaves no .rej or .orig file, and
// nothing beside the workspace changes.
func TestApplyPolicyAttacks(t *testing.T) {
	rows := []struct {
		name     string
		files    map[string]string
		symlinks map[string]string // workspace path -> target; "OUTSIDE" is the directory beside it
		patch    func(*testing.T) string
		strict   applyOutcome
		swebench applyOutcome
		check    func(t *testing.T, w applyWorld, policy ApplyPolicy)
	}{
		{
			// git apply --reject would apply a.txt and write b.txt.rej; that partial result
			// must never reach the workspace.
			name:   "reject files: one file applies, the other's hunk fits nowhere",
			files:  map[string]string{"a.txt": twenty, "b.txt": numbered(20, map[int]string{5: ""})},
			patch:  abPatch,
			strict: refused(ErrPatchFailed), swebench: refused(ErrPatchFailed),
		},
		{
			name: "reject files: a .rej file the repository holds is kept as it is",
			files: map[string]string{"a.txt": twenty, "b.txt": numbered(20, map[int]string{5: ""}),
				"b.txt.rej": "the repository's own file\n"},
			patch:  abPatch,
			strict: refused(ErrPatchFailed), swebench: refused(ErrPatchFailed),
		},
		{
			// SWE-bench v4.1 runs patch on the tree --reject left: GNU patch then takes a.txt
			// for an already applied patch and reverses it ("Assuming -R"), and reports
			// success. Here the fuzz step starts from the untouched tree.
			name:     "a partial --reject never counts: the whole patch is fuzzed on the untouched tree",
			files:    map[string]string{"a.txt": twenty, "b.txt": numbered(20, map[int]string{4: "four"})},
			patch:    abPatch,
			strict:   refused(ErrPatchFailed),
			swebench: applyOutcome{method: MethodFuzz, changed: []string{"a.txt", "b.txt"}},
			check: func(t *testing.T, w applyWorld, policy ApplyPolicy) {
				if policy == ApplySWEBench {
					fileIs(t, w, "a.txt", tenFix)
					fileIs(t, w, "b.txt", numbered(20, map[int]string{4: "four", 5: "FIVE"}))
				}
			},
		},
		{
			// GNU patch leaves calc.py.orig after a fuzzed hunk, and SWE-bench's newer harness
			// then moves every *.orig back over its file.
			name:   ".orig leftovers: none is made, and the repository's own .orig is not moved back",
			files:  map[string]string{"calc.py": calcDrifted, "calc.py.orig": "the repository's own file\n"},
			patch:  gitDiff(map[string]string{"calc.py": calcBase}, map[string]string{"calc.py": calcFix}),
			strict: refused(ErrPatchFailed), swebench: applyOutcome{method: MethodFuzz, changed: []string{"calc.py"}},
		},
		{
			// gitsafe does not know protected paths; it places a file's hunks in that file
			// only, whatever else in the tree they would fit.
			name:   "fuzz onto a protected path: the hunk fits .tender/key.txt exactly, only notes.txt is patched",
			files:  map[string]string{".tender/key.txt": twenty, "notes.txt": numbered(20, map[int]string{7: "seven"})},
			patch:  gitDiff(map[string]string{"notes.txt": twenty}, map[string]string{"notes.txt": tenFix}),
			strict: refused(ErrPatchFailed), swebench: applyOutcome{method: MethodFuzz, changed: []string{"notes.txt"}},
			check: func(t *testing.T, w applyWorld, _ ApplyPolicy) { fileIs(t, w, ".tender/key.txt", twenty) },
		},
		{
			name:   "fuzz onto a protected path: a hunk that fits only .tender/key.txt is applied nowhere",
			files:  map[string]string{".tender/key.txt": twenty, "notes.txt": "unrelated\n"},
			patch:  gitDiff(map[string]string{"notes.txt": twenty}, map[string]string{"notes.txt": tenFix}),
			strict: refused(ErrPatchFailed), swebench: refused(ErrPatchFailed),
		},
		{
			// git and ParsePatch read a traditional diff whose names differ as a change to its
			// new name (prot.txt is not even among the patch's paths); GNU patch takes the old
			// name, prot.txt, where the hunk fits exactly (checked by hand with GNU patch 2.7.6).
			name:  "a fuzzed hunk lands on a different file than named: never; target.txt is patched, not prot.txt",
			files: map[string]string{"prot.txt": twenty, "target.txt": numbered(20, map[int]string{13: "thirteen"})},
			patch: literal("--- a/prot.txt\n+++ b/target.txt\n@@ -7,7 +7,7 @@\n" +
				" line 7\n line 8\n line 9\n-line 10\n+TEN\n line 11\n line 12\n line 13\n"),
			strict:   refused(ErrPatchFailed),
			swebench: applyOutcome{method: MethodFuzz, changed: []string{"target.txt"}},
			check: func(t *testing.T, w applyWorld, policy ApplyPolicy) {
				fileIs(t, w, "prot.txt", twenty)
				if policy == ApplySWEBench {
					fileIs(t, w, "target.txt", numbered(20, map[int]string{10: "TEN", 13: "thirteen"}))
				}
			},
		},
		{
			name:   "a hunk that fits only another file of the patch is not put there",
			files:  map[string]string{"a.txt": numbered(20, map[int]string{10: ""}), "b.txt": twenty},
			patch:  abPatch,
			strict: refused(ErrPatchFailed), swebench: refused(ErrPatchFailed),
		},
		{
			// The grader resets restored paths after the apply; Changed tells it which files
			// the fuzz step wrote, to check them again.
			name: "fuzz onto a file under a restored path: Changed names it",
			files: map[string]string{"src/calc.py": twenty,
				"tests/test_calc.py": numbered(20, map[int]string{8: "eight"})},
			patch: gitDiff(map[string]string{"src/calc.py": twenty, "tests/test_calc.py": twenty},
				map[string]string{"src/calc.py": fiveFx, "tests/test_calc.py": tenFix}),
			strict:   refused(ErrPatchFailed),
			swebench: applyOutcome{method: MethodFuzz, changed: []string{"src/calc.py", "tests/test_calc.py"}},
		},
		{
			name:     "a symlink in the tree on a patch path",
			files:    map[string]string{"a.txt": twenty},
			symlinks: map[string]string{"lnk": "OUTSIDE"},
			patch: literal("--- a/lnk/keep.txt\n+++ b/lnk/keep.txt\n@@ -1 +1 @@\n-outside the workspace\n" +
				"+written through a symlink\n"),
			strict: refused(ErrUnsafePath), swebench: refused(ErrUnsafePath),
		},
		{
			name:  "'..' in a name",
			files: map[string]string{"a.txt": twenty},
			patch: literal("--- a/../outside/keep.txt\n+++ b/../outside/keep.txt\n" +
				"@@ -1 +1 @@\n-outside the workspace\n+x\n"),
			strict: refused(ErrUnsafePath), swebench: refused(ErrUnsafePath),
		},
		{
			name:  "file creation modes: 0755 and 0644 only, from git's new mode",
			files: map[string]string{"a.txt": numbered(20, map[int]string{7: "seven"})},
			patch: gitDiff(map[string]string{"a.txt": twenty},
				map[string]string{"a.txt": tenFix, "run.sh": "#!/bin/sh\n", "data.txt": "data\n"}),
			strict:   refused(ErrPatchFailed),
			swebench: applyOutcome{method: MethodFuzz, changed: []string{"a.txt", "data.txt", "run.sh"}},
			check: func(t *testing.T, w applyWorld, policy ApplyPolicy) {
				if policy != ApplySWEBench {
					return
				}
				for name, want := range map[string]fs.FileMode{"run.sh": 0o755, "data.txt": 0o644, "a.txt": 0o644} {
					if fi, err := os.Stat(filepath.Join(w.ws, name)); err != nil || fi.Mode().Perm() != want {
						t.Errorf("%s: %v, %v; want mode %v", name, fi.Mode(), err, want)
					}
				}
			},
		},
		{
			name:   "a patch already in the file is refused, not applied in reverse",
			files:  map[string]string{"a.txt": tenFix},
			patch:  gitDiff(map[string]string{"a.txt": twenty}, map[string]string{"a.txt": tenFix}),
			strict: refused(ErrPatchFailed), swebench: refused(ErrPatchFailed),
		},
		{
			name:   "removed lines never fuzz",
			files:  map[string]string{"a.txt": numbered(20, map[int]string{10: "line ten"})},
			patch:  gitDiff(map[string]string{"a.txt": twenty}, map[string]string{"a.txt": tenFix}),
			strict: refused(ErrPatchFailed), swebench: refused(ErrPatchFailed),
		},
		{
			name:   "a deleted file that gained lines is not deleted",
			files:  map[string]string{"a.txt": twenty, "d.txt": "one\ntwo\nthree\n"},
			patch:  gitDiff(map[string]string{"a.txt": twenty, "d.txt": "one\ntwo\n"}, map[string]string{"d.txt": ""}),
			strict: refused(ErrPatchFailed), swebench: refused(ErrPatchFailed),
		},
		{
			name:   "a new file over an existing one",
			files:  map[string]string{"a.txt": twenty, "n.txt": "already here\n"},
			patch:  gitDiff(map[string]string{"a.txt": twenty}, map[string]string{"n.txt": "new\n"}),
			strict: refused(ErrPatchFailed), swebench: refused(ErrPatchFailed),
		},
		{
			name:   "a new file where a directory with files stands",
			files:  map[string]string{"a.txt": numbered(20, map[int]string{7: "seven"}), "d/x.txt": "x\n"},
			patch:  gitDiff(map[string]string{"a.txt": twenty}, map[string]string{"a.txt": tenFix, "d": "file\n"}),
			strict: refused(ErrPatchFailed), swebench: refused(ErrPatchFailed),
		},
		{
			name:  "a binary patch that does not apply",
			files: map[string]string{"b.bin": "\x00\x01other\xff"},
			patch: gitDiff(map[string]string{"b.bin": "\x00\x01\x02binary\xff"},
				map[string]string{"b.bin": "\x00\x01\x03binary\xfe\x00"}),
			strict: refused(ErrPatchFailed), swebench: refused(ErrPatchFailed),
		},
		{
			name:  "a rename whose content drifted",
			files: map[string]string{"old.py": numbered(30, map[int]string{3: "three"})},
			patch: gitDiff(map[string]string{"old.py": numbered(30, nil)},
				map[string]string{"old.py": "", "pkg/new.py": numbered(30, map[int]string{6: "six"})}),
			strict:   refused(ErrPatchFailed),
			swebench: applyOutcome{method: MethodFuzz, changed: []string{"old.py", "pkg/new.py"}},
			check: func(t *testing.T, w applyWorld, policy ApplyPolicy) {
				if policy == ApplySWEBench {
					fileIs(t, w, "pkg/new.py", numbered(30, map[int]string{3: "three", 6: "six"}))
				}
			},
		},
		{
			name:  "a file replaced by a directory, beside a drifted hunk",
			files: map[string]string{"a.txt": numbered(20, map[int]string{7: "seven"}), "f": "file\n"},
			patch: gitDiff(map[string]string{"a.txt": twenty, "f": "file\n"},
				map[string]string{"a.txt": tenFix, "f": "", "f/inner.txt": "inner\n"}),
			strict:   refused(ErrPatchFailed),
			swebench: applyOutcome{method: MethodFuzz, changed: []string{"a.txt", "f", "f/inner.txt"}},
		},
	}
	for _, r := range rows {
		for _, policy := range []ApplyPolicy{ApplyStrict, ApplySWEBench} {
			t.Run(r.name+"/"+string(policy), func(t *testing.T) {
				w := newApplyWorld(t, r.files)
				for link, target := range r.symlinks {
					if target == "OUTSIDE" {
						target = w.outside
					}
					if err := os.Symlink(target, filepath.Join(w.ws, link)); err != nil {
						t.Fatal(err)
					}
				}
				want := r.strict
				if policy == ApplySWEBench {
					want = r.swebench
				}
				got, err := applyChecked(t, w, r.patch(t), policy)
				switch {
				case want.err == nil && err != nil:
					t.Fatalf("err = %v, want it applied", err)
				case want.err != nil && !errors.Is(err, want.err):
					t.Fatalf("err = %v, want %v", err, want.err)
				}
				if diff := cmp.Diff(want.method, got.Method); diff != "" || !cmp.Equal(want.changed, got.Changed) {
					t.Errorf("method %q changed %v, want %q %v", got.Method, got.Changed, want.method, want.changed)
				}
				if policy == ApplySWEBench && errors.Is(err, ErrPatchFailed) {
					steps := []string{"(apply: swebench) git apply --reject: ", "(apply: swebench) fuzz: "}
					for _, step := range steps {
						if !strings.Contains(err.Error(), step) {
							t.Errorf("the error does not say why %q failed: %v", step, err)
						}
					}
				}
				if r.check != nil {
					r.check(t, w, policy)
				}
			})
		}
	}
}
