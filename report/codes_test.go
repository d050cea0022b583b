package report

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var codeCell = regexp.MustCompile("`([a-z_]+)`")

// readmeCodes reads the README's table of reason codes: code -> its "from" cell.
func readmeCodes(t *testing.T) map[Code]string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "| code | from | meaning |")
	if !ok {
		t.Fatal("README.md has no table headed | code | from | meaning |")
	}
	got := map[Code]string{}
	for _, line := range strings.Split(rest, "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Fatalf("README reason-code row %q has too few cells", line)
		}
		for _, m := range codeCell.FindAllStringSubmatch(cells[1], -1) {
			if _, dup := got[Code(m[1])]; dup {
				t.Errorf("README lists %s twice", m[1])
			}
			got[Code(m[1])] = strings.TrimSpace(cells[2])
		}
	}
	return got
}

// TestReasonCodesMatchTheREADME: every code in the registry is documented in the README's
// table with the same origin, and the table documents no code the registry lacks.
func TestReasonCodesMatchTheREADME(t *testing.T) {
	want := map[Code]string{}
	for _, ci := range Codes() {
		if _, dup := want[ci.Code]; dup {
			t.Errorf("the registry lists %s twice", ci.Code)
		}
		want[ci.Code] = ci.Origin
	}
	if diff := cmp.Diff(want, readmeCodes(t)); diff != "" {
		t.Errorf("README's reason-code table disagrees with the registry (-registry +README):\n%s", diff)
	}
}

func TestLookup(t *testing.T) {
	if ci, ok := Lookup(CodeProtected); !ok || ci.Locus != PatchLine || ci.Origin != "pre-scan" {
		t.Errorf("Lookup(protected_path) = %+v, %v", ci, ok)
	}
	if _, ok := Lookup("no_such_code"); ok {
		t.Error("Lookup found a code that is not registered")
	}
	got := DistinctCodes([]Reason{{Code: CodeTestFailed}, {Code: CodeTimeout}, {Code: CodeTestFailed}})
	if diff := cmp.Diff([]string{"test_failed", "timeout"}, got); diff != "" {
		t.Errorf("DistinctCodes (-want +got):\n%s", diff)
	}
}
