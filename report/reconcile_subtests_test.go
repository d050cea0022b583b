package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report/junit"
)

// TestReconcileSubtests decides checks on reports with subtests, real, written to pytest 9's
// form, and forged: pytest's count of passing subtests is accepted, and no use of it hides a
// failure.
func TestReconcileSubtests(t *testing.T) {
	const (
		plain   = "tests/test_sub.py::test_plain"
		allPass = "tests/test_sub.py::test_all_pass"
		oneFail = "tests/test_sub.py::test_one_fails"
		skipOne = "tests/test_sub.py::test_skips_one"
		subFail = "tests/test_sub.py::TestUnit::test_sub_fail"
	)
	one := func(id string, st TestStatus) map[string]TestStatus { return map[string]TestStatus{id: st} }
	tests := []struct {
		name      string
		file, doc string
		runner    junit.Runner
		required  []string
		exit      int
		want      map[string]TestStatus
		codes     []Code
		unwritten int
	}{
		{name: "pytest 9, all passing: resolved", file: "pytest9-subtests-pass.xml",
			required: []string{plain, allPass}, want: map[string]TestStatus{plain: TestPassed, allPass: TestPassed},
			unwritten: 3},
		{name: "pytest 9: a passing test beside a failing subtest elsewhere", file: "pytest9-subtests.xml",
			exit: 1, required: []string{allPass}, want: one(allPass, TestPassed), unwritten: 7},
		{name: "pytest 9: a failed subtest fails its test", file: "pytest9-subtests.xml", exit: 1,
			required: []string{oneFail}, want: one(oneFail, TestFailed), codes: []Code{CodeTestFailed},
			unwritten: 7},
		{name: "pytest 9: a skipped subtest skips its test", file: "pytest9-subtests.xml", exit: 1,
			required: []string{skipOne}, want: one(skipOne, TestSkipped), codes: []Code{CodeTestSkipped},
			unwritten: 7},
		{name: "pytest-subtests 0.9 (real): the test passed, its subtest failed: failed",
			file: "pytest-subtests-0.9.xml", exit: 1, required: []string{oneFail, subFail},
			want:  map[string]TestStatus{oneFail: TestFailed, subFail: TestFailed},
			codes: []Code{CodeTestFailed, CodeTestFailed}, unwritten: 9},
		{name: "forged: exit 0 over a failed subtest", file: "pytest9-subtests.xml", exit: 0,
			required: []string{allPass}, want: one(allPass, TestPassed), codes: []Code{CodeExitCodeMismatch},
			unwritten: 7},
		{
			name:     "forged: the failing required case deleted, failures lowered, tests kept",
			required: []string{plain, oneFail},
			doc: `<testsuites><testsuite tests="3" failures="0" errors="0" skipped="0">` +
				`<testcase classname="tests.test_sub" name="test_plain"/></testsuite></testsuites>`,
			want:  map[string]TestStatus{plain: TestPassed, oneFail: TestMissing},
			codes: []Code{CodeTestMissing}, unwritten: 2,
		},
		{
			name:     "forged: a failing required case replaced by a pass, failures kept",
			required: []string{oneFail}, exit: 1,
			doc: `<testsuite tests="4" failures="2" errors="0" skipped="0">` +
				`<testcase classname="tests.test_sub" name="test_one_fails"/></testsuite>`,
			want:  one(oneFail, TestPassed),
			codes: []Code{CodeTotalsMismatch, CodeTotalsMismatch, CodeExitCodeMismatch},
		},
		{
			name: "forged: a second passing case for the required test", required: []string{oneFail}, exit: 1,
			doc: `<testsuite tests="1" failures="1" errors="0" skipped="0">` +
				`<testcase classname="tests.test_sub" name="test_one_fails"><failure message="odd"/></testcase>` +
				`<testcase classname="tests.test_sub" name="test_one_fails"/></testsuite>`,
			want: one(oneFail, TestDuplicate), codes: []Code{CodeTestDuplicate, CodeTotalsMismatch},
		},
		{
			name: "forged: a surplus for runner command", runner: junit.RunnerCommand, required: []string{"c::a"},
			doc: `<testsuite tests="3" failures="0" errors="0" skipped="0">` +
				`<testcase classname="c" name="a"/></testsuite>`,
			want: one("c::a", TestPassed), codes: []Code{CodeTotalsMismatch},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.doc)
			if tt.file != "" {
				var err error
				if data, err = os.ReadFile(filepath.Join("junit", "testdata", tt.file)); err != nil {
					t.Fatal(err)
				}
			}
			runner := tt.runner
			if runner == "" {
				runner = junit.RunnerPytest
			}
			rep, err := junit.Parse(data, junit.Options{Runner: runner, Files: []string{"tests/test_sub.py"}})
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
			if got.Passed != (len(tt.codes) == 0) || got.Unwritten != tt.unwritten {
				t.Errorf("Passed = %v, Unwritten = %d (want %d)", got.Passed, got.Unwritten, tt.unwritten)
			}
		})
	}
}

// TestReconcileRefusalReasons names why a report was refused in words that say the real
// reason, not "not well-formed" for a well-formed report.
func TestReconcileRefusalReasons(t *testing.T) {
	tests := []struct{ doc, want string }{
		{`<?xml version="1.0" encoding="windows-1252"?><testsuite/>`,
			"the report's character encoding is not one Tender reads (UTF-8, ISO-8859-1, US-ASCII)"},
		{`<testsuite tests="many"/>`, "a suite's tests, failures, errors or skipped attribute is not a whole number"},
		{`<testsuite><testcase name="a">`, "the report is not well-formed XML"},
	}
	for _, tt := range tests {
		_, err := junit.Parse([]byte(tt.doc), junit.Options{})
		got := Reconcile(nil, err, []string{"c::a"}, 0)
		if len(got.Reasons) != 1 || got.Reasons[0].Code != CodeReportUnparsable || got.Reasons[0].Detail != tt.want {
			t.Errorf("%s: reasons %+v, want %q", tt.doc, got.Reasons, tt.want)
		}
	}
	// An empty total and an ISO-8859-1 report are read, not refused.
	for _, doc := range []string{
		`<testsuite tests="1" failures=""><testcase classname="c" name="a"/></testsuite>`,
		`<?xml version="1.0" encoding="ISO-8859-1"?>` +
			`<testsuite tests="1"><testcase classname="c" name="a"/></testsuite>`,
	} {
		rep, err := junit.Parse([]byte(doc), junit.Options{})
		if got := Reconcile(rep, err, []string{"c::a"}, 0); !got.Passed {
			t.Errorf("%s: %+v", doc, got.Reasons)
		}
	}
}

// TestReconcileStatusAttribute: under runner command, a required test that never ran is not
// passed, whatever its report leaves out.
func TestReconcileStatusAttribute(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("junit", "testdata", "status-disabled.xml"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := junit.Parse(data, junit.Options{Runner: junit.RunnerCommand})
	if err != nil {
		t.Fatal(err)
	}
	got := Reconcile(rep, nil, []string{"calc::adds", "calc::disabled_test"}, 1)
	want := map[string]TestStatus{"calc::adds": TestPassed, "calc::disabled_test": TestSkipped}
	if diff := cmp.Diff(want, got.Tests); diff != "" || got.Passed {
		t.Errorf("tests (-want +got):\n%s\npassed %v", diff, got.Passed)
	}
	if diff := cmp.Diff([]Code{CodeTestSkipped}, codes(got.Reasons)); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
}
