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
	return pyboot.Command()
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
	argv := []string{"sh", "-c", `out="$1"; shift; exec go test -json -count=1 "$@" > "$out"`, "sh", "{junit}", "-run", run}
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

// withSurfaces runs the suite's setup commands, then the test command, then its post
// commands, all in one process tree with one environment, so every surface sees the same
// TENDER_* variables by construction. Only the test command reads standard input (the
// bootstrap's configuration) and writes standard output (its control channel); setup and
// post commands read nothing and write to stderr. A failing setup command ends the check with its exit
// code; post commands cannot change the test command's exit code. The argvs come from the
// suite and are single-quoted for sh.
func withSurfaces(v suite.Verifier, test []string) []string {
	if len(v.Setup) == 0 && len(v.Post) == 0 {
		return test
	}
	var b strings.Builder
	for i, argv := range v.Setup {
		fmt.Fprintf(&b, "%s </dev/null >&2 || { rc=$?; echo \"tender: setup command %d exited $rc\" >&2; exit $rc; }\n", shellQuote(argv), i+1)
	}
	fmt.Fprintf(&b, "%s\nrc=$?\n", shellQuote(test))
	for i, argv := range v.Post {
		fmt.Fprintf(&b, "%s </dev/null >&2 || echo \"tender: post command %d exited $?\" >&2\n", shellQuote(argv), i+1)
	}
	b.WriteString("exit $rc\n")
	return []string{"sh", "-c", b.String(), "tender-check"}
}

func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
