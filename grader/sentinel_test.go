package grader

import (
	"strings"
	"testing"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/junit"
)

func testSentinels() *sentinels {
	return &sentinels{file: "tests/test_merge_value_order.py", passName: "test_scale_empty_parse", failName: "test_round_limit_cache", value: 7}
}

func reportWith(cases map[string]junit.Status) *junit.Report {
	rep := &junit.Report{}
	for id, st := range cases {
		rep.Cases = append(rep.Cases, junit.Case{ID: id, Status: st})
	}
	return rep
}

// TestSentinelVerify: every way a report can misstate the sentinels is caught, and an honest
// report is not.
func TestSentinelVerify(t *testing.T) {
	s := testSentinels()
	pass, fail := s.ids()[0], s.ids()[1]
	req := "tests/test_a.py::test_a"
	tests := []struct {
		name   string
		cases  map[string]junit.Status
		exit   int
		forged bool
	}{
		{"honest, required passes", map[string]junit.Status{req: junit.Passed, pass: junit.Passed, fail: junit.Failed}, 1, false},
		{"honest, required fails", map[string]junit.Status{req: junit.Failed, pass: junit.Passed, fail: junit.Failed}, 1, false},
		{"failing sentinel flipped", map[string]junit.Status{req: junit.Passed, pass: junit.Passed, fail: junit.Passed}, 0, true},
		{"passing sentinel flipped", map[string]junit.Status{req: junit.Passed, pass: junit.Failed, fail: junit.Failed}, 1, true},
		{"failing sentinel dropped", map[string]junit.Status{req: junit.Passed, pass: junit.Passed}, 0, true},
		{"both dropped", map[string]junit.Status{req: junit.Passed}, 0, true},
		{"failing sentinel skipped", map[string]junit.Status{req: junit.Passed, pass: junit.Passed, fail: junit.Skipped}, 0, true},
		{"exit forced to 0", map[string]junit.Status{req: junit.Passed, pass: junit.Passed, fail: junit.Failed}, 0, true},
		{"collection error is left to Reconcile", map[string]junit.Status{}, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.verify(reportWith(tt.cases), tt.exit)
			if forged := len(got) > 0; forged != tt.forged {
				t.Fatalf("forged = %v (%v), want %v", forged, got, tt.forged)
			}
			if tt.forged && got[0].Code != report.CodeReportForged {
				t.Errorf("code = %q", got[0].Code)
			}
		})
	}
}

func TestSentinelRedact(t *testing.T) {
	s := testSentinels()
	log := `....F                                                                    [100%]
=================================== FAILURES ===================================
____________________ test_round_limit_cache ____________________
tests/test_merge_value_order.py:10: in test_round_limit_cache
    assert _expected() == 8
E   assert 7 == 8
____________________ test_real_failure ____________________
tests/test_a.py:3: in test_real_failure
    assert 1 == 2
=========================== short test summary info ============================
FAILED tests/test_merge_value_order.py::test_round_limit_cache - assert ...
FAILED tests/test_a.py::test_real_failure - assert 1 == 2
`
	got := string(s.redact([]byte(log)))
	for _, leak := range []string{"test_round_limit_cache", "test_merge_value_order", "_expected()", "test_scale_empty_parse"} {
		if strings.Contains(got, leak) {
			t.Errorf("redacted log still contains %q:\n%s", leak, got)
		}
	}
	for _, keep := range []string{"test_real_failure", "assert 1 == 2", "FAILED tests/test_a.py::test_real_failure"} {
		if !strings.Contains(got, keep) {
			t.Errorf("redacted log lost %q:\n%s", keep, got)
		}
	}
}

func TestSentinelNamesAreFreshAndDistinct(t *testing.T) {
	tree := t.TempDir()
	seen := map[string]bool{}
	for range 20 {
		s, err := newSentinels(tree, []string{"tests/test_x.py::test_y"})
		if err != nil {
			t.Fatal(err)
		}
		if s.passName == s.failName || !strings.HasPrefix(s.file, "tests/test_") {
			t.Fatalf("bad sentinels %+v", s)
		}
		seen[s.file+s.passName+s.failName] = true
	}
	if len(seen) < 15 {
		t.Errorf("only %d distinct sentinel sets in 20 draws", len(seen))
	}
}
