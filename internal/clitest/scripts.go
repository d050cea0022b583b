package clitest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// Scripts are the parameters for running the txtar scripts in dir: $REPO is the module at
// root, the engine's DOCKER_HOST, HOME and TMPDIR pass through, and `exits CODE PROG ARGS...`
// checks a command's exact exit code. The test binary's TestMain registers the program as
// "tender" with testscript.Main.
func Scripts(t testing.TB, dir, root string) testscript.Params {
	t.Helper()
	abs, err := filepath.Abs(root)
	Must(t, err)
	return testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", abs)
			for _, k := range []string{"DOCKER_HOST", "HOME", "TMPDIR"} {
				if v := os.Getenv(k); v != "" {
					env.Setenv(k, v)
				}
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": cmdExits},
	}
}

// Program is the commands testscript.Main registers: "tender", which runs entry on the test
// binary's own arguments and environment, as the real binary does.
func Program(entry Entry) map[string]func() {
	return map[string]func(){"tender": func() {
		os.Exit(entry(context.Background(), "dev", os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr))
	}}
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
