package envs

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/bundle"
	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/docker"
)

// writeEnvSuite makes a suite around e2e.SrcLayoutRepo (a real git bundle) whose pairs run in
// three environments and in the suite's own verifier, and returns it with the base commit.
func writeEnvSuite(t *testing.T, pytestID string) string {
	t.Helper()
	suite := t.TempDir()
	base := e2e.BundleRepo(t, e2e.SrcLayoutRepo, filepath.Join(suite, "repos", "calc.bundle"))
	pair := func(id, env, patch string, f2p ...string) string {
		e := ""
		if env != "" {
			e = "\n    environment: " + env
		}
		return fmt.Sprintf(
			"  - id: %s\n    repository: calc%s\n    base_commit: %s\n    issue: issue.md\n    patch: %s\n    fail_to_pass: [%s]\n",
			id,
			e,
			base,
			patch,
			strings.Join(f2p, ", "),
		)
	}
	manifest := "name: envs\nversion: \"1\"\nverifier:\n  python_path: [src]\n" +
		"environments:\n" +
		"  file:\n    dockerfile: envs/file/Dockerfile\n" +
		"  pinned:\n    image: " + pytestID + "\n" +
		"  nopath:\n    image: " + pytestID + "\n    python_path: []\n" +
		"repositories:\n  calc: {bundle: repos/calc.bundle}\npairs:\n" +
		pair("gold-file", "file", "gold.diff", "tests/test_calc.py::test_double", "tests/test_env.py::test_marker") +
		pair(
			"gold-pinned",
			"pinned",
			"gold.diff",
			"tests/test_calc.py::test_double",
			"tests/test_env.py::test_no_marker",
		) +
		pair("gold-nopath", "nopath", "gold.diff", "tests/test_calc.py::test_double") +
		pair("gold", "", "gold.diff", "tests/test_calc.py::test_double") +
		pair("empty", "", "empty.diff", "tests/test_calc.py::test_double") +
		pair("wrong", "", "wrong.diff", "tests/test_calc.py::test_double")
	clitest.WriteFiles(t, suite, map[string]string{"tender.yaml": manifest, "issue.md": "double() triples.\n",
		"gold.diff": e2e.SrcLayoutGold, "wrong.diff": e2e.SrcLayoutWrong, "empty.diff": "",
		"envs/file/Dockerfile":        "FROM tender-verifier/pytest\nCOPY tender_envmark.py /usr/lib/python3/dist-packages/tender_envmark.py\n",
		"envs/file/tender_envmark.py": "MARK = \"dockerfile\"\n"})
	return suite
}

// TestGradeInEnvironments grades a src/ layout project in real verifiers: one environment
// built from a Dockerfile (FROM the pytest image, plus a module), one pinned by image ID, one
// that clears python_path, and the suite's own verifier (python_path: [src]). Each pair's
// results carry the image it ran in.
func TestGradeInEnvironments(t *testing.T) {
	ctx := context.Background()
	d, err := docker.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	pytestID, err := d.EnsureImage(ctx, sandbox.ImagePytest, nil)
	if err != nil {
		t.Fatal(err)
	}
	suite := writeEnvSuite(t, pytestID)

	// The suite's environments build up front, by name, and say which image each is.
	stdout, stderr, code := e2e.RunTender(t, "image", "build", "--suite", suite)
	if code != cli.ExitOK {
		t.Fatalf("image build --suite: exit %d\n%s%s", code, stdout, stderr)
	}
	built := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		f := strings.Fields(line)
		built[f[0]] = f[1:]
	}
	fileRef, fileID := built["file"][0], built["file"][1]
	if !strings.HasPrefix(fileRef, "tender-env/dockerfile:") || !strings.HasPrefix(fileID, "sha256:") ||
		fileID == pytestID {
		t.Fatalf("image build --suite printed %q", stdout)
	}
	if got := built["pinned"]; len(got) != 2 || got[1] != pytestID {
		t.Errorf("pinned environment: %v, want image %s", got, pytestID)
	}
	// A pair runs in the suite's own verifier image, so that is prepared too.
	if got := built["(verifier)"]; len(got) != 2 || got[1] != pytestID {
		t.Errorf("the suite's verifier image: %v, want %s", got, pytestID)
	}

	results, out := e2e.GradeOK(t, suite, "--concurrency", "2")
	want := map[string]struct {
		verdict report.Verdict
		code    report.Code // a reason the result must carry, or ""
		image   string
	}{
		"gold-file":   {report.Resolved, "", fileID},
		"gold-pinned": {report.Resolved, "", pytestID},
		"gold-nopath": {"", "", pytestID}, // control: without src on sys.path the gold cannot pass
		"gold":        {report.Resolved, "", pytestID},
		"empty":       {report.Unresolved, report.CodeEmptyPatch, ""},
		"wrong":       {report.Unresolved, "", pytestID},
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d", len(results), len(want))
	}
	for _, r := range results {
		w := want[r.ID]
		if w.verdict == "" && r.Verdict == report.Resolved || w.verdict != "" && r.Verdict != w.verdict {
			t.Errorf("%s: %s %v, want %s", r.ID, r.Verdict, r.Reasons, w.verdict)
		}
		if w.code != "" && !slices.Contains(report.DistinctCodes(r.Reasons), string(w.code)) {
			t.Errorf("%s: reasons %v, want %s", r.ID, r.Reasons, w.code)
		}
		if w.image == "" {
			if len(r.Checks) != 0 {
				t.Errorf("%s: %d checks ran, want none", r.ID, len(r.Checks))
			}
			continue
		}
		if len(r.Checks) == 0 || r.Checks[0].ImageID != w.image {
			t.Errorf("%s: checks %+v, want them run in image %s", r.ID, r.Checks, w.image)
		}
	}
	m, err := bundle.Verify(out, nil, bundle.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Inputs.Images; got[fileRef] != fileID || got[sandbox.ImagePytest] != pytestID || len(got) != 3 {
		t.Errorf(
			"the bundle's input images are %v; want %s = %s, %s = %s and the pinned one",
			got,
			fileRef,
			fileID,
			sandbox.ImagePytest,
			pytestID,
		)
	}
}

