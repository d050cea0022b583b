package cli

import (
	"strings"
	"testing"

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
		{"--repo flag", []string{"validate", repoRoot + "/fixtures/demo", "--repo", "nope=" + t.TempDir()}, `the suite has no repository "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runTender(t, tt.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, errOut)
			}
			if lines := strings.Count(strings.TrimRight(errOut, "\n"), "\n") + 1; lines != 1 || !strings.Contains(errOut, tt.want) {
				t.Errorf("want one error line containing %q, got %d:\n%s", tt.want, lines, errOut)
			}
		})
	}
}
