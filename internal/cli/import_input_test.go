package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tender-grader/tender/internal/clitest"
)

// TestImportRefusesHostileInputs: an instances file that is not one plain JSON document or
// JSONL stream, a FIFO where a file should be, and a --repo that is not a repository are bad
// input: exit 2 and one line, at once (a FIFO must never be waited on).
func TestImportRefusesHostileInputs(t *testing.T) {
	work := t.TempDir()
	rec := `{"instance_id":"a__b-1","repo":"a/b","base_commit":"` + clitest.DemoBase +
		`","patch":"","FAIL_TO_PASS":["t::x"]}`
	good := filepath.Join(work, "good.jsonl")
	clitest.Must(t, os.WriteFile(good, []byte(rec+"\n"), 0o644))
	garbage := filepath.Join(work, "garbage.json")
	clitest.Must(t, os.WriteFile(garbage, []byte("["+rec+"]\nthis is not JSON\n"), 0o644))
	twoArrays := filepath.Join(work, "two.json")
	clitest.Must(t, os.WriteFile(twoArrays, []byte("["+rec+"]["+rec+"]"), 0o644))
	fifo := filepath.Join(work, "fifo")
	clitest.Must(t, syscall.Mkfifo(fifo, 0o644))
	notRepo := t.TempDir()
	for i, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"array with trailing garbage", []string{"--instances", garbage}, "after the JSON array"},
		{"two arrays", []string{"--instances", twoArrays}, "after the JSON array"},
		{"instances is a FIFO", []string{"--instances", fifo}, "--instances " + fifo + " is not a regular file"},
		{"predictions is a FIFO", []string{"--instances", good, "--predictions", fifo}, "--predictions " + fifo + " is not a regular file"},
		{"repo is not a repository", []string{"--instances", good, "--repo", "a/b=" + notRepo}, "--repo a__b=" + notRepo + ": not a git repository"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(
				[]string{"import", "swebench", "--out", filepath.Join(work, "out"+string(rune('a'+i)))},
				tc.args...)
			_, stderr, code := runTender(t, args...)
			lines := errorLines(stderr)
			if code != exitUsage || len(lines) != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d and one line with %q:\n%s", code, exitUsage, tc.want, stderr)
			}
		})
	}
}

// errorLines drops import's progress lines ("import: ...") from stderr.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "import: ") {
			out = append(out, l)
		}
	}
	return out
}
