package gitsafe

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tgit runs the real git to build fixtures, isolated from the host's
// config. It is for test setup only; the code under test uses runGit.
func tgit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := tgitErr(dir, nil, args...)
	if err != nil {
		t.Fatalf("git %s in %s: %v", strings.Join(args, " "), dir, err)
	}
	return out
}

func tgitErr(dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = fixtureEnv()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), errors.Join(err, errors.New(stderr.String()))
	}
	return string(out), nil
}

func fixtureEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env,
		"HOME=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Fixture", "GIT_AUTHOR_EMAIL=fixture@example.invalid",
		"GIT_COMMITTER_NAME=Fixture", "GIT_COMMITTER_EMAIL=fixture@example.invalid",
		"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z",
	)
}

// newRepo creates a working tree with one commit holding files, on branch
// main, and returns its path and the commit id.
func newRepo(t testing.TB, files map[string]string) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tgit(t, dir, "init", "-q", "-b", "main", "--template=", ".")
	writeFiles(t, dir, files)
	tgit(t, dir, "add", "-A")
	tgit(t, dir, "commit", "-q", "--no-verify", "-m", "base")
	return dir, strings.TrimSpace(tgit(t, dir, "rev-parse", "HEAD"))
}

func commitAll(t testing.TB, dir, msg string) string {
	t.Helper()
	tgit(t, dir, "add", "-A")
	tgit(t, dir, "commit", "-q", "--no-verify", "-m", msg)
	return strings.TrimSpace(tgit(t, dir, "rev-parse", "HEAD"))
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := fs.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// canary returns a helper script that would create marker if anything ever
// ran it, and the marker path. The marker starts absent.
func canary(t testing.TB) (script, marker string) {
	t.Helper()
	d := t.TempDir()
	marker = filepath.Join(d, "MARKER")
	script = filepath.Join(d, "canary.sh")
	body := "#!/bin/sh\ntouch " + marker + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, marker
}

func assertNoMarker(t testing.TB, marker string) {
	t.Helper()
	if _, err := os.Lstat(marker); err == nil {
		t.Fatalf("canary fired: %s exists", marker)
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// dirState maps every path under dir to its type, mode and content, to
// prove a directory unchanged.
func dirState(t testing.TB, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		val := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			val += " " + string(b)
		}
		st[filepath.ToSlash(rel)] = val
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustSnapshot(t testing.TB, src Source) *Repo {
	t.Helper()
	r, err := Snapshot(testCtx(t), src, t.TempDir())
	if err != nil {
		t.Fatalf("Snapshot(%v): %v", src, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
