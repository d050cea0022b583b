package envs

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tender-grader/tender/internal/clitest"
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
// --keyring; the sources of this machine (or DEBIAN_MIRROR and DEBIAN_KEYRING, as CI sets them)
// give both. TestBuildNetwork builds a debian environment with them, cold, by debootstrap, and
// grades a pair in it: that build was this test's own, and is now done once in the package.
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
	if here := debianMirror(t); here.URI == "" || here.SignedBy == "" {
		t.Errorf("this machine's mirror %+v: want a URI and a keyring", here)
	}
}
