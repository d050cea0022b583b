package swebench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
)

// gitIn runs real git in dir with no user or system config and returns its trimmed output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestImportMissingObjects: a base commit whose tree lacks a blob in the clone (a partial clone
// with its promisor dropped, a damaged one) fails that instance alone, naming it and the
// object; --keep-going skips it and imports the others.
func TestImportMissingObjects(t *testing.T) {
	clone := demoClone(t)
	if err := os.WriteFile(filepath.Join(clone, "lost.txt"), []byte("a blob that goes missing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, clone, "add", "lost.txt")
	gitIn(t, clone, "commit", "-q", "-m", "lost")
	damaged := gitIn(t, clone, "rev-parse", "HEAD")
	blob := gitIn(t, clone, "rev-parse", "HEAD:lost.txt")
	if err := os.Remove(filepath.Join(clone, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	bad := demoInstance(t, "acme__calc-2")
	bad["base_commit"] = damaged
	c := importCase{instances: []map[string]any{demoInstance(t, "acme__calc-1"), bad}}
	if _, sum, err := c.run(t, clone); err == nil || len(sum.Failed) != 1 ||
		!strings.Contains(
			sum.Failed[0],
			"acme__calc-2: the clone "+clone+" (--repo acme__calc) lacks objects of base commit "+damaged,
		) ||
		!strings.Contains(sum.Failed[0], "missing blob object '"+blob+"'") {
		t.Fatalf("import: %v, failed %q; want acme__calc-2 named with the missing blob", err, sum.Failed)
	}
	c.opts.KeepGoing = true
	out, sum, err := c.run(t, clone)
	if err != nil || sum.Pairs != 1 || len(sum.Failed) != 1 {
		t.Fatalf("--keep-going: %v, %+v; want one pair and acme__calc-2 skipped", err, sum)
	}
	if _, err := suite.Load(out, suite.LoadOptions{}); err != nil {
		t.Errorf("the suite does not load: %v", err)
	}
}

// TestImportShallowClone: a shallow clone that holds the base commits (git clone --depth) is
// enough: the bundle holds the history down to its boundary, and the suite loads.
func TestImportShallowClone(t *testing.T) {
	full := demoClone(t)
	shallow := filepath.Join(t.TempDir(), "shallow")
	gitIn(t, t.TempDir(), "clone", "-q", "--depth", "1", "file://"+full, shallow)
	if head := gitIn(t, shallow, "rev-parse", "HEAD"); head != demoBase {
		t.Fatalf("the shallow clone is at %s, want the base %s", head, demoBase)
	}
	if _, err := os.Stat(filepath.Join(shallow, ".git", "shallow")); err != nil {
		t.Fatalf("not a shallow clone: %v", err)
	}
	c := importCase{instances: []map[string]any{demoInstance(t, "acme__calc-1")}}
	out, sum, err := c.run(t, shallow)
	if err != nil || sum.Pairs != 1 {
		t.Fatalf("import of a shallow clone: %v, %+v", err, sum)
	}
	s, err := suite.Load(out, suite.LoadOptions{})
	if err != nil || len(s.Pairs) != 1 {
		t.Fatalf("the suite does not load: %v", err)
	}
	check := t.TempDir()
	gitIn(t, check, "init", "-q")
	gitIn(t, check, "fetch", "-q", filepath.Join(out, "repos", "acme__calc.bundle"), "refs/tender/*:refs/tender/*")
	gitIn(t, check, "rev-list", "--objects", "--missing=error", "--quiet", demoBase)
}
