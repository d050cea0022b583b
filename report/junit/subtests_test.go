package junit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSubtestReports reads reports in which tests have subtests: pytest counts each subtest
// in `tests` and writes no <testcase> for it.
func TestSubtestReports(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		want      []brief
		unwritten int
	}{
		{
			// Real: pytest 7.2.1 with pytest-subtests 0.9.0 (testdata/regenerate.sh). The plugin
			// lets a test pass when its subtest fails; the <failure> still fails the case.
			// tests=15: 6 cases, 3 result elements among them, 9 passes without an element.
			name: "pytest-subtests 0.9 (real)", file: "pytest-subtests-0.9.xml", unwritten: 9,
			want: []brief{
				{"tests/test_sub.py::test_plain", Passed},
				{"tests/test_sub.py::test_all_pass", Passed},
				{"tests/test_sub.py::test_one_fails", Failed},
				{"tests/test_sub.py::test_skips_one", Skipped},
				{"tests/test_sub.py::TestUnit::test_sub_fail", Failed},
				{"tests/test_sub.py::TestUnit::test_sub_pass", Passed},
			},
		},
		{
			// pytest 9: a failed subtest is a <failure>, and the test fails with a second one,
			// "contains 1 failed subtest". tests=12: 5 elements counted, 7 passes unwritten.
			name: "pytest 9 subtests", file: "pytest9-subtests.xml", unwritten: 7,
			want: []brief{
				{"tests/test_sub.py::test_plain", Passed},
				{"tests/test_sub.py::test_all_pass", Passed},
				{"tests/test_sub.py::test_one_fails", Failed},
				{"tests/test_sub.py::test_skips_one", Skipped},
			},
		},
		{
			name: "pytest 9 subtests, all passing", file: "pytest9-subtests-pass.xml", unwritten: 3,
			want: []brief{{"tests/test_sub.py::test_plain", Passed}, {"tests/test_sub.py::test_all_pass", Passed}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Runner: RunnerPytest, Files: []string{"tests/test_sub.py"}}
			rep, err := Parse(readTestdata(t, tt.file), opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, briefs(rep)); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
			if m := rep.Mismatches(); len(m) != 0 {
				t.Errorf("mismatches: %+v", m)
			}
			if got := rep.Unwritten(); got != tt.unwritten {
				t.Errorf("Unwritten() = %d, want %d", got, tt.unwritten)
			}
		})
	}
}

func failures(n int) string {
	return strings.Repeat(`<failure message="AssertionError"/>`, n)
}

// totals is a <testsuite> declaring all four totals, around body.
func totals(tests, failed, errored, skipped int, body string) string {
	return fmt.Sprintf(`<testsuite tests="%d" failures="%d" errors="%d" skipped="%d">%s</testsuite>`,
		tests, failed, errored, skipped, body)
}

// xcase is a case of tests/test_x.py with the given children.
func xcase(name, children string) string {
	return `<testcase classname="tests.test_x" name="` + name + `">` + children + `</testcase>`
}

