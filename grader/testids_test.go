package grader

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

func TestResolveIDs(t *testing.T) {
	collected := []string{
		"t.py::test_x[a b]", "t.py::test_x[c]",
		"t.py::test_fail[validator_failed-Invalid value]", "t.py::test_fail[validator_failed-Invalidated]",
		"t.py::test_amb[p q]", "t.py::test_amb[p r]", "t.py::test_amb[pr]",
		"t.py::test_v[42]", "t.py::test_w[1-2]", "t.py::test_w[1-3]",
	}
	const ambErr = `test ID "t.py::test_amb[p" looks truncated and names 3 collected tests ("t.py::test_amb[p q]", ` +
		`"t.py::test_amb[p r]", "t.py::test_amb[pr]"); write the full ID, or require them all with ambiguous_ids: all`
	const noneErr = `test ID "t.py::test_gone[a" looks truncated and names no test collected on the base ` +
		`commit with the test patch; write the full ID`
	for _, tt := range []struct {
		name    string
		suspect []string
		policy  string
		want    resolution
		err     string
	}{
		{name: "one by prefix", suspect: []string{"t.py::test_x[a"},
			want: resolution{one: map[string]string{"t.py::test_x[a": "t.py::test_x[a b]"}}},
		{name: "the one cut at a space wins", suspect: []string{"t.py::test_fail[validator_failed-Invalid"},
			want: resolution{one: map[string]string{
				"t.py::test_fail[validator_failed-Invalid": "t.py::test_fail[validator_failed-Invalid value]"}}},
		{name: "prefix without a space", suspect: []string{"t.py::test_v[42"},
			want: resolution{one: map[string]string{"t.py::test_v[42": "t.py::test_v[42]"}}},
		{name: "ambiguous", suspect: []string{"t.py::test_amb[p"}, err: ambErr},
		{name: "ambiguous, the policy spelled out", suspect: []string{"t.py::test_amb[p"}, policy: suite.AmbiguousError,
			err: ambErr},
		{name: "ambiguous under all: the tests cut at a space stand in", suspect: []string{"t.py::test_amb[p"},
			policy: suite.AmbiguousAll,
			want: resolution{all: map[string][]string{
				"t.py::test_amb[p": {"t.py::test_amb[p q]", "t.py::test_amb[p r]"}}}},
		{name: "ambiguous under all, none cut at a space: every test it names", suspect: []string{"t.py::test_w[1-"},
			policy: suite.AmbiguousAll,
			want: resolution{all: map[string][]string{
				"t.py::test_w[1-": {"t.py::test_w[1-2]", "t.py::test_w[1-3]"}}}},
		{name: "one under all is still one", suspect: []string{"t.py::test_x[a"}, policy: suite.AmbiguousAll,
			want: resolution{one: map[string]string{"t.py::test_x[a": "t.py::test_x[a b]"}}},
		{name: "none", suspect: []string{"t.py::test_gone[a"},
			err: noneErr},
		{name: "none, under all too", suspect: []string{"t.py::test_gone[a"}, policy: suite.AmbiguousAll,
			err: noneErr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveIDs(tt.suspect, collected, tt.policy)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(resolution{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Every ID that resolves is kept when another does not; the error names the first that did not.
	got, err := resolveIDs([]string{"t.py::test_amb[p", "t.py::test_x[a", "t.py::test_gone["}, collected, "")
	if err == nil || !strings.Contains(err.Error(), `"t.py::test_amb[p"`) ||
		!cmp.Equal(got.one, map[string]string{"t.py::test_x[a": "t.py::test_x[a b]"}) {
		t.Errorf("partial resolution: %v, %v", got, err)
	}
}

// TestApplyResolved: resolved IDs are replaced in place, stand-ins put where their ID stood,
// and a stand-in the list already holds is not required twice.
func TestApplyResolved(t *testing.T) {
	res := resolution{one: map[string]string{"t[x": "t[x y]"}, all: map[string][]string{"u[a": {"u[a b]", "u[a c]"}}}
	for _, tt := range []struct{ in, want []string }{
		{[]string{"a", "t[x", "b"}, []string{"a", "t[x y]", "b"}},
		{[]string{"a", "u[a", "b"}, []string{"a", "u[a b]", "u[a c]", "b"}},
		{[]string{"u[a c]", "u[a", "t[x"}, []string{"u[a c]", "u[a b]", "t[x y]"}},
		{nil, nil},
	} {
		if got := applyResolved(tt.in, res); !cmp.Equal(got, tt.want) {
			t.Errorf("applyResolved(%q) = %q, want %q", tt.in, got, tt.want)
		}
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
	rs := []report.Reason{
		{Code: report.CodeTestFailed, Detail: "x"},
		{Code: report.CodeTestMissing},
		{Code: report.CodeTimeout},
	}
	if got := reasonList(rs, 2); got != "test_failed: x; test_missing; and 1 more" {
		t.Errorf("reasonList: %s", got)
	}
}
