package grader

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
)

// TestWithSurfacesQuotesEveryArgument: the test and post argvs reach sh as literal words. An
// argument carrying quotes or a command substitution is printed, never run. Only the test
// command writes to stdout (the bootstrap's control channel) and reads stdin; post commands
// write to stderr and read nothing. (Setup commands run before, as the Spec's Setup: the
// backend's script, tested in sandbox/docker and integration/cli.)
func TestWithSurfacesQuotesEveryArgument(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "canary")
	hostile := `it's $(touch ` + canary + `) "and" ` + "`touch " + canary + "`"
	v := suite.Verifier{Post: [][]string{{"printf", "|%s", hostile}, {"cat"}}}
	argv := withSurfaces(v, []string{"sh", "-c", `printf %s "$1"; cat`, "sh", hostile})
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stdin, cmd.Stderr = strings.NewReader("for the test command only"), &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	if want := hostile + "for the test command only"; string(out) != want {
		t.Errorf("stdout %q\nwant %q", out, want)
	}
	if want := "|" + hostile; stderr.String() != want {
		t.Errorf("stderr %q\nwant %q", stderr.String(), want)
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatal("a command substitution in an argument ran")
	}
}

func TestWithSurfacesKeepsTheTestExitCode(t *testing.T) {
	v := suite.Verifier{Post: [][]string{{"sh", "-c", "exit 9"}}}
	argv := withSurfaces(v, []string{"sh", "-c", "exit 4"})
	err := exec.Command(argv[0], argv[1:]...).Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 4 {
		t.Fatalf("exit %v, want the test command's 4", err)
	}
	if got := withSurfaces(suite.Verifier{}, []string{"pytest"}); len(got) != 1 || got[0] != "pytest" {
		t.Errorf("without surfaces the test argv must be unchanged, got %q", got)
	}
}
