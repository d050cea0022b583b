// Package cli is the tender program: its commands, their flags, the GitHub Action adapter,
// and the one table of exit codes. main only wires signals and calls Main. cli never decides
// a verdict (grader does) and never writes a bundle file by name (report owns the layout).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"golang.org/x/term"
)

// Exit codes. This table is the only place that assigns them; the README documents it.
const (
	exitOK          = 0   // graded (whatever the verdicts)
	exitFailure     = 1   // grading or infrastructure error
	exitUsage       = 2   // bad input or usage
	exitMismatch    = 3   // an `expect` verdict was not met
	exitInterrupted = 130 // SIGINT, SIGTERM, SIGHUP, SIGQUIT (stopSignals)
)

// The exit codes by exported name, for the end-to-end tests in integration/cli, which drive
// the program through Main. The table above assigns them.
const (
	ExitOK          = exitOK
	ExitFailure     = exitFailure
	ExitUsage       = exitUsage
	ExitMismatch    = exitMismatch
	ExitInterrupted = exitInterrupted
)

// exitError carries an exit code with its cause.
type exitError struct {
	Code int
	Err  error
}

func (e *exitError) Error() string { return e.Err.Error() }
func (e *exitError) Unwrap() error { return e.Err }

// usageError is a bad-input error: exit 2.
func usageError(format string, a ...any) error {
	return &exitError{Code: exitUsage, Err: fmt.Errorf(format, a...)}
}

// withCode wraps err so that it exits with code; nil stays nil.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{Code: code, Err: err}
}

// errHelp is returned after --help printed its text: exit 0, no error line.
var errHelp = errors.New("help shown")

// exitCode maps the outcome of run to the process exit code.
func exitCode(ctx context.Context, err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return exitFailure
}

// invocation is what a command may touch of the outside world. Commands never read os.Getenv
// or os.Stdout directly, so tests drive them with their own environment and buffers.
type invocation struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	TTY    bool // stdin and stdout are terminals
	// Version names the program in results and bundles ("tender v1.2.3"); main passes it in.
	Version string
	// Environ is the whole environment, for checks over every INPUT_* of the Action.
	Environ []string
}

type command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, inv *invocation, args []string) error
}

// commands is the CLI's command table.
func commands() []command {
	return []command{
		{"grade", "grade every pair of a suite and write the evidence bundle", cmdGrade},
		{"validate", "load and check a suite; with --run, check its instances in verifiers", cmdValidate},
		{"import", "import SWE-bench instances and predictions as a suite", cmdImport},
		{"env", "propose an environment spec from a repository's declared requirements (env infer)", cmdEnv},
		{"image", "build the offline verifier image", cmdImage},
		{"gc", "remove verifier containers and temporary directories left by dead runs", cmdGC},
		{"keygen", "write an ed25519 key pair for signing bundles", cmdKeygen},
		{"verify", "recompute every digest of a bundle and check its signature", cmdVerify},
		{"publish", "post a verified bundle to GitHub as a check run, after approval", cmdPublish},
		{"merge", "merge the bundles of several shards into one", cmdMerge},
	}
}

// Main runs one tender command and returns its exit code. A failing command's error is
// printed as one line on stderr. version is the build's version ("dev" when unstamped).
func Main(ctx context.Context, version string, args, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := run(ctx, version, args, environ, stdin, stdout, stderr)
	code := exitCode(ctx, err)
	switch {
	case err == nil || code == exitOK:
	case code == exitInterrupted && err == context.Canceled:
		fmt.Fprintln(stderr, "tender: interrupted") // what was kept, and how to go on, is said already
	default:
		fmt.Fprintln(stderr, "tender:", err)
	}
	return code
}

// run is the whole program behind Main: it parses args and dispatches a command.
func run(ctx context.Context, version string, args, environ []string, stdin io.Reader, stdout, stderr io.Writer) error {
	inv := &invocation{
		Stdin:   stdin,
		Stdout:  stdout,
		Stderr:  stderr,
		Getenv:  envLookup(environ),
		TTY:     isTerminal(stdin, stdout),
		Version: toolName(version),
		Environ: environ,
	}
	if len(args) == 0 && inv.Getenv("GITHUB_ACTIONS") == "true" {
		return runAction(ctx, inv)
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return usageError("no command given")
		}
		return nil
	}
	if args[0] == "--version" || args[0] == "version" {
		fmt.Fprintln(stdout, inv.Version)
		return nil
	}
	for _, c := range commands() {
		if c.Name == args[0] {
			return c.Run(ctx, inv, args[1:])
		}
	}
	return usageError("unknown command %q; run `tender --help` for the list", args[0])
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "tender grades code patches in hardened verifiers and signs what it concludes.")
	fmt.Fprintln(w, "\nUsage: tender COMMAND [flags]   (tender COMMAND --help for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintln(w, "\nExit codes: 0 graded, 1 grading or infrastructure error, 2 bad input or usage,")
	fmt.Fprintln(w, "3 an expect verdict not met, 130 interrupted.")
}

// newFlags makes a flag set whose errors and help go to the invocation's stderr.
func newFlags(inv *invocation, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(inv.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(inv.Stderr, "Usage: tender %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, mapping -h to errHelp and every other problem to a usage error.
// Flags may follow positional arguments (tender grade SUITE --out DIR).
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, usageError("%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func envLookup(environ []string) func(string) string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}

func isTerminal(in io.Reader, out io.Writer) bool {
	fi, ok1 := in.(*os.File)
	fo, ok2 := out.(*os.File)
	return ok1 && ok2 && term.IsTerminal(int(fi.Fd())) && term.IsTerminal(int(fo.Fd()))
}

// toolName is "tender VERSION", falling back to the module version of the build.
func toolName(version string) string {
	if version == "dev" || version == "" {
		version = "dev"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
	}
	return "tender " + version
}
