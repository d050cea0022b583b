package gitsafe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// numbered is "line 1\n" ... "line n\n", with some lines replaced ("" drops a line).
func numbered(n int, edits map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		l, ok := edits[i]
		if !ok {
			l = fmt.Sprintf("line %d", i)
		}
		if ok && l == "" {
			continue
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// applyWorld is a workspace beside a directory that no apply may touch.
type applyWorld struct {
	ws, outside string
}

func newApplyWorld(t *testing.T, files map[string]string) applyWorld {
	root := t.TempDir()
	w := applyWorld{ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside")}
	for _, d := range []string{w.ws, w.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFiles(t, w.ws, files)
	writeFiles(t, w.outside, map[string]string{"keep.txt": "outside the workspace\n"})
	return w
}

// applyChecked applies under policy and checks what every apply must keep whatever the
// patch: on failure the workspace is exactly as before; on success only the paths in
// Applied.Changed differ, they are the patch's own, and no .rej or .orig file appeared;
// nothing outside the workspace changed.
func applyChecked(t *testing.T, w applyWorld, patch string, policy ApplyPolicy) (Applied, error) {
	t.Helper()
	p, err := ParsePatch([]byte(patch))
	if err != nil {
		return Applied{}, err
	}
	before, outside := dirState(t, w.ws), dirState(t, w.outside)
	got, err := ApplyWith(testCtx(t), p, w.ws, policy)
	after := dirState(t, w.ws)
	if diff := cmp.Diff(outside, dirState(t, w.outside)); diff != "" {
		t.Errorf("%s: the directory beside the workspace changed:\n%s", policy, diff)
	}
	if err != nil {
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("%s: failed apply changed the workspace (-before +after):\n%s", policy, diff)
		}
		return got, err
	}
	var differ []string
	for k := range after {
		if before[k] != after[k] {
			differ = append(differ, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			differ = append(differ, k)
		}
	}
	own := p.Paths()
	for _, k := range differ {
		if !slices.Contains(got.Changed, k) && !isParentOf(k, got.Changed) {
			t.Errorf("%s: %s changed but Applied.Changed = %v", policy, k, got.Changed)
		}
		if (strings.HasSuffix(k, ".rej") || strings.HasSuffix(k, ".orig")) && !slices.Contains(own, k) {
			t.Errorf("%s: left %s", policy, k)
		}
	}
	for _, c := range got.Changed {
		if !slices.Contains(own, c) {
			t.Errorf("%s: Applied.Changed names %s, which the patch does not", policy, c)
		}
	}
	return got, nil
}

// isParentOf: a directory made or removed for a changed path is part of that change.
func isParentOf(dir string, paths []string) bool {
	return slices.ContainsFunc(paths, func(p string) bool { return strings.HasPrefix(p, dir+"/") })
}

const calcBase = `"""Small arithmetic helpers."""


def add(a, b):
    return a + b


def sub(a, b):
    return a + b


def mul(a, b):
    return a * b
`

// calcDrifted is the file the workspace holds: the model wrote its patch against calcBase,
// and since then a docstring was added above sub and a comment changed the line after it.
const calcDrifted = `"""Small arithmetic helpers."""


def add(a, b):
    """Add two numbers."""
    return a + b

# subtraction
def sub(a, b):
    return a + b


def mul(a, b):  # multiply
    return a * b
`

func TestApplyDriftedModelPatch(t *testing.T) {
	fixed := strings.Replace(calcBase, "    return a + b\n\n\ndef mul", "    return a - b\n\n\ndef mul", 1)
	patch, _ := gitPatch(t, map[string]string{"calc.py": calcBase}, map[string]string{"calc.py": fixed}, nil)

	_, err := applyChecked(t, newApplyWorld(t, map[string]string{"calc.py": calcDrifted}), patch, ApplyStrict)
	if !errors.Is(err, ErrPatchFailed) {
		t.Fatalf("strict: %v, want ErrPatchFailed", err)
	}
	w := newApplyWorld(t, map[string]string{"calc.py": calcDrifted})
	got, err := applyChecked(t, w, patch, ApplySWEBench)
	if err != nil {
		t.Fatalf("swebench: %v", err)
	}
	want := Applied{Method: MethodFuzz, Changed: []string{"calc.py"},
		Hunks: []HunkPlacement{{Path: "calc.py", Hunk: 1, Line: 7, Offset: 1, Fuzz: 2}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Applied (-want +got):\n%s", diff)
	}
	wantFile := strings.Replace(calcDrifted, "def sub(a, b):\n    return a + b", "def sub(a, b):\n    return a - b", 1)
	if b, _ := os.ReadFile(filepath.Join(w.ws, "calc.py")); string(b) != wantFile {
		t.Errorf("calc.py after fuzz:\n%q\nwant:\n%q", b, wantFile)
	}
}

// An offset alone is git apply's own business: the method says so under either policy.
func TestApplyMethodRecorded(t *testing.T) {
	base := map[string]string{"f.txt": numbered(30, nil)}
	patch, _ := gitPatch(t, base, map[string]string{"f.txt": numbered(30, map[int]string{15: "fifteen"})}, nil)
	shifted := "new 1\nnew 2\n" + numbered(30, nil)
	for _, policy := range []ApplyPolicy{ApplyStrict, ApplySWEBench} {
		got, err := applyChecked(t, newApplyWorld(t, map[string]string{"f.txt": shifted}), patch, policy)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Applied{Method: MethodGitApply, Changed: []string{"f.txt"}}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", policy, diff)
		}
	}
}

func TestParseApplyPolicy(t *testing.T) {
	for in, want := range map[string]ApplyPolicy{"": ApplyStrict, "strict": ApplyStrict, "swebench": ApplySWEBench} {
		if got, err := ParseApplyPolicy(in); err != nil || got != want {
			t.Errorf("ParseApplyPolicy(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"SWEBench", "fuzz", "git"} {
		if _, err := ParseApplyPolicy(bad); err == nil || !strings.Contains(err.Error(), `"swebench"`) {
			t.Errorf("ParseApplyPolicy(%q) = %v, want an error naming the policies", bad, err)
		}
	}
	p, err := ParsePatch([]byte("\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyWith(testCtx(t), p, t.TempDir(), "loose"); err == nil {
		t.Error("ApplyWith accepted an unknown policy")
	}
}

// TestApplyStepsReproduceGitApply runs the fallback steps on patches that apply cleanly:
// each must leave the tree git apply leaves (the real git diff's own working tree), through
// the same commit, for every kind of change in applyCases.
func TestApplyStepsReproduceGitApply(t *testing.T) {
	steps := map[string]func(t *testing.T, p *Patch, ws string) (map[string]entry, error){
		"git apply --reject": func(t *testing.T, p *Patch, ws string) (map[string]entry, error) {
			return rejectStep(testCtx(t), p, ws)
		},
		"fuzz": func(t *testing.T, p *Patch, ws string) (map[string]entry, error) {
			states, _, err := fuzzStep(p, ws)
			return states, err
		},
	}
	for _, c := range applyCases {
		for name, step := range steps {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				patch, want := gitPatch(t, c.base, c.changed, c.modes)
				p, err := ParsePatch([]byte(patch))
				if err != nil {
					t.Fatal(err)
				}
				ws := plainDir(t, c.base)
				states, err := step(t, p, ws)
				if strings.HasPrefix(c.name, "binary") && name == "fuzz" {
					if !errors.Is(err, ErrPatchFailed) || !strings.Contains(err.Error(), "binary") {
						t.Fatalf("fuzz on a binary patch: %v, want a refusal naming it", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := commit(ws, states); err != nil {
					t.Fatal(err)
				}
				exp := filesOnly(dirState(t, want))
				for k := range exp {
					if strings.HasPrefix(k, ".git/") {
						delete(exp, k)
					}
				}
				if diff := cmp.Diff(exp, filesOnly(dirState(t, ws))); diff != "" {
					t.Errorf("tree (-git +step):\n%s", diff)
				}
			})
		}
	}
}
