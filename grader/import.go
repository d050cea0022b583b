package grader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/swebench"
)

// ImportOptions describe `tender import swebench`.
type ImportOptions struct {
	Instances   io.Reader
	Predictions io.Reader         // nil: grade the reference patches, as SWE-bench's "gold"
	Repos       map[string]string // OWNER/NAME -> local clone
	Out         string            // a new or empty directory
	Name        string            // suite name
	WorkDir     string
}

// ImportSummary says what an import wrote.
type ImportSummary struct {
	Pairs        int
	EmptyPatch   []string // predictions with an empty model patch: recorded, never run
	NoPrediction []string // instances left out because the predictions did not cover them
	Model        string
}

// ImportSWEBench writes a self-contained suite: each repository vendored as a git bundle of
// the base commits, each instance a pair whose candidate is the model patch (or the reference
// patch without predictions). The written suite is loaded back before returning.
func ImportSWEBench(ctx context.Context, o ImportOptions) (ImportSummary, error) {
	var sum ImportSummary
	insts, err := swebench.ReadInstances(o.Instances)
	if err != nil {
		return sum, fmt.Errorf("%w: instances: %v", ErrBadSuite, err)
	}
	preds, err := readPredictions(o.Predictions, insts)
	if err != nil {
		return sum, err
	}
	doc := SuiteDoc{Name: o.Name, Version: "1", Repositories: map[string]RepoDoc{}}
	commits := map[string][]string{}
	for _, in := range insts {
		patch := in.Patch
		if preds != nil {
			p, ok := preds[in.InstanceID]
			if !ok {
				sum.NoPrediction = append(sum.NoPrediction, in.InstanceID)
				continue
			}
			patch, sum.Model = "", p.ModelNameOrPath
			if p.ModelPatch != nil {
				patch = *p.ModelPatch
			}
			if len(bytes.TrimSpace([]byte(patch))) == 0 {
				sum.EmptyPatch = append(sum.EmptyPatch, in.InstanceID)
			}
		}
		id := swebench.RepoID(in.Repo)
		if _, ok := o.Repos[in.Repo]; !ok {
			return sum, fmt.Errorf("%w: instance %s needs repository %s; map it to a local clone with --repo %s=PATH", ErrBadSuite, in.InstanceID, in.Repo, in.Repo)
		}
		commits[in.Repo] = append(commits[in.Repo], in.BaseCommit)
		pd, err := writePairFiles(o.Out, in, patch)
		if err != nil {
			return sum, err
		}
		doc.Pairs = append(doc.Pairs, pd)
		doc.Repositories[id] = RepoDoc{Bundle: path.Join("repos", id+".bundle")}
	}
	if len(doc.Pairs) == 0 {
		return sum, fmt.Errorf("%w: no instance to import (the predictions cover none of them)", ErrBadSuite)
	}
	for repo, cs := range commits {
		if err := vendorRepo(ctx, o, repo, cs); err != nil {
			return sum, err
		}
	}
	sum.Pairs = len(doc.Pairs)
	if err := writeSuiteDoc(o.Out, doc); err != nil {
		return sum, err
	}
	_, err = Load(o.Out, LoadOptions{})
	return sum, err
}

func readPredictions(r io.Reader, insts []swebench.Instance) (map[string]swebench.Prediction, error) {
	if r == nil {
		return nil, nil
	}
	preds, err := swebench.ReadPredictions(r)
	if err != nil {
		return nil, fmt.Errorf("%w: predictions: %v", ErrBadSuite, err)
	}
	known := map[string]bool{}
	for _, in := range insts {
		known[in.InstanceID] = true
	}
	for id := range preds {
		if !known[id] {
			return nil, fmt.Errorf("%w: predictions: %q is not an instance in the instances file", ErrBadSuite, id)
		}
	}
	return preds, nil
}

func writePairFiles(out string, in swebench.Instance, patch string) (PairDoc, error) {
	rel := path.Join("pairs", in.InstanceID)
	files := map[string]string{"issue.md": in.ProblemStatement, "patch.diff": patch, "reference.diff": in.Patch}
	if in.TestPatch != "" {
		files["test.diff"] = in.TestPatch
	}
	for name, content := range files {
		dst := filepath.Join(out, filepath.FromSlash(rel), name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return PairDoc{}, err
		}
		if err := os.WriteFile(dst, []byte(content), 0o644); err != nil {
			return PairDoc{}, err
		}
	}
	f2p := []string(in.FailToPass)
	pd := PairDoc{ID: in.InstanceID, Repository: swebench.RepoID(in.Repo), BaseCommit: in.BaseCommit,
		Issue: path.Join(rel, "issue.md"), Patch: path.Join(rel, "patch.diff"), ReferencePatch: path.Join(rel, "reference.diff"),
		FailToPass: &f2p}
	if in.TestPatch != "" {
		pd.TestPatch = path.Join(rel, "test.diff")
	}
	if len(in.PassToPass) > 0 {
		p2p := []string(in.PassToPass)
		pd.PassToPass = &p2p
	}
	return pd, nil
}

// vendorRepo snapshots the operator's clone (never running git on its own .git) and writes a
// bundle of the base commits into the suite.
func vendorRepo(ctx context.Context, o ImportOptions, repo string, commits []string) error {
	r, err := gitsafe.Snapshot(ctx, gitsafe.Source{Kind: gitsafe.SourceClone, Path: o.Repos[repo]}, o.WorkDir)
	if errors.Is(err, gitsafe.ErrNotRepository) || errors.Is(err, gitsafe.ErrUnsafeRepo) {
		return fmt.Errorf("%w: --repo %s=%s: %w", ErrBadSuite, repo, o.Repos[repo], errors.Unwrap(err))
	}
	if err != nil {
		return fmt.Errorf("--repo %s: %w", repo, err)
	}
	defer r.Close()
	sort.Strings(commits)
	for _, c := range commits {
		if _, err := r.ResolveCommit(ctx, c); err != nil {
			return fmt.Errorf("%w: --repo %s: base commit %s is not in the clone: %v", ErrBadSuite, repo, c, err)
		}
	}
	dst := filepath.Join(o.Out, "repos", swebench.RepoID(repo)+".bundle")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return r.WriteBundle(ctx, dst, commits)
}

func writeSuiteDoc(out string, doc SuiteDoc) error {
	var buf bytes.Buffer
	buf.WriteString("# Written by tender import swebench. See the README for the suite format.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, SuiteFile), buf.Bytes(), 0o644)
}
