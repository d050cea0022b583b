package report

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report/junit"
)

func mustParse(t *testing.T, doc string) *junit.Report {
	t.Helper()
	rep, err := junit.Parse([]byte(doc), junit.Options{Runner: junit.RunnerCommand})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return rep
}

// suite wraps test cases in a <testsuite> that declares the given totals.
func suite(tests, failures, errors, skipped int, cases ...string) string {
	return fmt.Sprintf(`<testsuite name="s" tests="%d" failures="%d" errors="%d" skipped="%d">%s</testsuite>`,
		tests, failures, errors, skipped, strings.Join(cases, ""))
}

func tc(name, child string) string {
	return fmt.Sprintf(`<testcase classname="c" name="%s">%s</testcase>`, name, child)
}

func codes(rs []Reason) []Code {
	var out []Code
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

// TestReconcile covers every reason code Reconcile can give, and the passing case.
func TestReconcile(t *testing.T) {
	pass := tc("a", "")
	tests := []struct {
		name     string
		doc      string // "" means no report
		parseErr error
		required []string
		exit     int
		want     map[string]TestStatus
		codes    []Code
	}{
		{name: "passes", doc: suite(2, 0, 0, 0, pass, tc("b", "")), required: []string{"c::a", "c::b"},
			want: map[string]TestStatus{"c::a": TestPassed, "c::b": TestPassed}},
		{name: "extra tests allowed", doc: suite(2, 0, 0, 1, pass, tc("x", "<skipped/>")), required: []string{"c::a"},
			want: map[string]TestStatus{"c::a": TestPassed}},
		{
			name:     "extra failing test with nonzero exit",
			doc:      suite(2, 1, 0, 0, pass, tc("x", "<failure/>")),
			required: []string{"c::a"},
			exit:     1,
			want:     map[string]TestStatus{"c::a": TestPassed},
		},
		{name: "test_missing", doc: suite(1, 0, 0, 0, pass), required: []string{"c::a", "c::gone"},
			want: map[string]TestStatus{"c::a": TestPassed, "c::gone": TestMissing}, codes: []Code{CodeTestMissing}},
		{
			name:     "test_duplicate",
			doc:      suite(2, 1, 0, 0, pass, tc("a", "<failure/>")),
			required: []string{"c::a"},
			exit:     1,
			want:     map[string]TestStatus{"c::a": TestDuplicate},
			codes:    []Code{CodeTestDuplicate},
		},
		{name: "duplicate of two passes", doc: suite(2, 0, 0, 0, pass, pass), required: []string{"c::a"},
			want: map[string]TestStatus{"c::a": TestDuplicate}, codes: []Code{CodeTestDuplicate}},
		{
			name:     "test_skipped",
			doc:      suite(1, 0, 0, 1, tc("a", `<skipped message="later"/>`)),
			required: []string{"c::a"},
			want:     map[string]TestStatus{"c::a": TestSkipped},
			codes:    []Code{CodeTestSkipped},
		},
		{
			name:     "test_xfail",
			doc:      suite(1, 0, 0, 1, tc("a", `<skipped type="pytest.xfail" message="bug"/>`)),
			required: []string{"c::a"},
			want:     map[string]TestStatus{"c::a": TestXFail},
			codes:    []Code{CodeTestXFail},
		},
		{
			name:     "test_failed",
			doc:      suite(1, 1, 0, 0, tc("a", `<failure message="boom"/>`)),
			required: []string{"c::a"},
			exit:     1,
			want:     map[string]TestStatus{"c::a": TestFailed},
			codes:    []Code{CodeTestFailed},
		},
		{
			name:     "strict xpass is test_failed",
			doc:      suite(1, 1, 0, 0, tc("a", `<failure message="[XPASS(strict)] fixed"/>`)),
			required: []string{"c::a"},
			exit:     1,
			want:     map[string]TestStatus{"c::a": TestXPass},
			codes:    []Code{CodeTestFailed},
		},
		{
			name:     "test_error",
			doc:      suite(1, 0, 1, 0, tc("a", `<error message="fixture"/>`)),
			required: []string{"c::a"},
			exit:     1,
			want:     map[string]TestStatus{"c::a": TestError},
			codes:    []Code{CodeTestError},
		},
		{name: "report_missing", required: []string{"c::a"},
			want: map[string]TestStatus{"c::a": TestMissing}, codes: []Code{CodeReportMissing}},
		{
			name:     "report_missing from fs.ErrNotExist",
			parseErr: fmt.Errorf("reading junit.xml: %w", fs.ErrNotExist),
			required: []string{"c::a"},
			want:     map[string]TestStatus{"c::a": TestMissing},
			codes:    []Code{CodeReportMissing},
		},
		{name: "report_unparsable", parseErr: fmt.Errorf("parse: %w", junit.ErrMalformed), required: []string{"c::a"},
			want: map[string]TestStatus{"c::a": TestMissing}, codes: []Code{CodeReportUnparsable}},
		{name: "totals_mismatch: more tests declared", doc: suite(2, 0, 0, 0, pass), required: []string{"c::a"},
			want: map[string]TestStatus{"c::a": TestPassed}, codes: []Code{CodeTotalsMismatch}},
		{
			name:     "totals_mismatch: failure hidden from the totals",
			doc:      suite(2, 0, 0, 0, pass, tc("x", "<failure/>")),
			required: []string{"c::a"},
			exit:     1,
			want:     map[string]TestStatus{"c::a": TestPassed},
			codes:    []Code{CodeTotalsMismatch},
		},
		{
			name:     "totals_mismatch: no totals declared",
			doc:      `<testsuite>` + pass + `</testsuite>`,
			required: []string{"c::a"},
			want:     map[string]TestStatus{"c::a": TestPassed},
			codes:    []Code{CodeTotalsMismatch},
		},
		{
			name:     "exit_code_mismatch: nonzero with all passed",
			doc:      suite(1, 0, 0, 0, pass),
			required: []string{"c::a"},
			exit:     1,
			want:     map[string]TestStatus{"c::a": TestPassed},
			codes:    []Code{CodeExitCodeMismatch},
		},
		{
			name:     "exit_code_mismatch: zero with a failure",
			doc:      suite(2, 1, 0, 0, pass, tc("x", "<failure/>")),
			required: []string{"c::a"},
			want:     map[string]TestStatus{"c::a": TestPassed},
			codes:    []Code{CodeExitCodeMismatch},
		},
		{
			name:     "skips do not need a nonzero exit",
			doc:      suite(2, 0, 0, 1, pass, tc("x", "<skipped/>")),
			required: []string{"c::a"},
			exit:     5,
			want:     map[string]TestStatus{"c::a": TestPassed},
			codes:    []Code{CodeExitCodeMismatch},
		},
		{
			name:     "several reasons at once",
			doc:      suite(3, 1, 0, 0, tc("a", "<failure/>")),
			required: []string{"c::a", "c::b"},
			want:     map[string]TestStatus{"c::a": TestFailed, "c::b": TestMissing},
			codes:    []Code{CodeTestFailed, CodeTestMissing, CodeTotalsMismatch, CodeExitCodeMismatch},
		},
		{name: "required list deduplicated", doc: suite(1, 0, 0, 0, pass), required: []string{"c::a", "c::a"},
			want: map[string]TestStatus{"c::a": TestPassed}},
	}
	covered := map[Code]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rep *junit.Report
			if tt.doc != "" {
				rep = mustParse(t, tt.doc)
			}
			got := Reconcile(rep, tt.parseErr, tt.required, tt.exit)
			if diff := cmp.Diff(tt.want, got.Tests); diff != "" {
				t.Errorf("tests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.codes, codes(got.Reasons)); diff != "" {
				t.Errorf("reason codes (-want +got):\n%s\nreasons: %+v", diff, got.Reasons)
			}
			if got.Passed != (len(tt.codes) == 0) {
				t.Errorf("Passed = %v with reasons %+v", got.Passed, got.Reasons)
			}
		})
		for _, c := range tt.codes {
			covered[c] = true
		}
	}
	for _, ci := range Codes() {
		if ci.Origin == "reconcile" && !covered[ci.Code] {
			t.Errorf("no row covers reason code %s", ci.Code)
		}
	}
}

