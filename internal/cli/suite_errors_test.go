package cli

import (
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/internal/clitest"
)

// The loader's own rules for malformed suites are tested next to it, in grader/suite/load_test.go.
// Here: only how the CLI reports them.

func TestValidateGoodSuite(t *testing.T) {
	out, errOut, code := runTender(t, "validate", repoRoot+"/fixtures/demo")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, "suite demo 1: 6 pair(s)") {
		t.Errorf("stdout = %q", out)
	}
}

// TestMalformedSuiteExitCode: a suite error (grader.ErrBadSuite), whether in a suite file or in
// an operator's --repo flag, exits 2 with one line on stderr.
func TestMalformedSuiteExitCode(t *testing.T) {
	bad := t.TempDir()
	clitest.WriteFiles(t, bad, map[string]string{"tender.yaml": "name: t\ncolour: blue\n"})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"suite file", []string{"validate", bad}, `tender.yaml: line 2: unknown key "colour"`},
		{
			"--repo flag",
			[]string{"validate", repoRoot + "/fixtures/demo", "--repo", "nope=" + t.TempDir()},
			`the suite has no repository "nope"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runTender(t, tt.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, errOut)
			}
			if lines := strings.Count(strings.TrimRight(errOut, "\n"), "\n") + 1; lines != 1 ||
				!strings.Contains(errOut, tt.want) {
				t.Errorf("want one error line containing %q, got %d:\n%s", tt.want, lines, errOut)
			}
		})
	}
}

// TestValidateRunFlags: --concurrency, like --out and --repeat, needs --run and a sensible
// value; each misuse is a usage error (exit 2) that names the flag.
func TestValidateRunFlags(t *testing.T) {
	demo := repoRoot + "/fixtures/demo"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", demo, "--concurrency", "1"}, "--out, --repeat, --concurrency and --engine need --run"},
		{[]string{"validate", demo, "--repeat", "2"}, "need --run"},
		{[]string{"validate", demo, "--run", "--concurrency", "0"}, "--concurrency 0: give at least 1"},
		{[]string{"validate", demo, "--run", "--concurrency", "-3"}, "--concurrency -3: give at least 1"},
	} {
		t.Run(strings.Join(tt.args[2:], " "), func(t *testing.T) {
			_, errOut, code := runTender(t, tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, exitUsage, tt.want)
			}
		})
	}
}

// TestPrintInstancesWords: a result line says "sound" for a good instance, the word its
// progress line used, and "BROKEN" with the first cause for a bad one.
func TestPrintInstancesWords(t *testing.T) {
	var out strings.Builder
	inv := &invocation{Stdout: &out}
	broken := printInstances(
		inv,
		[]grader.InstanceReport{{ID: "good", OK: true}, {ID: "bad", Problems: []string{"it fails"}}},
		nil,
	)
	want := "sound   good\nBROKEN  bad: it fails\n"
	if broken != 1 || out.String() != want {
		t.Errorf("printed %q (%d broken), want %q (1 broken)", out.String(), broken, want)
	}
}