// TestGradeEnvironmentImageMissing: an environment pinned to an image this machine does not
// have fails its own pairs as error (verifier_failed, naming the environment), before any
// verifier starts, and the other pairs are graded as usual.
func TestGradeEnvironmentImageMissing(t *testing.T) {
	suite := t.TempDir()
	base := e2e.BundleRepo(t, e2e.SrcLayoutRepo, filepath.Join(suite, "repos", "calc.bundle"))
	gone := "sha256:" + strings.Repeat("0", 64)
	clitest.WriteFiles(t, suite, map[string]string{"issue.md": "double() triples.\n", "gold.diff": e2e.SrcLayoutGold,
		"tender.yaml": "name: gone\nversion: \"1\"\nverifier:\n  python_path: [src]\nenvironments:\n  gone:\n    image: " + gone + "\n" +
			"repositories:\n  calc: {bundle: repos/calc.bundle}\npairs:\n" +
			fmt.Sprintf(
				"  - {id: in-gone, environment: gone, repository: calc, base_commit: %s, issue: issue.md, patch: gold.diff, fail_to_pass: [tests/test_calc.py::test_double]}\n",
				base,
			) +
			fmt.Sprintf(
				"  - {id: plain, repository: calc, base_commit: %s, issue: issue.md, patch: gold.diff, fail_to_pass: [tests/test_calc.py::test_double]}\n",
				base,
			)})
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := e2e.RunTender(t, "grade", suite, "--out", out)
	if code != cli.ExitOK || !strings.Contains(stderr, "tender: environment gone: FAILED: ") {
		t.Fatalf("exit %d, want 0 with the failed environment named\n%s%s", code, stdout, stderr)
	}
	results := clitest.ReadResults(t, out).Pairs
	byID := map[string]report.PairResult{}
	for _, r := range results {
		byID[r.ID] = r
	}
	g, p := byID["in-gone"], byID["plain"]
	if g.Verdict != report.Error || len(g.Reasons) == 0 || g.Reasons[0].Code != report.CodeVerifierFailed ||
		!strings.Contains(g.Reasons[0].Detail, "environment gone") || len(g.Checks) != 0 {
		t.Errorf(
			"in-gone: %s %+v, %d checks; want error, verifier_failed naming the environment, no check",
			g.Verdict,
			g.Reasons,
			len(g.Checks),
		)
	}
	if p.Verdict != report.Resolved {
		t.Errorf("plain: %s %+v, want resolved", p.Verdict, p.Reasons)
	}

	// A shard without in-gone neither prepares nor names its environment.
	n := 2
	for grader.ShardOf("in-gone", n) == grader.ShardOf("plain", n) {
		n++
	}
	shard := fmt.Sprintf("%d/%d", grader.ShardOf("plain", n)+1, n)
	out2 := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code = e2e.RunTender(t, "grade", suite, "--out", out2, "--shard", shard)
	if code != cli.ExitOK || strings.Contains(stderr, "environment gone") {
		t.Fatalf(
			"--shard %s: exit %d, want 0 and no word of another shard's environment\n%s%s",
			shard,
			code,
			stdout,
			stderr,
		)
	}
	if rs := clitest.ReadResults(t, out2).Pairs; len(rs) != 1 || rs[0].ID != "plain" ||
		rs[0].Verdict != report.Resolved {
		t.Errorf("--shard %s graded %+v, want plain alone, resolved", shard, rs)
	}
}