// subtestTotalsCases are reports that try the subtest rule, forged ones among them: a surplus
// in `tests` is accepted only as passes, and only for pytest with every other total declared
// and adding up. They also seed FuzzParse.
func subtestTotalsCases() []struct {
	name       string
	doc        string
	runner     Runner
	want       []brief
	unwritten  int
	mismatches []Mismatch
} {
	pass := xcase("test_a", "")
	return []struct {
		name       string
		doc        string
		runner     Runner
		want       []brief
		unwritten  int
		mismatches []Mismatch
	}{
		{
			name:   "each failed subtest is counted, and fails its test",
			doc:    totals(5, 4, 0, 0, xcase("test_s", failures(3)+`<failure message="contains 3 failed subtests"/>`)),
			runner: RunnerPytest, want: []brief{{"tests/test_x.py::test_s", Failed}}, unwritten: 1,
		},
		{
			name:   "failures past the results kept per case still count",
			doc:    totals(40, 40, 0, 0, xcase("test_s", failures(40))),
			runner: RunnerPytest, want: []brief{{"tests/test_x.py::test_s", Failed}},
		},
		{
			name:   "a skipped subtest: the test did not all run",
			doc:    totals(3, 0, 0, 1, xcase("test_s", `<skipped type="pytest.skip" message="later"/>`)),
			runner: RunnerPytest, want: []brief{{"tests/test_x.py::test_s", Skipped}}, unwritten: 2,
		},
		{
			name:   "forged: a 'contains 0 failed subtests' failure is a failure",
			doc:    totals(1, 1, 0, 0, xcase("test_s", `<failure message="contains 0 failed subtests"/>`)),
			runner: RunnerPytest, want: []brief{{"tests/test_x.py::test_s", Failed}},
		},
		{
			// Accepted as passes; the deleted test is then missing, which fails any check that
			// requires it (report.TestReconcileSubtests).
			name:   "forged: a failing case deleted and failures lowered, tests kept",
			doc:    totals(3, 0, 0, 0, pass),
			runner: RunnerPytest, want: []brief{{"tests/test_x.py::test_a", Passed}}, unwritten: 2,
		},
		{
			name:   "forged: a failing case deleted, failures kept",
			doc:    totals(3, 1, 0, 0, pass),
			runner: RunnerPytest, want: []brief{{"tests/test_x.py::test_a", Passed}},
			mismatches: []Mismatch{{Suite: 0, Field: "tests", Declared: 3, Counted: 1},
				{Suite: 0, Field: "failures", Declared: 1, Counted: 0}},
		},
		{
			name:   "forged: an erroring case deleted, errors kept",
			doc:    totals(2, 0, 1, 0, pass),
			runner: RunnerPytest, want: []brief{{"tests/test_x.py::test_a", Passed}},
			mismatches: []Mismatch{{Suite: 0, Field: "tests", Declared: 2, Counted: 1},
				{Suite: 0, Field: "errors", Declared: 1, Counted: 0}},
		},
		{
			name:   "surplus without skipped declared is not accepted",
			doc:    `<testsuite tests="3" failures="0" errors="0">` + pass + `</testsuite>`,
			runner: RunnerPytest, want: []brief{{"tests/test_x.py::test_a", Passed}},
			mismatches: []Mismatch{{Suite: 0, Field: "tests", Declared: 3, Counted: 1}},
		},
		{
			name:       "forged: a case added to the report makes a deficit, never accepted",
			doc:        totals(1, 0, 0, 0, pass+xcase("test_b", "")),
			runner:     RunnerPytest,
			want:       []brief{{"tests/test_x.py::test_a", Passed}, {"tests/test_x.py::test_b", Passed}},
			mismatches: []Mismatch{{Suite: 0, Field: "tests", Declared: 1, Counted: 2}},
		},
		{
			name:   "a surplus for runner command is a mismatch",
			doc:    totals(3, 0, 0, 0, pass),
			runner: RunnerCommand, want: []brief{{"tests.test_x::test_a", Passed}},
			mismatches: []Mismatch{{Suite: 0, Field: "tests", Declared: 3, Counted: 1}},
		},
		{
			name:   "a surplus for runner go is a mismatch",
			doc:    totals(3, 0, 0, 0, pass),
			runner: RunnerGo, want: []brief{{"tests.test_x.test_a", Passed}},
			mismatches: []Mismatch{{Suite: 0, Field: "tests", Declared: 3, Counted: 1}},
		},
		{
			name:   "surplus inside a root that declares nothing",
			doc:    `<testsuites>` + totals(5, 0, 0, 0, pass) + `</testsuites>`,
			runner: RunnerPytest, want: []brief{{"tests/test_x.py::test_a", Passed}}, unwritten: 4,
		},
		{
			name:      "forged: a case outside any suite is not absorbed by another suite's surplus",
			doc:       `<testsuites>` + totals(3, 0, 0, 0, pass) + xcase("test_b", "") + `</testsuites>`,
			runner:    RunnerPytest,
			want:      []brief{{"tests/test_x.py::test_a", Passed}, {"tests/test_x.py::test_b", Passed}},
			unwritten: 2, mismatches: []Mismatch{{Suite: 0, Field: "tests", Declared: 3, Counted: 2}},
		},
	}
}

func TestSubtestTotals(t *testing.T) {
	for _, tt := range subtestTotalsCases() {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Parse([]byte(tt.doc), Options{Runner: tt.runner, Files: []string{"tests/test_x.py"}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, briefs(rep)); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
			if got := rep.Unwritten(); got != tt.unwritten {
				t.Errorf("Unwritten() = %d, want %d", got, tt.unwritten)
			}
			if diff := cmp.Diff(tt.mismatches, rep.Mismatches()); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSubtestTeardownForms keeps pytest's two teardown forms counted as before the subtest
// rule: both are in the real reports, whose totals add up exactly (TestParseReports).
func TestSubtestTeardownForms(t *testing.T) {
	rep, err := Parse(readTestdata(t, "pytest-xunit2.xml"), Options{Runner: RunnerPytest, Files: pytestFiles(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Unwritten(); got != 0 {
		t.Errorf("Unwritten() = %d for a report without subtests", got)
	}
	if s := rep.Suites[1]; s.Counted != s.Declared {
		t.Errorf("counted %+v, declared %+v", s.Counted, s.Declared)
	}
}
