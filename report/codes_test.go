package report

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var codeCell = regexp.MustCompile("`([a-z_]+)`")

// documented is what the reason-code table says of one code.
type documented struct {
	Origin  string  // the "from" cell
	Verdict Verdict // the "verdict" cell, without its backticks: a verdict, or note
}

// codesPage is the page that documents every reason code; README.md links to it.
const codesPage = "../docs/reason-codes.md"

// documentedCodes reads the table of reason codes in docs/reason-codes.md: code -> its "from"
// and "verdict" cells. A missing page or table fails the test.
func documentedCodes(t *testing.T) map[Code]documented {
	t.Helper()
	b, err := os.ReadFile(codesPage)
	if err != nil {
		t.Fatalf("the reason codes are documented in %s: %v", codesPage, err)
	}
	const header = "| code | from | verdict | meaning |"
	_, rest, ok := strings.Cut(string(b), header)
	if !ok {
		t.Fatalf("%s has no table headed %s", codesPage, header)
	}
	got := map[Code]documented{}
	for _, line := range strings.Split(rest, "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			t.Fatalf("%s: reason-code row %q has too few cells", codesPage, line)
		}
		doc := documented{strings.TrimSpace(cells[2]), Verdict(strings.Trim(cells[3], " `"))}
		for _, m := range codeCell.FindAllStringSubmatch(cells[1], -1) {
			if _, dup := got[Code(m[1])]; dup {
				t.Errorf("%s lists %s twice", codesPage, m[1])
			}
			got[Code(m[1])] = doc
		}
	}
	if len(got) == 0 {
		t.Fatalf("%s: the reason-code table has no rows", codesPage)
	}
	return got
}

// TestReasonCodesMatchTheDocs: every code in the registry is documented in the table of
// docs/reason-codes.md with the same origin and the same verdict, and the table documents no
// code the registry lacks.
func TestReasonCodesMatchTheDocs(t *testing.T) {
	want := map[Code]documented{}
	for _, ci := range Codes() {
		if _, dup := want[ci.Code]; dup {
			t.Errorf("the registry lists %s twice", ci.Code)
		}
		want[ci.Code] = documented{ci.Origin, ci.Verdict}
	}
	if diff := cmp.Diff(want, documentedCodes(t)); diff != "" {
		t.Errorf("the reason-code table of %s disagrees with the registry (-registry +docs):\n%s", codesPage, diff)
	}
}

// TestEveryCodeLeadsToAVerdictOrIsANote: no code resolves a pair, and none is left without a
// verdict: a reason that ended a pair as resolved, or one resume could not place, would be a
// hole in the one table that says what each code decides.
func TestEveryCodeLeadsToAVerdictOrIsANote(t *testing.T) {
	count := map[Verdict]int{}
	for _, ci := range Codes() {
		switch ci.Verdict {
		case Unresolved, IntegrityViolation, Error, Note:
			count[ci.Verdict]++
		default:
			t.Errorf("code %s leads to %q; want unresolved, integrity_violation, error or note", ci.Code, ci.Verdict)
		}
	}
	if Note.Valid() {
		t.Error("Note is a valid verdict of a pair; it must only mark a code that decides nothing")
	}
	for _, v := range []Verdict{Unresolved, IntegrityViolation, Error, Note} {
		if count[v] == 0 {
			t.Errorf("no code leads to %s", v)
		}
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
