// Command testcheck reads the event stream of `go test -json` on stdin and fails CI on what a
// green exit status can hide: a skipped test, a failed one, a package that failed without a
// failed test (a build error, a TestMain that exited, a panic, a timeout), a package that
// started and never finished, and an end-to-end package (named with -e2e) that ran no test or
// is missing from the stream. It prints what `go test -v` would, without the logs of tests that
// passed: each test's "--- PASS" line, the output of what failed or skipped, the go tool's line
// for each package and, under it, the package's counts of passed, failed and skipped tests;
// then the totals.
// It never runs a test itself: .ci/run pipes the README's test command into it.
//
//	go test -race -count=1 -timeout 30m -json ./... | go run ./internal/ci/testcheck -e2e IMPORTPATH/... -e2e IMPORTPATH
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// patterns is a repeatable flag of import paths; one that ends in "/..." names the path and
// every package below it.
type patterns []string

func (p *patterns) String() string { return strings.Join(*p, ",") }

func (p *patterns) Set(v string) error {
	if v == "" || strings.HasPrefix(v, ".") {
		return fmt.Errorf("%q is not a full import path: give one such as github.com/OWNER/REPO/PKG, "+
			"or PATH/... for every package below PATH", v)
	}
	*p = append(*p, v)
	return nil
}

// match reports whether the package path falls under pattern.
func match(pattern, path string) bool {
	if root, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == root || strings.HasPrefix(path, root+"/")
	}
	return path == pattern
}

// run checks the stream on stdin and returns the exit code: 0 when every test that ran passed
// and nothing was skipped or left out, 1 when something was, 2 on bad flags.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var e2e patterns
	fs.Var(
		&e2e,
		"e2e",
		"an end-to-end package (or PATH/... for every package below it) that must run tests; repeatable",
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "testcheck: unexpected argument %q: the stream is read from stdin\n", fs.Arg(0))
		return 2
	}
	s, err := read(stdin, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "testcheck: FAIL: reading the go test -json stream: %v\n", err)
		return 1
	}
	problems := s.check(e2e)
	fmt.Fprintln(stdout, s.totals())
	for _, p := range problems {
		fmt.Fprintf(stderr, "testcheck: FAIL: %s\n", p)
	}
	if len(problems) > 0 {
		return 1
	}
	return 0
}
