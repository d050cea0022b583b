package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/internal/clitest"
)

// TestEnvInfer: `tender env infer` on a clone of fixtures/realworld's async-lru, at a commit
// and from its instances, prints a spec that `import swebench --env` reads, with the plugins
// and ini options of the project's own setup.cfg; the host's apt-cache (this is Debian) checks
// each package.
func TestEnvInfer(t *testing.T) {
	fixture := filepath.Join(repoRoot, "fixtures", "realworld", "async-lru")
	bundle, err := filepath.Abs(filepath.Join(fixture, "aio-libs__async-lru.bundle"))
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", bundle, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"env", "infer", "--repo", clone, "--commit", "5e92c702e92ae8a916962e3996a15cb848eddc0e", "--name", "aio-libs/async-lru"},
		{"env", "infer", "--instances", filepath.Join(fixture, "instances.jsonl"), "--repo", "aio-libs__async-lru=" + clone},
	} {
		stdout, stderr, code := runTender(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		var spec map[string]map[string]suite.EnvironmentDoc
		if err := yaml.Unmarshal([]byte(stdout), &spec); err != nil {
			t.Fatalf("%v: the spec does not decode: %v\n%s", args, err, stdout)
		}
		var env suite.EnvironmentDoc
		for _, e := range spec["aio-libs/async-lru"] {
			env = e
		}
		if env.Debian == nil || strings.Join(env.Debian.Packages, " ") != "python3-pytest-asyncio python3-pytest-timeout" ||
			env.Plugins == nil || strings.Join(*env.Plugins, " ") != "pytest_asyncio.plugin pytest_timeout" ||
			env.Ini == nil || (*env.Ini)["asyncio_mode"] != "auto" {
			t.Errorf("%v: proposed %+v\n%s", args, env, stdout)
		}
		if !strings.Contains(stdout, "Debian packages checked with apt-cache policy on this host (Debian") {
			t.Errorf("%v: the spec does not say how the packages were checked:\n%s", args, stdout)
		}
		specFile := filepath.Join(t.TempDir(), "spec.yaml")
		clitest.Must(t, os.WriteFile(specFile, []byte(stdout), 0o644))
		out := filepath.Join(t.TempDir(), "suite")
		if o, e, code := runTender(t, "import", "swebench", "--instances", filepath.Join(fixture, "instances.jsonl"),
			"--env", specFile, "--repo", "aio-libs__async-lru="+clone, "--out", out); code != exitOK {
			t.Errorf("import --env with the proposal: exit %d\n%s%s", code, o, e)
		}
	}
}

// TestEnvInferUsage: a bad command line is one line and exit 2.
func TestEnvInferUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"env", "infer"}, "usage: tender env infer"},
		{[]string{"env", "infer", "--repo", "x"}, "usage: tender env infer"},
		{[]string{"env", "infer", "--repo", "a=b", "--commit", "0123"}, "--repo: with --commit, give one clone's PATH"},
		{[]string{"env", "infer", "--repo", t.TempDir(), "--commit", "0123", "--name", "bad"}, `--name "bad": write OWNER/NAME`},
		{[]string{"env", "infer", "--repo", t.TempDir(), "--commit", "0123456789012345678901234567890123456789"},
			"not a git repository"},
	} {
		stdout, stderr, code := runTender(t, tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, %q%q; want exit 2 saying %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
}
