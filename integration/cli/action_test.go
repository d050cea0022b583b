package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
)

// TestActionGradeFromEnvironmentAlone grades shard 2/3 of fixtures/demo with the real Docker
// backend in Action mode, with a canary token in the inputs and the environment: the token
// is masked and reaches no output, no log line and no file of the bundle.
func TestActionGradeFromEnvironmentAlone(t *testing.T) {
	inputs := map[string]string{"command": "grade", "suite": repoRoot + "/fixtures/demo",
		"shard": "2/3", "concurrency": "2", "token": clitest.Token, "fail-on": "error"}
	r := clitest.NewRunner(t, cli.Main, "https://api.example.test", inputs, map[string]any{})
	out := filepath.Join(r.Workdir, "bundle")
	r.Env["INPUT_OUT"] = out
	r.Env["GITHUB_TOKEN"] = clitest.Token
	r.Env["PATH"], r.Env["HOME"] = os.Getenv("PATH"), os.Getenv("HOME")
	code, stdout, stderr := r.Run(t)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	res := clitest.ReadResults(t, out)
	got := r.Outputs(t)
	if res.Shard != "2/3" || got["total"] != fmt.Sprint(len(res.Pairs)) || got["bundle"] != out ||
		got["conclusion"] != "success" {
		t.Errorf("shard %q, %d pairs, outputs %v", res.Shard, len(res.Pairs), got)
	}
	clitest.AssertNoToken(t, stdout, stderr, out)
	for _, path := range []string{r.Output, r.Summary} {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(clitest.Token)) {
			t.Errorf("%s carries the token", path)
		}
	}
	if s, _ := os.ReadFile(r.Summary); !strings.Contains(string(s), "demo") {
		t.Errorf("job summary %q", s)
	}
	// One log group per pair, opened and closed, with no candidate text in it.
	opened, closed := strings.Count(stdout, "::group::["), strings.Count(stdout, "::endgroup::")
	if opened != len(res.Pairs) || closed != opened {
		t.Errorf("%d groups opened and %d closed for %d pairs:\n%s", opened, closed, len(res.Pairs), stdout)
	}
}
