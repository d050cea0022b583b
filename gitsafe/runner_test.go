package gitsafe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// No inherited GIT_* variable, HOME or XDG_CONFIG_HOME reaches git: the
// only config git sees is Tender's own -c overrides.
func TestRunnerScrubsEnvironment(t *testing.T) {
	_, marker := canary(t)
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", marker)
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.pager'='evil'")
	t.Setenv("GIT_CONFIG_GLOBAL", "/etc/passwd")
	t.Setenv("GIT_DIR", "/nonexistent")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	out, err := runGit(testCtx(t), gitCall{args: []string{"config", "--list", "--show-scope"}, dir: dir, ceiling: dir})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(hardenedConfig) {
		t.Errorf("git sees %d config entries, want the %d overrides:\n%s", len(lines), len(hardenedConfig), out)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "command\t") {
			t.Errorf("config entry not from Tender's command line: %q", l)
		}
	}
	for _, kv := range gitEnv(gitCall{}) {
		if strings.HasPrefix(kv, "GIT_CONFIG_COUNT") || strings.HasPrefix(kv, "GIT_DIR") ||
			strings.HasPrefix(kv, "XDG_") {
			t.Errorf("inherited variable reached git: %s", kv)
		}
	}
}

func TestRunnerBoundsOutput(t *testing.T) {
	src, head := newRepo(t, map[string]string{"big.txt": strings.Repeat("x", 1<<20)})
	r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
	_, err := r.git(testCtx(t), gitCall{args: []string{"cat-file", "blob", head + ":big.txt"}, limit: 64 << 10})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("cat-file of a 1 MiB blob with a 64 KiB bound = %v, want ErrTooLarge", err)
	}
}

func TestReadVerifiedRefusesOversizeObject(t *testing.T) {
	// cat-file announces the size first: an object over MaxOutputBytes is refused before
	// anything is allocated or read.
	oid := strings.Repeat("a", 40)
	header := fmt.Sprintf("%s blob %d\n", oid, MaxOutputBytes+1)
	_, _, err := readVerified(bufio.NewReader(strings.NewReader(header)), oid)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("readVerified of an object over MaxOutputBytes = %v, want ErrTooLarge", err)
	}
}

func TestRunnerCancellation(t *testing.T) {
	dir := t.TempDir()
	tgit(t, dir, "init", "-q", "--bare", "--template=", ".")
	pr, pw, err := os.Pipe() // stdin that never ends: fast-import waits forever
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	defer pr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = runGit(ctx, gitCall{args: []string{"fast-import"}, gitDir: dir, dir: dir, stdin: pr})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("runGit = %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancellation took %v", d)
	}
}

func TestRunErrorNamesCommandAndStderr(t *testing.T) {
	dir := t.TempDir()
	_, err := runGit(
		testCtx(t),
		gitCall{args: []string{"rev-parse", "--verify", "--end-of-options", "nope"}, dir: dir, ceiling: dir},
	)
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want *RunError", err)
	}
	if re.Args[0] != "rev-parse" || !strings.Contains(re.Stderr, "not a git repository") {
		t.Errorf("RunError = %+v", re)
	}
	if !strings.Contains(err.Error(), "git rev-parse --verify --end-of-options nope") {
		t.Errorf("message does not name the command: %v", err)
	}
}

// A revision is a hex id, never an option or an expression.
func TestResolveCommitRefusesNonHex(t *testing.T) {
	src, head := newRepo(t, map[string]string{"a": "a\n"})
	r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
	ctx := testCtx(t)
	for _, rev := range []string{"--output=/tmp/x", "HEAD", "main", "HEAD~1", head + "^{tree}", "abc", head + "0", "0123456789abcdef0123456789abcdef01234567", ""} {
		if got, err := r.ResolveCommit(ctx, rev); !errors.Is(err, ErrCommitNotFound) {
			t.Errorf("ResolveCommit(%q) = %q, %v; want ErrCommitNotFound", rev, got, err)
		}
	}
	for _, rev := range []string{head, head[:7], strings.ToUpper(head)} {
		if got, err := r.ResolveCommit(ctx, rev); err != nil || got != head {
			t.Errorf("ResolveCommit(%q) = %q, %v; want %s", rev, got, err, head)
		}
	}
}
