package docker

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/tender-grader/tender/sandbox"
)

func TestDockerRunsCommandAndCollects(t *testing.T) {
	spec := testSpec(
		t,
		sh(
			`cat README; ls -la /workspace; echo "<testsuite/>" > "$TENDER_JUNIT"; echo err >&2; echo {junit} {assets} {workspace} {tender}; exit 3`,
		)...)
	res := runDocker(t, spec)
	if res.ExitCode != 3 {
		t.Errorf("exit code = %d, want 3", res.ExitCode)
	}
	if !strings.Contains(res.Stdout.String(), "/tender/out/junit.xml /tender/assets /workspace /tender") {
		t.Errorf("tokens not expanded: %q", res.Stdout.String())
	}
	if string(res.JUnit) != "<testsuite/>\n" {
		t.Errorf("JUnit = %q", res.JUnit)
	}
	if res.PeakMemory <= 0 || res.PeakMemory > spec.Limits.Memory || res.Wall <= 0 {
		t.Errorf("peak memory %d, wall %s: want both reported", res.PeakMemory, res.Wall)
	}
	if !res.Isolated || res.Backend != "docker" || res.ImageID != testImageID {
		t.Errorf(
			"result marking: isolated %v backend %q image %q (want %s)",
			res.Isolated,
			res.Backend,
			res.ImageID,
			testImageID,
		)
	}
}

func TestDockerConcurrentChecksStayApart(t *testing.T) {
	// The grader fans checks out; each must see only its own workspace and write only its
	// own report.
	const n = 4
	results := make([]*sandbox.Result, n)
	specs := make([]sandbox.Spec, n)
	var g errgroup.Group
	for i := range n {
		specs[i] = testSpec(t, sh(`cat id; ls /workspace | wc -l; cat id > "$TENDER_JUNIT"`)...)
		specs[i].Workspace = writeFiles(t, map[string]string{"id": fmt.Sprintf("check-%d\n", i)})
		g.Go(func() error {
			res, err := engine.Run(context.Background(), specs[i])
			results[i] = res
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		want := fmt.Sprintf("check-%d\n", i)
		if res.Stdout.String() != want+"1\n" || string(res.JUnit) != want {
			t.Errorf("check %d: stdout %q report %q", i, res.Stdout.String(), res.JUnit)
		}
		assertRunGone(t, specs[i].RunID)
	}
}

// TestDockerFeedsStdin: the spec's stdin reaches the command and then ends, so a reader of
// its whole input (Tender's pytest bootstrap reads its configuration so) is not left waiting.
func TestDockerFeedsStdin(t *testing.T) {
	spec := testSpec(t, sh(`wc -c; cat`)...)
	spec.Stdin = []byte("tender configuration\n")
	res := runDocker(t, spec)
	if res.ExitCode != 0 || res.Stdout.String() != "21\n" {
		t.Errorf("exit %d, stdout %q: want the 21 bytes counted, then EOF", res.ExitCode, res.Stdout.String())
	}
	spec = testSpec(t, sh(`cat; echo end`)...)
	if res := runDocker(t, spec); res.Stdout.String() != "end\n" {
		t.Errorf("without Stdin the command must see no input: stdout %q", res.Stdout.String())
	}
}
