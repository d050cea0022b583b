package grader

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/sandbox"
)

// command builds the verifier's argv for the runner. Tokens in braces are expanded by the
// sandbox backend to its own layout; test IDs come from the suite, never from the candidate.
// The pytest runner's IDs are not on the command line at all: Tender's bootstrap reads them
// on its standard input (grader/pyboot).
func command(v suite.Verifier, ids []string) []string {
	return withSurfaces(v, testCommand(v, ids))
}

func testCommand(v suite.Verifier, ids []string) []string {
	switch v.Runner {
	case suite.RunnerGo:
		return goCommand(ids)
	case suite.RunnerCommand:
		return append([]string(nil), v.Command...)
	}
	return pyboot.CommandWith(v.Interpreter())
}

var reGoID = regexp.MustCompile(`^(.+)\.(Test[^/.]*)(/.*)?$`)

// goCommand runs go test -json on the packages of the required IDs, writing the JSON stream
// to the report path; the grader converts it to JUnit on the host. Package paths come from the
// suite's IDs, which the loader keeps from starting with "-".
func goCommand(ids []string) []string {
	pkgs, tests := map[string]bool{}, map[string]bool{}
	for _, id := range ids {
		if g := reGoID.FindStringSubmatch(id); g != nil {
			pkgs[g[1]], tests[regexp.QuoteMeta(g[2])] = true, true
		}
	}
	run := "^(" + strings.Join(slices.Sorted(maps.Keys(tests)), "|") + ")$"
	argv := []string{
		"sh",
		"-c",
		`out="$1"; shift; exec go test -json -count=1 "$@" > "$out"`,
		"sh",
		"{junit}",
		"-run",
		run,
	}
	return append(argv, slices.Sorted(maps.Keys(pkgs))...)
}

// verifierEnv is the verifier's whole environment besides the backend's TENDER_* variables:
// the suite's literal variables and the host variables it names, nothing else.
func verifierEnv(v suite.Verifier, getenv func(string) string) map[string]string {
	env := map[string]string{}
	for k, val := range v.Env {
		env[k] = val
	}
	names := append([]string(nil), v.PassEnv...)
	sort.Strings(names)
	for _, k := range names {
		if getenv != nil {
			if val := getenv(k); val != "" {
				env[k] = val
			}
		}
	}
	switch v.Runner {
	case suite.RunnerPytest:
		env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
		env["PYTHONDONTWRITEBYTECODE"] = "1"
	}
	// The go runner's settings (no proxy, local toolchain, vendored modules, caches on the
	// tmpfs) are the Go image's own environment.
	return env
}

// withSurfaces runs the test command, then the suite's post commands, in one process tree
// with one environment (the setup commands run before, as the Spec's Setup, with the same
// environment), so every surface sees the same TENDER_* variables by construction. Only the test
// command reads standard input (the bootstrap's configuration) and writes standard output (its
// control channel); post commands read nothing and write to stderr, and cannot change the test
// command's exit code. The argvs come from the suite and are single-quoted for sh.
func withSurfaces(v suite.Verifier, test []string) []string {
	if len(v.Post) == 0 {
		return test
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nrc=$?\n", sandbox.ShellQuote(test))
	for i, argv := range v.Post {
		fmt.Fprintf(&b, "%s </dev/null >&2 || echo \"tender: post command %d exited $?\" >&2\n", sandbox.ShellQuote(argv), i+1)
	}
	b.WriteString("exit $rc\n")
	return []string{"sh", "-c", b.String(), "tender-check"}
}
