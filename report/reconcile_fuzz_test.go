package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tender-grader/tender/report/junit"
)

// FuzzReconcile checks the rule itself on any report: a check passes only with no reasons,
// every required ID gets a status, and a pass means every required ID passed exactly once.
func FuzzReconcile(f *testing.F) {
	f.Add(suite(1, 0, 0, 0, tc("a", "")), "c::a", 0)
	f.Add(suite(2, 1, 0, 0, tc("a", ""), tc("a", "<failure/>")), "c::a\nc::b", 1)
	f.Add(
		`<testsuite><testcase classname="c" name="a"><skipped type="pytest.xfail"/></testcase></testsuite>`,
		"c::a",
		0,
	)
	for _, name := range []string{"surefire.xml", "jest-junit.xml", "nested.xml"} {
		if b, err := os.ReadFile(filepath.Join("junit", "testdata", name)); err == nil {
			f.Add(string(b), "parser::unicode\ncli::help", 1)
		}
	}
	f.Fuzz(func(t *testing.T, doc, required string, exit int) {
		rep, err := junit.Parse([]byte(doc), junit.Options{MaxBytes: 1 << 20})
		ids := strings.Split(required, "\n")
		out := Reconcile(rep, err, ids, exit)
		if out.Passed != (len(out.Reasons) == 0) {
			t.Fatalf("Passed = %v with reasons %+v", out.Passed, out.Reasons)
		}
		for _, id := range ids {
			st, ok := out.Tests[id]
			if !ok {
				t.Fatalf("required %q has no status", id)
			}
			if out.Passed && st != TestPassed {
				t.Fatalf("passed with %q %s", id, st)
			}
		}
		if out.Passed {
			if err != nil || rep == nil {
				t.Fatal("passed without a report")
			}
			for _, id := range ids {
				if n := countID(rep, id); n != 1 {
					t.Fatalf("passed with %q reported %d times", id, n)
				}
			}
		}
	})
}

func countID(rep *junit.Report, id string) int {
	return len(slices.DeleteFunc(slices.Clone(rep.Cases), func(c junit.Case) bool { return c.ID != id }))
}
