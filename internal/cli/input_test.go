package cli

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tender-grader/tender/internal/clitest"
)

// worldDir makes a directory every user can enter, for a test that runs tender as nobody.
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tender-world-")
	clitest.Must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	clitest.Must(t, os.Chmod(dir, 0o755))
	return dir
}

// TestUnreadableSuiteFiles: a suite file the user cannot read is bad input: exit 2 and one
// line that names the file, never Go's raw open error. Tender runs as nobody (uid 65534), so
// permissions bite.
func TestUnreadableSuiteFiles(t *testing.T) {
	built := clitest.BuildTender(t, repoRoot)
	shared := worldDir(t)
	bin := filepath.Join(shared, "tender")
	copyFile(t, built, bin, 0o755)
	for _, tc := range []struct {
		name, path, want string
	}{
		{"manifest", "tender.yaml", "tender.yaml: tender.yaml cannot be read (permission denied)"},
		{"issue", "pairs/gold-fix/issue.md", "pairs[0].issue: pairs/gold-fix/issue.md cannot be read (permission denied)"},
		{"repository stream", "repos/calc.fi", "repos/calc.fi: cannot be read (permission denied)"},
		{"directory", "pairs/no-apply", "pairs/no-apply/issue.md cannot be read (permission denied)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			suite := filepath.Join(shared, strings.ReplaceAll(tc.name, " ", "-"))
			clitest.Must(t, os.CopyFS(suite, os.DirFS(repoRoot+"/fixtures/demo")))
			filepath.WalkDir(suite, func(p string, d os.DirEntry, err error) error {
				mode := os.FileMode(0o644)
				if d.IsDir() {
					mode = 0o755
				}
				return os.Chmod(p, mode)
			})
			clitest.Must(t, os.Chmod(filepath.Join(suite, tc.path), 0))
			cmd := exec.Command(bin, "validate", suite)
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			cmd.Run()
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if code := cmd.ProcessState.ExitCode(); code != exitUsage || len(lines) != 1 ||
				!strings.Contains(stderr.String(), tc.want) ||
				strings.Contains(stderr.String(), "open ") {
				t.Errorf(
					"validate as nobody: exit %d, want %d and one line with %q:\n%s",
					code,
					exitUsage,
					tc.want,
					stderr.String(),
				)
			}
		})
	}
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	clitest.Must(t, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	clitest.Must(t, err)
	_, err = io.Copy(out, in)
	clitest.Must(t, err)
	clitest.Must(t, out.Close())
}
