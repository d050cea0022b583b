package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/grader/swebench"
)

const envUsage = "env infer (--repo PATH --commit SHA [--name OWNER/NAME] | " +
	"--instances I.jsonl --repo OWNER__NAME=PATH...)"

var reSpecName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)

// cmdEnv is `tender env infer`: it proposes an --env spec from a repository's declared
// requirements, read through gitsafe at the commit, and prints it.
func cmdEnv(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(inv, "env", envUsage)
	commit := fs.String("commit", "", "the commit `SHA` to read the requirements at (with a single --repo PATH)")
	name := fs.String("name", "", "the spec's key for a single --repo, `OWNER/NAME` (default local/<directory name>)")
	instances := fs.String("instances", "", "SWE-bench instances `file`: each repository and version at the base "+
		"commit of its first instance")
	var repoFlags multiFlag
	fs.Var(&repoFlags, "repo", "a local clone: `PATH` with --commit, or OWNER__NAME=PATH with --instances (repeatable)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "infer" || len(repoFlags) == 0 || (*instances == "") == (*commit == "") {
		return usageError("usage: tender %s", envUsage)
	}
	o := swebench.InferOptions{Debian: hostDebian(inv)}
	if *instances != "" {
		if o.Repos, err = parseRepoFlags(repoFlags); err != nil {
			return err
		}
		f, err := openInput("--instances", *instances)
		if err != nil {
			return err
		}
		defer f.Close()
		o.Instances, o.InstancesFile = f, *instances
	} else {
		if len(repoFlags) != 1 || strings.Contains(repoFlags[0], "=") {
			return usageError("--repo: with --commit, give one clone's PATH")
		}
		o.Repo, o.Commit, o.Name = repoFlags[0], *commit, *name
		if o.Name == "" {
			o.Name = "local/" + strings.Trim(strings.ReplaceAll(filepathBase(o.Repo), " ", "-"), ".")
		}
		if !reSpecName.MatchString(o.Name) {
			return usageError("--name %q: write OWNER/NAME, as SWE-bench's repo", o.Name)
		}
	}
	spec, err := swebench.InferSpec(ctx, o)
	if errors.Is(err, suite.ErrBadSuite) {
		return withCode(exitUsage, err)
	}
	if err != nil {
		return err
	}
	_, err = inv.Stdout.Write(spec)
	return err
}

func filepathBase(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

// hostDebian is the host's apt-cache when the host is Debian: it knows the suites of the
// host's own apt sources (bookworm here), which is what a debian environment builds from.
// Elsewhere the proposal says its package names were not checked.
func hostDebian(inv *invocation) swebench.DebianIndex {
	release, _ := os.ReadFile("/etc/os-release")
	apt, err := exec.LookPath("apt-cache")
	if err != nil || !regexp.MustCompile(`(?m)^ID=debian$`).Match(release) {
		fmt.Fprintln(inv.Stderr, "tender: this host is not Debian with apt-cache: the proposed package names are not checked")
		return swebench.DebianIndex{}
	}
	where := "apt-cache policy on this host"
	if m := regexp.MustCompile(`(?m)^PRETTY_NAME="?([^"\n]*)"?$`).FindSubmatch(release); m != nil {
		where += " (" + string(m[1]) + ")"
	}
	return swebench.DebianIndex{Where: where, Has: func(pkgs []string) (map[string]bool, error) {
		return aptHas(apt, pkgs)
	}}
}

// aptHas asks apt-cache policy about every package at once: a package it knows with a
// candidate version exists; one it does not know prints nothing.
func aptHas(apt string, pkgs []string) (map[string]bool, error) {
	cmd := exec.Command(apt, append([]string{"policy", "--"}, pkgs...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache policy: %w", err)
	}
	has := map[string]bool{}
	name := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":"):
			name = strings.TrimSuffix(line, ":")
		case strings.HasPrefix(strings.TrimSpace(line), "Candidate:"):
			has[name] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "Candidate:")) != "(none)"
		}
	}
	return has, sc.Err()
}
