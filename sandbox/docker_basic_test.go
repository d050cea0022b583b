package sandbox

import (
	"strings"
	"testing"
)

func TestDockerRunsCommandAndCollects(t *testing.T) {
	spec := testSpec(t, sh(`cat README; ls -la /workspace; echo "<testsuite/>" > "$TENDER_JUNIT"; echo err >&2; echo {junit} {assets} {workspace} {tender}; exit 3`)...)
	res := runDocker(t, spec)
	t.Logf("stdout:\n%s\nstderr:\n%s\nresult: %+v", res.Stdout, res.Stderr, *res)
	if res.ExitCode != 3 {
		t.Errorf("exit code = %d, want 3", res.ExitCode)
	}
	if !strings.Contains(res.Stdout.String(), "/tender/out/junit.xml /tender/assets /workspace /tender") {
		t.Errorf("tokens not expanded: %q", res.Stdout.String())
	}
	if string(res.JUnit) != "<testsuite/>\n" {
		t.Errorf("JUnit = %q", res.JUnit)
	}
}
