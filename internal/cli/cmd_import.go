package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/grader/swebench"
)

const importUsage = "import swebench --instances I.jsonl [--predictions P.jsonl] [--env SPEC.yaml] [--keep-going] --repo OWNER__NAME=PATH... --out DIR [--name NAME]"

func cmdImport(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(inv, "import", importUsage)
	instances := fs.String("instances", "", "SWE-bench instances `file` (JSONL or a JSON array)")
	predictions := fs.String("predictions", "", "predictions `file`; without it the reference patches are graded")
	envFile := fs.String("env", "", "environment spec `file`: OWNER/NAME -> version -> environment (see the README)")
	keepGoing := fs.Bool("keep-going", false, "skip the instances that cannot be imported (each is reported) instead of failing")
	out := fs.String("out", "", "new suite `directory` to write")
	name := fs.String("name", "swebench", "suite `name`")
	var repoFlags multiFlag
	fs.Var(&repoFlags, "repo", "local clone of a repository, `OWNER__NAME=PATH` (the suite's repository ID, as for grade; OWNER/NAME is accepted too) (repeatable)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "swebench" || *instances == "" || *out == "" {
		return usageError("usage: tender %s", importUsage)
	}
	repos, err := parseRepoFlags(repoFlags)
	if err != nil {
		return err
	}
	if err := checkImportOut(*out); err != nil {
		return err
	}
	o := swebench.ImportOptions{Repos: repos, Out: *out, Name: *name, KeepGoing: *keepGoing, EnvFile: *envFile,
		Progress: func(msg string) { fmt.Fprintf(inv.Stderr, "import: %s\n", msg) }}
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for _, in := range []struct {
		flag, file string
		dst        *io.Reader
	}{{"--instances", *instances, &o.Instances}, {"--predictions", *predictions, &o.Predictions}, {"--env", *envFile, &o.Env}} {
		if in.file == "" {
			continue
		}
		f, err := openInput(in.flag, in.file)
		if err != nil {
			return err
		}
		closers = append(closers, f)
		*in.dst = f
	}
	sum, err := swebench.Import(ctx, o)
	for _, line := range sum.Failed {
		verb := "cannot import"
		if *keepGoing && err == nil {
			verb = "skipped"
		}
		fmt.Fprintf(inv.Stderr, "%s %s\n", verb, line)
	}
	if errors.Is(err, suite.ErrBadSuite) {
		return withCode(exitUsage, err)
	}
	if err != nil {
		return err
	}
	printImportSummary(inv.Stdout, *out, sum)
	return nil
}

// checkImportOut refuses an --out that holds anything: the import renames a complete suite
// into place, so a rerun after a failure starts clean.
func checkImportOut(out string) error {
	info, err := os.Stat(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return usageError("--out %s: %v", out, err)
	case !info.IsDir():
		return usageError("--out %s is not a directory; choose a new directory", out)
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) > 0 {
		return usageError("--out %s is not empty; choose a new directory", out)
	}
	return nil
}

func printImportSummary(w io.Writer, out string, sum swebench.ImportSummary) {
	fmt.Fprintf(w, "wrote suite %s: %d pair(s)", out, sum.Pairs)
	if sum.Model != "" {
		fmt.Fprintf(w, " of model %s", sum.Model)
	}
	if len(sum.Environments) > 0 {
		fmt.Fprintf(w, " in %d environment(s): %s", len(sum.Environments), strings.Join(sum.Environments, ", "))
	}
	fmt.Fprintln(w)
	for _, id := range sum.EmptyPatch {
		fmt.Fprintf(w, "empty model patch: %s (recorded; it will not be run)\n", id)
	}
	for _, id := range sum.NoPrediction {
		fmt.Fprintf(w, "no prediction: %s (recorded as incomplete, not a pair)\n", id)
	}
	if len(sum.Failed) > 0 {
		fmt.Fprintf(w, "skipped: %d record(s) that cannot be imported (listed above; their instances are recorded as errors unless also imported)\n", len(sum.Failed))
	}
}
