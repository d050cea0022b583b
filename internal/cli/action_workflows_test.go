package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/internal/clitest"
)

// workflow is the part of a workflow file these checks read.
type workflow struct {
	Concurrency any `yaml:"concurrency"`
	Jobs        map[string]struct {
		If          string `yaml:"if"`
		Timeout     int    `yaml:"timeout-minutes"`
		Environment string `yaml:"environment"`
		Steps       []struct {
			Name string            `yaml:"name"`
			If   string            `yaml:"if"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", name))
	clitest.Must(t, err)
	var w workflow
	clitest.Must(t, yaml.Unmarshal(b, &w))
	return w
}

// pinned is a third-party action pinned by a full commit SHA, with its version in a comment.
var pinned = regexp.MustCompile(`(?m)^\s*(?:- )?uses: ([\w.-]+/[\w./-]+)@([^\s#]+)(\s+# v\d+\.\d+\.\d+)?\s*$`)

// TestActionWorkflowsRunOnHostedRunners checks what actionlint does not: actions pinned by SHA
// with a version comment, a concurrency group, a timeout on every job, uploads, merge and
// publish that run after a failed shard, a Debian mirror for the image build, and a signature
// check with a public key.
func TestActionWorkflowsRunOnHostedRunners(t *testing.T) {
	for _, name := range []string{"ci.yml", "nightly.yml"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", name))
			clitest.Must(t, err)
			for _, m := range pinned.FindAllStringSubmatch(string(b), -1) {
				if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(m[2]) || m[3] == "" {
					t.Errorf("%s@%s: pin actions by full commit SHA with a # vX.Y.Z comment", m[1], m[2])
				}
			}
			w := readWorkflow(t, name)
			if w.Concurrency == nil {
				t.Error("no concurrency group")
			}
			verified := false
			for id, j := range w.Jobs {
				if j.Timeout == 0 {
					t.Errorf("job %s has no timeout-minutes", id)
				}
				for _, s := range j.Steps {
					if strings.HasPrefix(s.Uses, "actions/upload-artifact@") &&
						!strings.Contains(s.If, "!cancelled()") {
						t.Errorf(
							"job %s: upload %q does not run after a failed step (if: ${{ !cancelled() }})",
							id,
							s.Name,
						)
					}
					if strings.Contains(s.Run, "image build") && !strings.Contains(s.Run, "--mirror") {
						t.Errorf("job %s: %q builds the verifier image without the Debian mirror", id, s.Name)
					}
					if strings.Contains(s.Run, "verify") && strings.Contains(s.Run, "--key") ||
						s.Uses == "./" && s.With["command"] == "verify" && s.With["public-key"] != "" {
						verified = true
					}
				}
				if (id == "merge" || id == "publish") && !strings.Contains(j.If, "!cancelled()") {
					t.Errorf("job %s does not run when a shard failed (if: ${{ !cancelled() }})", id)
				}
			}
			if !verified {
				t.Error("no step verifies a bundle's signature with a public key")
			}
		})
	}
}

func TestActionCommittedPublicKeyLoads(t *testing.T) {
	r := &pubRun{env: map[string]string{}}
	dir := sealPubBundle(t, pubResults("demo", "", "a"), nil)
	err := cmdVerify(
		t.Context(),
		r.inv(),
		[]string{dir, "--key", filepath.Join(repoRoot, ".github", "tender-signing.pub")},
	)
	// The bundle is unsigned: the key must load, and the verification refuse the bundle for
	// the missing signature (exit 1), not for the key (exit 2).
	if code := exitCode(t.Context(), err); code != exitFailure || !strings.Contains(err.Error(), "sign") {
		t.Errorf("verify with the committed key: exit %d, %v", code, err)
	}
	t.Logf("%v", err)
}