func TestReconcileDetails(t *testing.T) {
	rep, err := junit.Parse([]byte(suite(
		1,
		1,
		0,
		0,
		`<testcase classname="tests.test_x" name="test_y" file="tests/test_x.py" line="4"><failure message="assert 1 == 2"/></testcase>`,
	)),
		junit.Options{Runner: junit.RunnerPytest})
	if err != nil {
		t.Fatal(err)
	}
	got := Reconcile(rep, nil, []string{"tests/test_x.py::test_y"}, 1)
	// The runner's message is never quoted: the candidate writes it.
	want := []Reason{
		{Code: CodeTestFailed, Detail: "tests/test_x.py::test_y: failed", Path: "tests/test_x.py", Line: 5},
	}
	if diff := cmp.Diff(want, got.Reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	parseErr := fmt.Errorf("%w: line 3: element <CANARY-FROM-THE-REPORT> closed by </x>", junit.ErrMalformed)
	bad := Reconcile(nil, parseErr, []string{"a"}, 0)
	if d := bad.Reasons[0].Detail; strings.Contains(d, "CANARY") || bad.Reasons[0].Code != CodeReportUnparsable {
		t.Errorf("an unparsable report's reason quotes it: %+v", bad.Reasons[0])
	}
}

// TestReconcileCapsTotalsReasons: a report of 400,000 suites whose totals disagree gives a
// handful of reasons, not one per suite.
func TestReconcileCapsTotalsReasons(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<testsuites>`)
	for i := range 2000 {
		fmt.Fprintf(&b, `<testsuite name="s%d" tests="9"><testcase classname="c" name="a%d"/></testsuite>`, i, i)
	}
	b.WriteString(`</testsuites>`)
	rep, err := junit.Parse([]byte(b.String()), junit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := Reconcile(rep, nil, []string{"c::a1"}, 0)
	if n := len(got.Reasons); n != maxTotalsReasons+1 ||
		!strings.Contains(got.Reasons[n-1].Detail, "more suites whose totals disagree") {
		t.Errorf("%d reasons, last %+v", n, got.Reasons[n-1])
	}
}

// TestReconcileRealReports reconciles reports written by real runs (testdata of report/junit).
func TestReconcileRealReports(t *testing.T) {
	files, err := os.ReadFile(filepath.Join("junit", "testdata", "pytest-files.txt"))
	if err != nil {
		t.Fatal(err)
	}
	realGo, err := os.ReadFile(filepath.Join("junit", "testdata", "gotest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	goXML, err := junit.FromGoTestJSON(strings.NewReader(string(realGo)))
	if err != nil {
		t.Fatal(err)
	}
	pyOpts := junit.Options{Runner: junit.RunnerPytest, Files: strings.Fields(string(files))}
	tests := []struct {
		name     string
		data     []byte
		file     string
		opts     junit.Options
		required []string
		exit     int
		want     map[string]TestStatus
		codes    []Code
	}{
		{
			name: "pytest xunit2: passing tests, exit 1 from the others", file: "pytest-xunit2.xml", opts: pyOpts, exit: 1,
			required: []string{
				"tests/test_calc.py::TestCalc::test_class_param[1]",
				"tests/pkg.v2/test_dots.py::test_in_dotted_dir",
				"tests/test_calc.py::test_odd_params[c::d]",
			},
			want: map[string]TestStatus{
				"tests/test_calc.py::TestCalc::test_class_param[1]": TestPassed,
				"tests/pkg.v2/test_dots.py::test_in_dotted_dir":     TestPassed,
				"tests/test_calc.py::test_odd_params[c::d]":         TestPassed,
			},
		},
		{
			name: "pytest xunit1: every kind of failure", file: "pytest-xunit1.xml", opts: pyOpts, exit: 1,
			required: []string{
				"tests/test_calc.py::test_add_wrong",
				"tests/test_calc.py::test_skipped",
				"tests/test_calc.py::test_xfail",
				"tests/test_calc.py::test_xpass_strict",
				"tests/test_calc.py::test_fixture_error",
				"tests/test_teardown.py::test_fails_then_teardown_error",
				"tests/test_broken_import.py::test_never_collected",
			},
			want: map[string]TestStatus{
				"tests/test_calc.py::test_add_wrong":                     TestFailed,
				"tests/test_calc.py::test_skipped":                       TestSkipped,
				"tests/test_calc.py::test_xfail":                         TestXFail,
				"tests/test_calc.py::test_xpass_strict":                  TestXPass,
				"tests/test_calc.py::test_fixture_error":                 TestError,
				"tests/test_teardown.py::test_fails_then_teardown_error": TestDuplicate,
				"tests/test_broken_import.py::test_never_collected":      TestMissing,
			},
			codes: []Code{
				CodeTestMissing,
				CodeTestFailed,
				CodeTestError,
				CodeTestSkipped,
				CodeTestXFail,
				CodeTestFailed,
				CodeTestDuplicate,
			},
		},
		{
			name: "pytest: exit code 0 forged over failures", file: "pytest-xunit2.xml", opts: pyOpts, exit: 0,
			required: []string{"tests/test_calc.py::test_add"},
			want:     map[string]TestStatus{"tests/test_calc.py::test_add": TestPassed},
			codes:    []Code{CodeExitCodeMismatch},
		},
		{
			name: "go test -json converted", data: goXML, opts: junit.Options{Runner: junit.RunnerGo}, exit: 1,
			required: []string{
				"example.com/sample/calc.TestTable/one_plus_one",
				"example.com/sample/calc.TestTable/wrong",
				"example.com/sample/calc.TestNested/outer/skip",
				"example.com/sample/panics.TestAfterPanic",
			},
			want: map[string]TestStatus{
				"example.com/sample/calc.TestTable/one_plus_one": TestPassed,
				"example.com/sample/calc.TestTable/wrong":        TestFailed,
				"example.com/sample/calc.TestNested/outer/skip":  TestSkipped,
				"example.com/sample/panics.TestAfterPanic":       TestMissing,
			},
			codes: []Code{CodeTestSkipped, CodeTestFailed, CodeTestMissing},
		},
		{
			name: "gotestsum with a build failure: its totals do not add up", file: "gotestsum.xml", opts: junit.Options{Runner: junit.RunnerGo}, exit: 1,
			required: []string{"example.com/sample/calc.TestAdd"},
			want:     map[string]TestStatus{"example.com/sample/calc.TestAdd": TestPassed},
			codes:    []Code{CodeTotalsMismatch, CodeTotalsMismatch, CodeTotalsMismatch, CodeTotalsMismatch},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.data
			if tt.file != "" {
				if data, err = os.ReadFile(filepath.Join("junit", "testdata", tt.file)); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := junit.Parse(data, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := Reconcile(rep, nil, tt.required, tt.exit)
			if diff := cmp.Diff(tt.want, got.Tests); diff != "" {
				t.Errorf("tests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.codes, codes(got.Reasons)); diff != "" {
				t.Errorf("codes (-want +got):\n%s\n%+v", diff, got.Reasons)
			}
		})
	}
}
