package junit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStatusAttributeReports reads reports whose cases carry a status (and result) attribute.
func TestStatusAttributeReports(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []brief
	}{
		{
			name: "status=disabled with no child", file: "status-disabled.xml",
			want: []brief{
				{"calc::adds", Passed}, {"calc::divides", Failed}, {"calc::disabled_test", Skipped},
				{"calc::throws", Errored}, {"calc::disabled_param[0]", Skipped}, {"calc::subtracts", Passed},
			},
		},
		{
			name: "googletest notrun and suppressed", file: "gtest-notrun.xml",
			want: []brief{{"Calc::Adds", Passed}, {"Calc::DISABLED_Divides", Skipped}, {"Calc::Skips", Skipped},
				{"Calc::Multiplies", Passed}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Parse(readTestdata(t, tt.file), Options{Runner: RunnerCommand})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, briefs(rep)); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
			// A disabled test counts in `disabled`, not `skipped`, in these writers' totals.
			if m := rep.Mismatches(); len(m) != 0 {
				t.Errorf("mismatches: %+v", m)
			}
		})
	}
}

// statusCases are testcase attributes and children with the status they must give. They
// also seed FuzzParse.
func statusCases() []struct {
	attrs, child string
	want         Status
} {
	return []struct {
		attrs, child string
		want         Status
	}{
		{``, ``, Passed},
		{`status=""`, ``, Passed},
		{`status="run"`, ``, Passed},
		{`status="passed"`, ``, Passed},
		{`status="Passed"`, ``, Passed},
		{`status="run" result="completed"`, ``, Passed},
		{`status="disabled"`, ``, Skipped},
		{`status="Disabled"`, ``, Skipped},
		{`status=" DISABLED "`, ``, Skipped},
		{`status="ignored"`, ``, Skipped},
		{`status="skipped"`, ``, Skipped},
		{`status="notrun"`, ``, Skipped},
		{`status="NotRun"`, ``, Skipped},
		{`status="not run"`, ``, Skipped},
		{`status="run" result="suppressed"`, ``, Skipped},
		{`status="run" result="skipped"`, ``, Skipped},
		{`status="pending"`, ``, Skipped}, // not a value Tender knows: not run, never passed
		{`status="green"`, ``, Skipped},
		{`status="failed"`, ``, Failed},
		{`status="fail"`, ``, Failed},
		{`status="errored"`, ``, Errored},
		{`status="error"`, ``, Errored},
		// An attribute makes a case worse than its children say, never better.
		{`status="passed"`, `<failure/>`, Failed},
		{`status="run"`, `<error/>`, Errored},
		{`status="disabled"`, `<failure/>`, Failed},
		{`status="passed"`, `<skipped/>`, Skipped},
		{`status="failed"`, `<skipped/>`, Failed},
		{`status="failed"`, `<error/>`, Errored},
		{`result="completed"`, `<skipped type="pytest.xfail"/>`, XFail},
		{`status="failed"`, `<skipped type="pytest.xfail"/>`, Failed},
	}
}

func TestStatusAttribute(t *testing.T) {
	for _, runner := range []Runner{RunnerCommand, RunnerPytest, RunnerGo} {
		for _, tt := range statusCases() {
			t.Run(fmt.Sprintf("%s/%s/%s", runner, tt.attrs, tt.child), func(t *testing.T) {
				doc := `<testsuite><testcase classname="c" name="t" ` + tt.attrs + `>` + tt.child +
					`</testcase></testsuite>`
				rep, err := Parse([]byte(doc), Options{Runner: runner})
				if err != nil {
					t.Fatal(err)
				}
				if got := rep.Cases[0].Status; got != tt.want {
					t.Errorf("status = %s, want %s", got, tt.want)
				}
			})
		}
	}
}

func TestStatusAttributeMessage(t *testing.T) {
	doc := `<testsuite><testcase classname="c" name="t" status="` + strings.Repeat("x", 100) + `"/></testsuite>`
	rep, err := Parse([]byte(doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Cases[0]; c.Status != Skipped || !strings.HasPrefix(c.Message, `status="xxxx`) || len(c.Message) > 60 {
		t.Errorf("case = %+v, want a skip whose message names the attribute, clipped", c)
	}
}

func TestEncodings(t *testing.T) {
	rep, err := Parse(readTestdata(t, "encoding-latin1.xml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []brief{{"grüße::sagt_hallo", Passed}, {"grüße::sagt_tschüß", Failed}}
	if diff := cmp.Diff(want, briefs(rep)); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if got := rep.Cases[1].Message; got != "erwartet «tschüß»" {
		t.Errorf("message = %q", got)
	}
	_, err = Parse(readTestdata(t, "encoding-windows-1252.xml"), Options{})
	if !errors.Is(err, ErrEncoding) || !strings.Contains(err.Error(), `"windows-1252"`) {
		t.Errorf("windows-1252: error = %v, want ErrEncoding naming the encoding", err)
	}
	for _, label := range []string{"UTF-8", "utf-8", "UTF8", "us-ascii", "ASCII", "latin1", "ISO_8859-1"} {
		doc := `<?xml version="1.0" encoding="` + label + `"?><testsuite tests="1"><testcase name="a"/></testsuite>`
		if rep, err := Parse([]byte(doc), Options{}); err != nil || len(rep.Cases) != 1 {
			t.Errorf("encoding %s: %v", label, err)
		}
	}
	if _, err := Parse([]byte("\ufeff<testsuite tests=\"0\"/>"), Options{}); err != nil {
		t.Errorf("UTF-8 byte-order mark: %v", err)
	}
}

func TestEmptyTotals(t *testing.T) {
	rep, err := Parse(readTestdata(t, "tests-empty.xml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Suites[0].Has != 0 {
		t.Errorf("root declares %b; empty totals must read as absent", rep.Suites[0].Has)
	}
	if s := rep.Suites[1]; s.Has != HasTests|HasFailures || s.Declared.Tests != 2 {
		t.Errorf("suite = %+v", s)
	}
	if m := rep.Mismatches(); len(m) != 0 || !rep.DeclaresTests() {
		t.Errorf("mismatches %+v, declares tests %v", m, rep.DeclaresTests())
	}
	only, err := Parse([]byte(`<testsuite tests=" "><testcase name="a"/></testsuite>`), Options{})
	if err != nil || only.DeclaresTests() {
		t.Errorf("tests=\" \": %v, declares tests %v; want it read as absent", err, only.DeclaresTests())
	}
}
