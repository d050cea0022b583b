package grader

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tender-grader/tender/sandbox"
)

// checkProtocol is what a verifier is told about one check: the tests it must report and
// the hidden sentinel tests planted among them, each with the status it must be reported with.
type checkProtocol struct {
	Required  []string   // required test IDs, in the order the grader gave them
	Sentinels []sentinel // hidden tests the grader planted for this check
}

type sentinel struct {
	ID       string
	MustPass bool // false: an honest run reports it failed
}

// readProtocol is the ONE place in the tests that knows how the grader tells a verifier which
// tests to run and which sentinels it planted. The fake backend and every test built on it go
// through it, so when the protocol changes, update this function and nothing else.
//
// Today (grader/runner.go testCommand, grader/sentinel.go): for the pytest runner the test IDs
// are the trailing operands of spec.Command: the required IDs in suite order, then the two
// sentinels, the one that must pass and then the one that must fail, whose file the grader
// wrote into spec.Workspace. Other runners plant no sentinels and are not covered here.
//
// It returns an error, never panics or calls t.Fatal: it runs on the grader's goroutines.
func readProtocol(spec sandbox.Spec) (checkProtocol, error) {
	ops := trailingOperands(spec.Command)
	if len(ops) < 3 {
		return checkProtocol{}, fmt.Errorf("%s: want required IDs and two sentinels at the end of the command, got %q; "+
			"if the grader's protocol changed, update readProtocol", spec.Name, spec.Command)
	}
	n := len(ops) - 2
	p := checkProtocol{Required: ops[:n], Sentinels: []sentinel{{ID: ops[n], MustPass: true}, {ID: ops[n+1], MustPass: false}}}
	required := map[string]bool{}
	for _, id := range p.Required {
		file, _, _ := strings.Cut(id, "::")
		required[file] = true
	}
	for _, s := range p.Sentinels {
		// A sentinel lives in a file of its own that the grader wrote: a required test's file
		// here means the operands are not what this function expects.
		file, _, _ := strings.Cut(s.ID, "::")
		_, err := os.Stat(filepath.Join(spec.Workspace, filepath.FromSlash(file)))
		if err != nil || required[file] {
			return p, fmt.Errorf("%s: %s does not look like a sentinel the grader planted (file in the workspace: %v, "+
				"shared with a required test: %v); if the grader's protocol changed, update readProtocol", spec.Name, s.ID, err == nil, required[file])
		}
	}
	return p, nil
}

// trailingOperands returns the argv elements after the last option and its value.
func trailingOperands(argv []string) []string {
	takesValue := map[string]bool{"-c": true, "-p": true, "--rootdir": true, "--junitxml": true}
	last := -1
	for i, a := range argv {
		if strings.HasPrefix(a, "-") {
			last = i
		}
	}
	start := last + 1
	if last >= 0 && takesValue[argv[last]] {
		start++
	}
	if start > len(argv) {
		return nil
	}
	return argv[start:]
}
