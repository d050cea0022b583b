package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/grader/swebench"
	"github.com/tender-grader/tender/report"
)

const importUsage = "import swebench --instances I.jsonl [--predictions P.jsonl] [--env SPEC.yaml] [--keep-going] " +
	"[--ambiguous-ids error|all] [--apply strict|swebench] --repo OWNER__NAME=PATH... --out DIR [--name NAME]"

func cmdImport(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(inv, "import", importUsage)
	instances := fs.String("instances", "", "SWE-bench instances `file` (JSONL or a JSON array)")
	predictions := fs.String("predictions", "", "predictions `file`; without it the reference patches are graded")
	envFile := fs.String("env", "", "environment spec `file`: OWNER/NAME -> version -> environment (see the README)")
	keepGoing := fs.Bool(
		"keep-going",
		false,
		"skip the instances that cannot be imported (each is reported) instead of failing",
	)
	ambiguous := fs.String("ambiguous-ids", "", "the suite's `policy` for a cut test ID that names several tests: "+
		"error (the default) or all (every test it names is required)")
	apply := fs.String("apply", "", "the suite's apply `policy`: strict (git apply alone, the default) or swebench "+
		"(SWE-bench's fallback chain)")
	out := fs.String("out", "", "new suite `directory` to write")
	name := fs.String("name", "swebench", "suite `name`")
	var repoFlags multiFlag
	fs.Var(
		&repoFlags,
		"repo",
		"local clone of a repository, `OWNER__NAME=PATH` (the suite's repository ID, as for grade; OWNER/NAME is accepted too) (repeatable)",
	)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "swebench" || *instances == "" || *out == "" {
		return usageError("usage: tender %s", importUsage)
	}
	if !report.ValidID(*name) {
		return usageError("--name %q: give the suite a name of 1-128 letters, digits, '.', '_' or '-', "+
			"starting with a letter or digit", *name)
	}
	if err := checkImportPolicies(*ambiguous, *apply); err != nil {
		return err
	}
	repos, err := parseRepoFlags(repoFlags)
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(repos)) {
		if fi, err := os.Stat(repos[id]); err != nil || !fi.IsDir() {
			return usageError("--repo %s=%s: not a directory; give the path of a local clone", id, repos[id])
		}
	}
	if err := checkImportOut(*out); err != nil {
		return err
	}
	o := swebench.ImportOptions{Repos: repos, Out: *out, Name: *name, KeepGoing: *keepGoing, EnvFile: *envFile,
		InstancesFile: *instances, PredictionsFile: *predictions, AmbiguousIDs: *ambiguous, Apply: *apply,
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

// checkImportPolicies refuses a policy the suite loader would refuse, before anything is read.
func checkImportPolicies(ambiguous, apply string) error {
	if !suite.ValidAmbiguousIDs(ambiguous) {
		return usageError("--ambiguous-ids %q: write error (a cut test ID that names several tests leaves the pair "+
			"without a verdict, the default) or all (every test it names is required)", ambiguous)
	}
	if !suite.ValidApply(apply) {
		return usageError("--apply %q: write strict (git apply alone, the default) or swebench (SWE-bench's chain: "+
			"git apply, then git apply --reject, then a fuzzed apply)", apply)
	}
	return nil
}

// checkImportOut refuses an --out that holds anything: the import renames a complete suite
// into place, so a rerun after a failure starts clean.
func checkImportOut(out string) error {
	info, err := os.Stat(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return checkOutPlace("--out", out, filepath.Dir(filepath.Clean(out)))
	case err != nil:
		return usageError("--out %s: %v", out, err)
	case !info.IsDir():
		return usageError("--out %s is not a directory; choose a new directory", out)
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) > 0 {
		return usageError("--out %s is not empty; choose a new directory", out)
	}
	// The suite is written beside --out and renamed into place: its parent must take it, and
	// a rename cannot replace a mount point.
	parent := filepath.Dir(filepath.Clean(out))
	if pi, err := os.Stat(parent); err == nil && !sameDevice(info, pi) {
		return usageError("--out %s is a mount point; import renames the suite into place, so name a new directory "+
			"inside it (such as %s)", out, filepath.Join(out, "suite"))
	}
	return checkOutPlace("--out", out, parent)
}

func sameDevice(a, b os.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return !ok1 || !ok2 || sa.Dev == sb.Dev
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
	for _, note := range sum.Notes {
		fmt.Fprintf(w, "note: %s\n", note)
	}
	for _, id := range sum.EmptyPatch {
		fmt.Fprintf(w, "empty model patch: %s (recorded; it will not be run)\n", id)
	}
	for _, id := range sum.NoPrediction {
		fmt.Fprintf(w, "no prediction: %s (recorded as incomplete, not a pair)\n", id)
	}
	if len(sum.Failed) > 0 {
		fmt.Fprintf(
			w,
			"skipped: %d record(s) that cannot be imported (listed above; their instances are recorded as errors unless also imported)\n",
			len(sum.Failed),
		)
	}
}
