package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tender-grader/tender/grader"
)

const importUsage = "import swebench --instances I.jsonl [--predictions P.jsonl] --repo OWNER/NAME=PATH... --out DIR [--name NAME]"

func cmdImport(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(inv, "import", importUsage)
	instances := fs.String("instances", "", "SWE-bench instances `file` (JSONL or a JSON array)")
	predictions := fs.String("predictions", "", "predictions `file`; without it the reference patches are graded")
	out := fs.String("out", "", "new suite `directory` to write")
	name := fs.String("name", "swebench", "suite `name`")
	var repoFlags multiFlag
	fs.Var(&repoFlags, "repo", "local clone of a repository, `OWNER/NAME=PATH` (repeatable)")
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
	if entries, err := os.ReadDir(*out); err == nil && len(entries) > 0 {
		return usageError("--out %s is not empty; choose a new directory", *out)
	}
	in, err := openInput("--instances", *instances)
	if err != nil {
		return err
	}
	defer in.Close()
	var pred io.Reader
	if *predictions != "" {
		f, err := openInput("--predictions", *predictions)
		if err != nil {
			return err
		}
		defer f.Close()
		pred = f
	}
	sum, err := grader.ImportSWEBench(ctx, grader.ImportOptions{Instances: in, Predictions: pred, Repos: repos, Out: *out, Name: *name})
	if errors.Is(err, grader.ErrBadSuite) {
		return withCode(exitUsage, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.Stdout, "wrote suite %s: %d pair(s)", *out, sum.Pairs)
	if sum.Model != "" {
		fmt.Fprintf(inv.Stdout, " of model %s", sum.Model)
	}
	fmt.Fprintln(inv.Stdout)
	for _, id := range sum.EmptyPatch {
		fmt.Fprintf(inv.Stdout, "empty model patch: %s (recorded; it will not be run)\n", id)
	}
	for _, id := range sum.NoPrediction {
		fmt.Fprintf(inv.Stdout, "no prediction: %s (left out)\n", id)
	}
	return nil
}
