package grader

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report"
)

func TestShapeOf(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want idShape
	}{
		{"tests/test_x.py::test_y", idWellFormed},
		{"tests/test_x.py::TestC::test_y[a b]", idWellFormed},
		{"tests/test_x.py::test_y[[1, 2]]", idWellFormed},
		{"tests/test_x.py::test_y[a::b]", idWellFormed},
		{"tests/test_fields.py::TestField::test_fail[validator_failed-Invalid", idTruncated},
		{"tests/test_x.py::test_valid[42", idTruncated},
		{"tests/test_x.py::test_y[[1,", idTruncated},
		{"tests/test_x.py::test_y[a]b", idTruncated},
		{"tests/test_x.py::test_y]", idUnbalanced},
		{"tests/test_x.py::test_y]x[", idUnbalanced},
		{"tests/test_x.py::test_y[a]]", idUnbalanced},
		{"pkg.TestGo/case", idWellFormed},
	} {
		if got := shapeOf(tt.id); got != tt.want {
			t.Errorf("shapeOf(%q) = %d, want %d", tt.id, got, tt.want)
		}
	}
}

func TestResolveIDs(t *testing.T) {
	collected := []string{
		"t.py::test_x[a b]", "t.py::test_x[c]",
		"t.py::test_fail[validator_failed-Invalid value]", "t.py::test_fail[validator_failed-Invalidated]",
		"t.py::test_amb[p q]", "t.py::test_amb[p r]",
		"t.py::test_v[42]",
	}
	for _, tt := range []struct {
		name    string
		suspect []string
		want    map[string]string
		err     string
	}{
		{"one by prefix", []string{"t.py::test_x[a"}, map[string]string{"t.py::test_x[a": "t.py::test_x[a b]"}, ""},
		{"the one cut at a space wins", []string{"t.py::test_fail[validator_failed-Invalid"},
			map[string]string{"t.py::test_fail[validator_failed-Invalid": "t.py::test_fail[validator_failed-Invalid value]"}, ""},
		{"prefix without a space", []string{"t.py::test_v[42"}, map[string]string{"t.py::test_v[42": "t.py::test_v[42]"}, ""},
		{"ambiguous", []string{"t.py::test_amb[p"}, nil, `test ID "t.py::test_amb[p" looks truncated and names 2 collected tests ("t.py::test_amb[p q]", "t.py::test_amb[p r]"); write the full ID`},
		{"none", []string{"t.py::test_gone[a"}, nil, `test ID "t.py::test_gone[a" looks truncated and names no test collected on the base commit with the test patch; write the full ID`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveIDs(tt.suspect, collected)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Every ID that resolves is kept when another does not; the error names the first that did not.
	got, err := resolveIDs([]string{"t.py::test_amb[p", "t.py::test_x[a", "t.py::test_gone["}, collected)
	if err == nil || !strings.Contains(err.Error(), `"t.py::test_amb[p"`) || !cmp.Equal(got, map[string]string{"t.py::test_x[a": "t.py::test_x[a b]"}) {
		t.Errorf("partial resolution: %v, %v", got, err)
	}
	if got := applyResolved([]string{"a", "t[x", "b"}, map[string]string{"t[x": "t[x y]"}); !cmp.Equal(got, []string{"a", "t[x y]", "b"}) {
		t.Errorf("applyResolved = %q", got)
	}
}

// TestLoadMarksTruncatedIDs: truncated IDs load (they are resolved when graded) and are
// listed by SuspectIDs; a closing bracket with no opening one is a load error naming the ID.
func TestLoadMarksTruncatedIDs(t *testing.T) {
	for _, tt := range []struct {
		name    string
		f2p     []string
		suspect []string
		err     string
	}{
		{"well formed", []string{"tests/test_formatting.py::test_group_digits_negative"}, nil, ""},
		{"truncated at a space", []string{"tests/test_formatting.py::test_p[a", "tests/test_formatting.py::test_q[validator_failed-Invalid"},
			[]string{"tests/test_formatting.py::test_p[a", "tests/test_formatting.py::test_q[validator_failed-Invalid"}, ""},
		{"full id with a space", []string{"tests/test_formatting.py::test_p[a b]"}, nil, ""},
		{"closing bracket alone", []string{"tests/test_formatting.py::test_p]"}, nil, `"tests/test_formatting.py::test_p]" has a closing bracket with no opening one`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := demoTestPair(t, "p")
			p.failToPass = tt.f2p
			s, err := tryWriteTestSuite(t, p)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "pairs[0].fail_to_pass[0]") {
					t.Fatalf("load error %v, want one naming pairs[0].fail_to_pass[0] and %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.suspect, s.Pairs[0].SuspectIDs()); diff != "" {
				t.Errorf("SuspectIDs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJoinSome: the lists in validation lines keep their first items and count the rest.
func TestJoinSome(t *testing.T) {
	if got := listSome([]string{"a", "b", "c", "d", "e"}, 3); got != `"a", "b", "c", and 2 more` {
		t.Errorf("listSome: %s", got)
	}
	if got := listSome([]string{"a"}, 3); got != `"a"` {
		t.Errorf("listSome of one: %s", got)
	}
	rs := []report.Reason{{Code: report.CodeTestFailed, Detail: "x"}, {Code: report.CodeTestMissing}, {Code: report.CodeTimeout}}
	if got := reasonList(rs, 2); got != "test_failed: x; test_missing; and 1 more" {
		t.Errorf("reasonList: %s", got)
	}
}
