package grader

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report"
)

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
