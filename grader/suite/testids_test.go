package suite

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		{"truncated at a space",
			[]string{"tests/test_formatting.py::test_p[a", "tests/test_formatting.py::test_q[validator_failed-Invalid"},
			[]string{"tests/test_formatting.py::test_p[a", "tests/test_formatting.py::test_q[validator_failed-Invalid"}, ""},
		{"full id with a space", []string{"tests/test_formatting.py::test_p[a b]"}, nil, ""},
		{"closing bracket alone", []string{"tests/test_formatting.py::test_p]"}, nil,
			`"tests/test_formatting.py::test_p]" has a closing bracket with no opening one`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ids, _ := json.Marshal(tt.f2p)
			manifest := strings.Replace(
				goodSuite,
				`fail_to_pass: ["tests/test_a.py::test_a"]`,
				"fail_to_pass: "+string(ids),
				1,
			)
			s, err := Load(writeLoadSuite(t, manifest, nil), LoadOptions{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) ||
					!strings.Contains(err.Error(), "pairs[0].fail_to_pass[0]") {
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
