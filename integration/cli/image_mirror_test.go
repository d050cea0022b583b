package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/sandbox"
)

// ubuntuRunnerSources is the apt configuration of GitHub's hosted Ubuntu runners: Ubuntu
// suites behind mirror+file: URIs, and no Debian suite.
var ubuntuRunnerSources = map[string]string{
	"etc/apt/sources.list": "deb mirror+file:/etc/apt/apt-mirrors.txt noble main restricted\n" +
		"deb mirror+file:/etc/apt/apt-mirrors.txt noble-updates main restricted\n" +
		"deb mirror+file:/etc/apt/apt-mirrors.txt noble universe\n" +
		"deb mirror+file:/etc/apt/apt-mirrors.txt noble-security main restricted\n",
	"etc/apt/apt-mirrors.txt":               "http://azure.ubuntu-mirror.example.test/ubuntu/\tpriority:1\n",
	"etc/apt/sources.list.d/vendor.list":    "deb [arch=amd64] https://vendor.example.test/ubuntu/24.04/prod noble main\n",
	"etc/apt/sources.list.d/ubuntu.sources": "Types: deb\nURIs: mirror+file:/etc/apt/apt-mirrors.txt\nSuites: noble noble-updates\nComponents: main universe\n",
}

// debianMirror is the Debian mirror and keyring debootstrap builds use here: DEBIAN_MIRROR and
// DEBIAN_KEYRING as CI on an Ubuntu runner sets them, else this machine's own apt sources.
func debianMirror(t *testing.T) sandbox.AptSource {
	t.Helper()
	here := sandbox.AptSource{URI: os.Getenv("DEBIAN_MIRROR"), SignedBy: os.Getenv("DEBIAN_KEYRING")}
	if here.URI != "" {
		return here
	}
	here, err := sandbox.FindMirror("/", "bookworm")
	if err != nil || here.SignedBy == "" {
		t.Fatalf("this machine's own Debian mirror and keyring: %+v, %v (or set DEBIAN_MIRROR and DEBIAN_KEYRING)",
			here, err)
	}
	return here
}

// TestImageBuildWithMirror is the image build of a host whose apt sources are an Ubuntu
// runner's: the sources name no Debian mirror, and the error says to pass --mirror and
// --keyring. With them (this machine's own Debian mirror and keyring, read from its apt
// sources, or DEBIAN_MIRROR and DEBIAN_KEYRING as CI sets them) a suite's debian environment with one extra package (python3-tz) really builds
// with debootstrap, and a pair that imports it is graded resolved in it. The image is removed
// before and after (TestBuildNetwork's pip environment is the other debootstrap build, kept).
func TestImageBuildWithMirror(t *testing.T) {
	root := t.TempDir()
	clitest.WriteFiles(t, root, ubuntuRunnerSources)
	_, err := sandbox.FindMirror(root, "bookworm")
	if !errors.Is(err, sandbox.ErrNoMirror) || !strings.Contains(err.Error(), "pass --mirror URL") ||
		!strings.Contains(err.Error(), "--keyring FILE") {
		t.Fatalf(
			"FindMirror on an Ubuntu runner's sources: %v; want ErrNoMirror saying to pass --mirror and --keyring",
			err,
		)
	}
	t.Logf("on an Ubuntu runner: %v", err)
	here := debianMirror(t)

	suiteDir := t.TempDir()
	base := bundleRepo(
		t,
		map[string]string{
			"tests/test_tz.py": "import pytz\n\n\ndef test_utc():\n    assert pytz.utc.zone == \"UTC\"\n",
		},
		filepath.Join(suiteDir, "repos", "tz.bundle"),
	)
	clitest.WriteFiles(t, suiteDir, map[string]string{"issue.md": "Needs pytz.\n", "empty.diff": "",
		"gold.diff": "diff --git a/NOTES b/NOTES\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES\n@@ -0,0 +1 @@\n+uses pytz\n",
		"tender.yaml": "name: tz\nversion: \"1\"\nenvironments:\n  tz:\n    debian:\n      packages: [python3-tz]\n" +
			"repositories:\n  tz: {bundle: repos/tz.bundle, environment: tz}\npairs:\n" +
			fmt.Sprintf(
				"  - id: tz\n    repository: tz\n    base_commit: %s\n    issue: issue.md\n    patch: gold.diff\n    fail_to_pass: [tests/test_tz.py::test_utc]\n",
				base,
			)})
	s, err := suite.Load(suiteDir, suite.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := s.Environments["tz"].Ref
	removeImage := func() { exec.Command("docker", "image", "rm", "-f", ref).Run() }
	removeImage()
	t.Cleanup(removeImage)

	stdout, stderr, code := runTender(
		t,
		"image",
		"build",
		"--suite",
		suiteDir,
		"--mirror",
		here.URI,
		"--keyring",
		here.SignedBy,
	)
	if code != cli.ExitOK || !strings.Contains(stderr, "debootstrap") ||
		!strings.HasPrefix(stdout, "tz "+ref+" sha256:") {
		t.Fatalf("image build --suiteDir --mirror: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Logf("built: %s", strings.TrimSpace(stdout))
	results, _ := gradeOK(t, suiteDir)
	if len(results) != 1 || results[0].Verdict != report.Resolved ||
		results[0].Checks[0].ImageID != strings.Fields(stdout)[2] {
		t.Fatalf("graded in the environment: %+v", results)
	}
}
