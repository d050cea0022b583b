package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/docker"
)

// TestMain lets the txtar scripts run the real tender binary: the test binary re-executes
// itself as "tender". Before any test runs, it ensures the built-in verifier images once
// (building the missing ones side by side), so that no test pays for a build inside its own
// time; an unreachable engine or a failed build fails the package, never a skip.
func TestMain(m *testing.M) {
	testscript.Main(withImages{m}, map[string]func(){
		"tender": func() {
			os.Exit(Main(context.Background(), "dev", os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

type withImages struct{ m *testing.M }

func (w withImages) Run() int {
	flag.Parse()
	budget := time.Hour
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d > 0 {
			budget = d / 2 // go test kills the binary at -timeout: the tests need the rest
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	d, err := docker.New(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: the internal/cli tests need a running Docker engine: %v\n", err)
		return 1
	}
	_, err = d.EnsureImages(ctx, []string{sandbox.ImagePytest, sandbox.ImageGo}, os.Stderr)
	d.Close(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: verifier images (within %s, half of go test's -timeout): %v\n", budget, err)
		return 1
	}
	return w.m.Run()
}

// TestScripts runs testdata/script/*.txtar end to end: the real binary on real fixture
// suites, with real git and the real Docker engine.
func TestScripts(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", root)
			for _, k := range []string{"DOCKER_HOST", "HOME", "TMPDIR"} {
				if v := os.Getenv(k); v != "" {
					env.Setenv(k, v)
				}
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": cmdExits},
	})
}

// cmdExits runs a command and checks its exact exit code: exits CODE PROG ARGS...
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}
