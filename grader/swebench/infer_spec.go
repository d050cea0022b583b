package swebench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/suite"
)

// InferOptions describe `tender env infer`: one clone at one commit (Repo, Commit, Name), or
// the instances of a SWE-bench file (Instances, Repos), each repository and version at the base
// commit of its first instance.
type InferOptions struct {
	Repo, Commit, Name string // one clone; Name is the spec's OWNER/NAME key
	Instances          io.Reader
	InstancesFile      string
	Repos              map[string]string // repository ID (OWNER__NAME) -> clone, for Instances
	WorkDir            string
	Debian             DebianIndex
}

// inferTarget is one repository and version to propose an environment for.
type inferTarget struct {
	repo, version, commit, clone, instance string
}

// InferSpec proposes an --env spec and returns it as YAML, each entry preceded by comments
// that say what was read, what each requirement maps to, and what Debian lacks.
func InferSpec(ctx context.Context, o InferOptions) ([]byte, error) {
	targets, err := inferTargets(o)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString("# Proposed by tender env infer from each repository's declared requirements (nothing was run).\n" +
		"# Check it, then give it to tender import swebench --env.\n")
	snaps := map[string]*gitsafe.Repo{}
	defer func() {
		for _, r := range snaps {
			r.Close()
		}
	}()
	lastRepo := ""
	for _, tg := range targets {
		r, ok := snaps[tg.clone]
		if !ok {
			if r, err = gitsafe.Snapshot(ctx, gitsafe.Source{Kind: gitsafe.SourceClone, Path: tg.clone}, o.WorkDir); err != nil {
				if errors.Is(err, gitsafe.ErrNotRepository) || errors.Is(err, gitsafe.ErrUnsafeRepo) {
					return nil, fmt.Errorf("%w: --repo %s: %w", suite.ErrBadSuite, tg.clone, errors.Unwrap(err))
				}
				return nil, err
			}
			snaps[tg.clone] = r
		}
		p, err := Infer(ctx, r, tg.commit, o.Debian)
		if err != nil {
			return nil, fmt.Errorf("%s at %s (--repo %s): %w", tg.repo, tg.commit, tg.clone, err)
		}
		if tg.repo != lastRepo {
			fmt.Fprintf(&buf, "%s:\n", tg.repo)
			lastRepo = tg.repo
		}
		writeProposal(&buf, tg, p)
	}
	return buf.Bytes(), nil
}

func writeProposal(buf *bytes.Buffer, tg inferTarget, p Proposal) {
	what := "commit " + tg.commit
	if tg.instance != "" {
		what = fmt.Sprintf("the base commit %s of %s", tg.commit, tg.instance)
	}
	fmt.Fprintf(buf, "  # version %s, read at %s:\n", tg.version, what)
	for _, n := range p.Notes {
		fmt.Fprintf(buf, "  #   %s\n", n)
	}
	if len(p.Lacks) > 0 {
		fmt.Fprintf(buf, "  #   Debian lacks: %s (tests that import them fail; a dockerfile environment can add them)\n",
			strings.Join(p.Lacks, ", "))
	}
	var entry bytes.Buffer
	enc := yaml.NewEncoder(&entry)
	enc.SetIndent(2)
	_ = enc.Encode(map[string]suite.EnvironmentDoc{tg.version: p.Env}) // strings and maps always encode
	for _, line := range strings.Split(strings.TrimRight(entry.String(), "\n"), "\n") {
		fmt.Fprintf(buf, "  %s\n", line)
	}
}

func inferTargets(o InferOptions) ([]inferTarget, error) {
	if o.Instances == nil {
		return []inferTarget{{repo: o.Name, version: AnyVersion, commit: o.Commit, clone: o.Repo}}, nil
	}
	insts, bad, err := ReadInstances(o.Instances)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", suite.ErrBadSuite, fileLabel("--instances", o.InstancesFile), err)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%w: %s: %v", suite.ErrBadSuite, fileLabel("--instances", o.InstancesFile), bad[0])
	}
	slices.SortFunc(insts, func(a, b Instance) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	seen := map[string]bool{}
	var out []inferTarget
	for _, in := range insts {
		key := in.Repo + "\x00" + string(in.Version)
		if seen[key] {
			continue
		}
		seen[key] = true
		clone, ok := o.Repos[RepoID(in.Repo)]
		if !ok {
			return nil, fmt.Errorf("%w: %s needs repository %s; map it to a local clone with --repo %s=PATH",
				suite.ErrBadSuite, in.InstanceID, in.Repo, RepoID(in.Repo))
		}
		out = append(out, inferTarget{repo: in.Repo, version: string(in.Version), commit: in.BaseCommit, clone: clone,
			instance: in.InstanceID})
	}
	slices.SortStableFunc(out, func(a, b inferTarget) int { return strings.Compare(a.repo, b.repo) })
	return out, nil
}
