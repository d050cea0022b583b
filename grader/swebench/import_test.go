package swebench

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/integrity"
	"github.com/tender-grader/tender/grader/suite"
)

// The demo suite's repository, base commit and patches: real inputs for a real import.
const (
	demoDir  = "../../fixtures/demo"
	demoBase = "5dc05fd562f9d9f35bfb9d1d99baac8ce6ebb568"
	demoF2P  = "tests/test_formatting.py::test_group_digits_negative"
	demoP2P  = "tests/test_formatting.py::test_group_digits"
)

// bracketPatch adds a file outside the default restored paths whose name holds glob syntax.
const bracketPatch = `diff --git a/data/case[1].txt b/data/case[1].txt
new file mode 100644
--- /dev/null
+++ b/data/case[1].txt
@@ -0,0 +1 @@
+x
`

// demoClone makes a local clone of the demo repository from its vendored stream with real
// git, as an operator's checkout would be.
func demoClone(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	stream, err := os.Open(demoDir + "/repos/calc.fi")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	for _, args := range [][]string{{"init", "-q"}, {"fast-import", "--quiet"}, {"checkout", "-q", demoBase}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if args[0] == "fast-import" {
			cmd.Stdin = stream
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func readDemo(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(demoDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// importCase is one import: its instances and predictions as records, and the options.
type importCase struct {
	instances []map[string]any
	preds     []map[string]any // nil: no predictions file
	env       string           // the --env spec; "": none
	opts      ImportOptions
}

func demoInstance(t *testing.T, id string) map[string]any {
	return map[string]any{"instance_id": id, "repo": "acme/calc", "base_commit": demoBase,
		"patch": readDemo(t, "shared/reference.diff"), "test_patch": readDemo(t, "shared/test.diff"),
		"problem_statement": "format_number puts a comma after the minus sign: " + id,
		"FAIL_TO_PASS":      `["` + demoF2P + `"]`, "PASS_TO_PASS": []string{demoP2P}, "version": "0.3"}
}

func jsonl(t *testing.T, records []map[string]any) *strings.Reader {
	t.Helper()
	var b strings.Builder
	for _, r := range records {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	return strings.NewReader(b.String())
}

// run imports c into a new directory and returns it with what Import said.
func (c importCase) run(t *testing.T, clone string) (string, ImportSummary, error) {
	t.Helper()
	o := c.opts
	o.Instances = jsonl(t, c.instances)
	if c.preds != nil {
		o.Predictions = jsonl(t, c.preds)
	}
	if c.env != "" {
		o.Env, o.EnvFile = strings.NewReader(c.env), filepath.Join(t.TempDir(), "spec.yaml")
	}
	if o.Repos == nil {
		o.Repos = map[string]string{"acme__calc": clone}
	}
	o.Out = filepath.Join(t.TempDir(), "suite")
	o.Name, o.WorkDir = "swe", t.TempDir()
	sum, err := Import(context.Background(), o)
	return o.Out, sum, err
}

// TestImportWritesASuite imports four instances with predictions (the reference fix, a wrong
// one, an empty one, and none for the fourth) and checks the suite it wrote with the real
// loader and the real git: every pair's files, the restored paths, the instance set and a
// bundle that holds the base commit.
func TestImportWritesASuite(t *testing.T) {
	clone := demoClone(t)
	wrong := readDemo(t, "pairs/wrong-fix/patch.diff")
	odd := demoInstance(t, "acme__calc-5")
	odd["test_patch"] = bracketPatch
	c := importCase{
		instances: []map[string]any{demoInstance(t, "acme__calc-4"), demoInstance(t, "acme__calc-2"),
			demoInstance(t, "acme__calc-1"), demoInstance(t, "acme__calc-3"), odd},
		preds: []map[string]any{
			{
				"instance_id":        "acme__calc-1",
				"model_patch":        readDemo(t, "shared/reference.diff"),
				"model_name_or_path": "m-x",
			},
			{"instance_id": "acme__calc-2", "model_patch": wrong, "model_name_or_path": "m-x"},
			{"instance_id": "acme__calc-3", "model_patch": "", "model_name_or_path": "m-x"},
			{"instance_id": "acme__calc-5", "model_patch": nil},
		},
	}
	var steps []string
	c.opts.Progress = func(msg string) { steps = append(steps, msg) }
	out, sum, err := c.run(t, clone)
	if err != nil {
		t.Fatal(err)
	}
	want := ImportSummary{Pairs: 4, EmptyPatch: []string{"acme__calc-3", "acme__calc-5"},
		NoPrediction: []string{"acme__calc-4"}, Model: "m-x",
		Notes: []string{"acme/calc is not in Tender's table of known environments: its pairs run in the suite's " +
			"verifier (tender env infer --repo CLONE --commit SHA proposes an environment; give it with --env)"}}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if len(steps) != 2 || !strings.HasPrefix(steps[0], "reading the clone of acme__calc") ||
		steps[1] != "writing repos/acme__calc.bundle: 1 base commit(s)" {
		t.Errorf("progress %q", steps)
	}
	s, err := suite.Load(out, suite.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range s.Pairs {
		ids = append(ids, p.ID)
	}
	if diff := cmp.Diff([]string{"acme__calc-1", "acme__calc-2", "acme__calc-3", "acme__calc-5"}, ids); diff != "" {
		t.Errorf("pairs in id order (-want +got):\n%s", diff)
	}
	p := s.Pairs[1]
	if string(p.Patch) != wrong || string(p.ReferencePatch) != readDemo(t, "shared/reference.diff") ||
		string(p.TestPatch) != readDemo(t, "shared/test.diff") || p.BaseCommit != demoBase ||
		!strings.HasSuffix(string(p.Issue), "acme__calc-2") || p.Repository != "acme__calc" ||
		!slices.Equal(p.FailToPass, []string{demoF2P}) || !slices.Equal(p.PassToPass, []string{demoP2P}) {
		t.Errorf("pair acme__calc-2: %+v", p)
	}
	if s.Import.Model != "m-x" || s.Import.SWEBench == nil || !slices.Equal(s.Import.SWEBench.NoPrediction,
		[]string{"acme__calc-4"}) || len(s.Import.SWEBench.NotImported) != 0 {
		t.Errorf("import section %+v", s.Import)
	}
	if !s.Restored.Match("data/case[1].txt") || s.Restored.Match("data/case1.txt") ||
		!slices.Contains(s.RestoredPaths, `data/case[[]1].txt`) {
		t.Errorf("restored paths %q: want the test patch's own file, quoted", s.RestoredPaths)
	}
	if s.Repositories["acme__calc"].Bundle != "repos/acme__calc.bundle" {
		t.Fatalf("repositories %+v", s.Repositories)
	}
	repo, err := gitsafe.Snapshot(context.Background(), gitsafe.Source{Kind: gitsafe.SourceBundle,
		Path: filepath.Join(out, "repos", "acme__calc.bundle")}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	if _, err := repo.ResolveCommit(context.Background(), demoBase); err != nil {
		t.Errorf("the bundle lacks the base commit: %v", err)
	}
}

// TestImportWithoutPredictions grades the reference patches, as SWE-bench's "gold" does.
func TestImportWithoutPredictions(t *testing.T) {
	out, sum, err := importCase{instances: []map[string]any{demoInstance(t, "acme__calc-1")}}.run(t, demoClone(t))
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Load(out, suite.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Pairs != 1 || sum.Model != "" || string(s.Pairs[0].Patch) != readDemo(t, "shared/reference.diff") ||
		s.Import.SWEBench != nil {
		t.Errorf("summary %+v, patch %q, import %+v", sum, s.Pairs[0].Patch, s.Import)
	}
}

// TestImportWritesThePolicies: --ambiguous-ids and --apply reach the suite's keys; without
// them the suite has neither key (the defaults).
func TestImportWritesThePolicies(t *testing.T) {
	clone := demoClone(t)
	for _, tc := range []struct{ ambiguous, apply, wantAmb, wantApply string }{
		{"", "", suite.AmbiguousError, "strict"},
		{suite.AmbiguousAll, "swebench", suite.AmbiguousAll, "swebench"},
	} {
		c := importCase{instances: []map[string]any{demoInstance(t, "acme__calc-1")}}
		c.opts.AmbiguousIDs, c.opts.Apply = tc.ambiguous, tc.apply
		out, _, err := c.run(t, clone)
		if err != nil {
			t.Fatal(err)
		}
		s, err := suite.Load(out, suite.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(out, suite.SuiteFile))
		if err != nil {
			t.Fatal(err)
		}
		manifest := string(data)
		if s.AmbiguousIDs != tc.wantAmb || string(s.Apply) != tc.wantApply ||
			strings.Contains(manifest, "ambiguous_ids:") != (tc.ambiguous != "") ||
			strings.Contains(manifest, "apply:") != (tc.apply != "") {
			t.Errorf("--ambiguous-ids %q --apply %q: suite says %q, %q:\n%s", tc.ambiguous, tc.apply,
				s.AmbiguousIDs, s.Apply, manifest)
		}
	}
}

// TestImportInEnvironments: each instance runs in the environment the spec gives its
// repository and version.
func TestImportInEnvironments(t *testing.T) {
	newer := demoInstance(t, "acme__calc-2")
	newer["version"] = 0.4
	c := importCase{instances: []map[string]any{demoInstance(t, "acme__calc-1"), newer},
		env: "acme/calc:\n  \"0.3\":\n    debian: {packages: [python3-tz]}\n  \"*\":\n    image: " + pinned + "\n"}
	out, sum, err := c.run(t, demoClone(t))
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Load(out, suite.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	envs := map[string]string{}
	for _, p := range s.Pairs {
		envs[p.ID] = p.Environment
	}
	want := map[string]string{"acme__calc-1": "acme__calc-0.3", "acme__calc-2": "acme__calc-any"}
	written := []string{"acme__calc-0.3", "acme__calc-any"}
	if diff := cmp.Diff(want, envs); diff != "" || !slices.Equal(sum.Environments, written) {
		t.Errorf("environments %v (-want +got):\n%s", sum.Environments, diff)
	}
	if s.Environments["acme__calc-any"].Ref != pinned || s.Environments["acme__calc-0.3"].Kind != suite.EnvDebian {
		t.Errorf("environments %+v", s.Environments)
	}
}

// TestImportRefusesAndWritesNothing: an instance that cannot be imported fails the whole
// import, naming it and what to do, and nothing is written.
func TestImportRefusesAndWritesNothing(t *testing.T) {
	clone := demoClone(t)
	withField := func(id, k string, v any) map[string]any {
		in := demoInstance(t, id)
		in[k] = v
		return in
	}
	for _, tt := range []struct {
		name   string
		c      importCase
		failed []string // the summary's lines
		want   string   // in the error
	}{
		{"base commit not in the clone", importCase{instances: []map[string]any{
			withField("acme__calc-1", "base_commit", strings.Repeat("ab", 20))}},
			[]string{"acme__calc-1: base commit " + strings.Repeat("ab", 20) + " is not in the clone"},
			"1 instance(s) cannot be imported"},
		{"no clone for the repository", importCase{instances: []map[string]any{withField("x__y-1", "repo", "x/y")}},
			[]string{"x__y-1: needs repository x/y; map it to a local clone with --repo x__y=PATH"}, "nothing was written"},
		{"test patch does not parse", importCase{instances: []map[string]any{
			withField("acme__calc-1", "test_patch", "diff --git a/x\n+junk\n")}},
			[]string{"acme__calc-1: test_patch cannot be used"}, "--keep-going"},
		{"reference patch does not parse", importCase{instances: []map[string]any{
			withField("acme__calc-1", "patch", "diff --git a/x\n+junk\n")}},
			[]string{"acme__calc-1: patch (the reference) cannot be used"}, "cannot be imported"},
		{"a bad record", importCase{instances: []map[string]any{withField("acme__calc-1", "FAIL_TO_PASS", "[]")}},
			[]string{"acme__calc-1: instances record 1: bad SWE-bench record: FAIL_TO_PASS is empty"}, "cannot be imported"},
		{"no environment for the version", importCase{instances: []map[string]any{demoInstance(t, "acme__calc-1")},
			env: "acme/calc:\n  \"9\":\n    image: " + pinned + "\n"},
			[]string{`acme__calc-1: --env`}, "cannot be imported"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, sum, err := tt.c.run(t, clone)
			if !errors.Is(err, suite.ErrBadSuite) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want ErrBadSuite saying %q", err, tt.want)
			}
			if len(sum.Failed) != len(tt.failed) {
				t.Fatalf("failed %q, want %q", sum.Failed, tt.failed)
			}
			for i, f := range tt.failed {
				if !strings.HasPrefix(sum.Failed[i], f) {
					t.Errorf("failed[%d] %q, want it to start %q", i, sum.Failed[i], f)
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("--out exists after a failed import (%v)", err)
			}
			if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}

// TestImportKeepGoing skips what cannot be imported and records it: an instance with a
// candidate is one SWE-bench counts as an error; a record without a usable id is only
// reported, and the suite still loads.
func TestImportKeepGoing(t *testing.T) {
	bad := demoInstance(t, "acme__calc-2")
	bad["base_commit"] = strings.Repeat("ab", 20)
	noID := demoInstance(t, "../x")
	short := demoInstance(t, "acme__calc-3")
	short["FAIL_TO_PASS"] = "[]"
	c := importCase{instances: []map[string]any{demoInstance(t, "acme__calc-1"), bad, noID, short},
		opts: ImportOptions{KeepGoing: true}}
	out, sum, err := c.run(t, demoClone(t))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Pairs != 1 || len(sum.Failed) != 3 || !strings.HasPrefix(sum.Failed[0], "instances record 3: ") {
		t.Errorf("summary %+v", sum)
	}
	s, err := suite.Load(out, suite.LoadOptions{})
	if err != nil {
		t.Fatalf("the suite written with --keep-going does not load: %v", err)
	}
	if s.Import.SWEBench == nil ||
		!slices.Equal(s.Import.SWEBench.NotImported, []string{"acme__calc-2", "acme__calc-3"}) {
		t.Errorf("not imported %+v, want the two instances with an id", s.Import.SWEBench)
	}
}

// TestImportPredictionsRefused: predictions must name instances of the file and come from one
// model; instances that cannot all be left out.
func TestImportPredictionsRefused(t *testing.T) {
	clone := demoClone(t)
	one := []map[string]any{demoInstance(t, "acme__calc-1"), demoInstance(t, "acme__calc-2")}
	for _, tt := range []struct {
		name  string
		preds []map[string]any
		want  string
	}{
		{"unknown instance", []map[string]any{{"instance_id": "acme__calc-9", "model_patch": ""}},
			`predictions: "acme__calc-9" is not an instance in the instances file`},
		{"two models", []map[string]any{{"instance_id": "acme__calc-1", "model_name_or_path": "a"},
			{"instance_id": "acme__calc-2", "model_name_or_path": "b"}}, "import one model's predictions at a time"},
		{"a bad prediction", []map[string]any{{"instance_id": ""}}, "predictions: prediction 1"},
		{"no instance covered", []map[string]any{}, "predictions: bad SWE-bench record: the file is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := importCase{instances: one, preds: tt.preds}.run(t, clone)
			if !errors.Is(err, suite.ErrBadSuite) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want ErrBadSuite saying %q", err, tt.want)
			}
		})
	}
	_, sum, err := importCase{
		instances: one,
		preds:     []map[string]any{{"instance_id": "acme__calc-1", "model_patch": ""}},
		opts:      ImportOptions{Repos: map[string]string{"other": clone}, KeepGoing: true},
	}.run(
		t,
		clone,
	)
	const nothing = "no instance to import (1 without a prediction, 1 that cannot be imported)"
	if !errors.Is(err, suite.ErrBadSuite) || !strings.Contains(err.Error(), nothing) {
		t.Errorf("nothing left to import: %v (%+v)", err, sum)
	}
	if _, _, err := (importCase{instances: nil}).run(t, clone); !errors.Is(err, suite.ErrBadSuite) ||
		!strings.Contains(err.Error(), "instances: bad SWE-bench record: the file is empty") {
		t.Errorf("an empty instances file: %v", err)
	}
}

// TestImportRefusesABadClone: a --repo that is not a git repository is the operator's mistake
// and fails the import naming the flag; git never runs against it.
func TestImportRefusesABadClone(t *testing.T) {
	notRepo := t.TempDir()
	_, _, err := importCase{instances: []map[string]any{demoInstance(t, "acme__calc-1")},
		opts: ImportOptions{Repos: map[string]string{"acme__calc": notRepo}}}.run(t, "")
	if !errors.Is(err, suite.ErrBadSuite) || !strings.Contains(err.Error(), "--repo acme__calc="+notRepo) {
		t.Errorf("err %v, want ErrBadSuite naming --repo acme__calc=%s", err, notRepo)
	}
}

func TestPatchFilesAndQuoteGlob(t *testing.T) {
	rename := "diff --git a/old.py b/new.py\nsimilarity index 100%\nrename from old.py\nrename to new.py\n"
	if got := patchFiles(rename + bracketPatch); !slices.Equal(got, []string{"old.py", "new.py", "data/case[1].txt"}) {
		t.Errorf("patchFiles = %q", got)
	}
	if got := patchFiles("not a patch\x00"); got != nil {
		t.Errorf("patchFiles of junk = %q, want nil", got)
	}
	for _, tt := range []struct{ name, want string }{
		{"a*b?c[d]{e,f}.py", "a[*]b[?]c[[]d][{]e,f[}].py"},
		{" x y ", "[ ]x y[ ]"},
		{"plain/file.py", "plain/file.py"},
	} {
		got := quoteGlob(tt.name)
		m, err := integrity.Compile("restored_paths", []string{got}, false)
		other := strings.Replace(tt.name, tt.name[1:2], "Q", 1) // what a wildcard in place of [1] would match
		if got != tt.want || err != nil || !m.Match(tt.name) || m.Match(other) || m.Match(tt.name+"x") {
			t.Errorf("quoteGlob(%q) = %q (compiles: %v), want %q matching only the name", tt.name, got, err, tt.want)
		}
	}
}
