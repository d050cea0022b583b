package grader

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/sandbox"
)

var errFakeReport = errors.New("fake backend: the fixture cannot take the sentinels")

// TestVerdictOfAPytest9SubtestsReport grades a pair whose verifier writes report/junit's pytest
// 9 fixture (pytest9-subtests-pass.xml: test_all_pass has three passing subtests, counted in
// tests= with no <testcase> of their own), with the bootstrap's sentinels as a real run adds
// them: the pair is resolved. Before subtests were reconciled, the surplus in tests= made such a
// pair totals_mismatch, so no pytest 9 environment could resolve anything. The same report with
// a case of a required test taken out is unresolved (test_missing): the surplus never passes a
// test that was not reported.
func TestVerdictOfAPytest9SubtestsReport(t *testing.T) {
	t.Parallel()
	fixture, err := os.ReadFile(filepath.Join("..", "report", "junit", "testdata", "pytest9-subtests-pass.xml"))
	if err != nil {
		t.Fatal(err)
	}
	required := []string{"tests/test_sub.py::test_plain", "tests/test_sub.py::test_all_pass"}
	const plainCase = `<testcase classname="tests.test_sub" name="test_plain" time="0.001" />`
	dropped := strings.Replace(string(fixture), plainCase, "", 1)
	if dropped == string(fixture) {
		t.Fatal("the fixture no longer holds test_plain's case")
	}
	pairs, verifiers := []testPair{}, map[string]verifier{}
	for id, doc := range map[string]string{"pytest9": string(fixture), "pytest9-forged": dropped} {
		p := demoTestPair(t, id)
		p.testPatch += newFilePatch("tests/test_sub.py", "def test_plain():\n    pass\n", "100644")
		p.failToPass, p.passToPass = required, nil
		pairs = append(pairs, p)
		verifiers[id+"/target"] = withSentinels(doc)
	}
	s := writeTestSuite(t, pairs...)
	results, err := Grade(context.Background(), s, testOptions(t, newFakeBackend(t, verifiers)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]report.Code{"pytest9": nil, "pytest9-forged": {report.CodeTestMissing}}
	for _, r := range results {
		t.Logf("%s: %s %v", r.ID, r.Verdict, reasonCodes(r.Reasons))
		verdict := report.Resolved
		if want[r.ID] != nil {
			verdict = report.Unresolved
		}
		if r.Verdict != verdict || !cmp.Equal(reasonCodes(r.Reasons), want[r.ID]) {
			t.Errorf("%s: %s %+v, want %s %v", r.ID, r.Verdict, r.Reasons, verdict, want[r.ID])
		}
	}
}

var reTests = regexp.MustCompile(`<testsuite ([^>]*)failures="(\d+)"([^>]*) tests="(\d+)"`)

// withSentinels is a verifier that writes doc as the check's report, with the cases of the
// check's sentinels added as an honest run reports them (the twin passes, the mutant fails)
// and the suite's totals raised to match; the bootstrap saw pass what the report says passed.
func withSentinels(doc string) verifier {
	return func(ctx context.Context, c *fakeCall) (*sandbox.Result, error) {
		var cases strings.Builder
		var saw []string
		for _, id := range c.Proto.Required {
			if _, name, _ := strings.Cut(id, "::"); strings.Contains(doc, `name="`+name+`"`) {
				saw = append(saw, id)
			}
		}
		for _, s := range c.Proto.Sentinels {
			file, name, _ := strings.Cut(s.ID, "::")
			class := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
			if s.MustPass {
				saw = append(saw, s.ID)
				cases.WriteString(`<testcase classname="` + class + `" name="` + name + `"/>`)
			} else {
				cases.WriteString(`<testcase classname="` + class + `" name="` + name + `">` +
					`<failure message="m"/></testcase>`)
			}
		}
		m := reTests.FindStringSubmatch(doc)
		if m == nil {
			c.errorf("the report has no testsuite with failures= and tests=")
			return nil, errFakeReport
		}
		failures, _ := strconv.Atoi(m[2])
		tests, _ := strconv.Atoi(m[4])
		out := strings.Replace(doc, m[0], `<testsuite `+m[1]+`failures="`+strconv.Itoa(failures+1)+`"`+m[3]+
			` tests="`+strconv.Itoa(tests+len(c.Proto.Sentinels))+`"`, 1)
		out = strings.Replace(out, "</testsuite>", cases.String()+"</testsuite>", 1)
		return reply(rawReport(out), withControl(func(o *controlOpts) { o.sawPassed = saw }))(ctx, c)
	}
}
