package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/internal/clitest"
)

// releaseYML runs .ci/release-action-yml.sh on file with ref; it returns the exit code and stderr.
func releaseYML(t *testing.T, ref, file string) (int, string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(repoRoot, ".ci", "release-action-yml.sh"))
	clitest.Must(t, err)
	cmd := exec.Command("bash", script, ref, file)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	clitest.Must(t, err)
	return 0, string(out)
}

// TestReleaseActionYML: the release's rewrite of action.yml changes runs.image alone, to the
// pushed image by digest; the result is valid metadata that actionlint accepts; it refuses a
// tag, a malformed digest, an injected line and a file rewritten already.
func TestReleaseActionYML(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	clitest.Must(t, err)
	root := t.TempDir()
	clitest.Must(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	file := filepath.Join(root, "action.yml")
	clitest.WriteFile(t, file, string(orig))
	ref := "registry.example.test/tender-grader/tender@sha256:" + strings.Repeat("0a", 32)
	if code, out := releaseYML(t, ref, file); code != 0 {
		t.Fatalf("rewrite: exit %d\n%s", code, out)
	}
	got, err := os.ReadFile(file)
	clitest.Must(t, err)
	want := strings.Replace(string(orig), "\n  image: Dockerfile\n", "\n  image: docker://"+ref+"\n", 1)
	if string(got) != want || want == string(orig) {
		t.Errorf("rewritten action.yml differs from the original in more than runs.image:\n%s", got)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(got)))
	dec.KnownFields(true)
	var md actionMetadata
	clitest.Must(t, dec.Decode(&md))
	if md.Runs.Using != "docker" || md.Runs.Image != "docker://"+ref {
		t.Errorf("runs: %+v", md.Runs)
	}
	clitest.WriteFile(t, filepath.Join(root, ".github", "workflows", "use.yml"), `on: push
jobs:
  grade:
    runs-on: ubuntu-latest
    steps:
      - uses: ./
        with: {command: grade, suite: suite, image-cache: .tender-images}
`)
	for _, e := range lintWorkflows(t, root) {
		t.Errorf("actionlint on the released action.yml: %s:%d: %s", e.Filepath, e.Line, e.Message)
	}

	for name, bad := range map[string]string{
		"a tag":           "registry.example.test/tender-grader/tender:v1.2.3",
		"a short digest":  "registry.example.test/tender-grader/tender@sha256:0a0a",
		"no repository":   "tender@sha256:" + strings.Repeat("0a", 32),
		"upper case":      "Registry.example.test/Tender/tender@sha256:" + strings.Repeat("0a", 32),
		"an injected key": "r.test/o/t@sha256:" + strings.Repeat("0a", 32) + "\n  args: [evil]",
	} {
		t.Run(name, func(t *testing.T) {
			clitest.WriteFile(t, file, string(orig))
			if code, out := releaseYML(t, bad, file); code != 2 || !strings.Contains(out, "digest") {
				t.Errorf("exit %d, want 2 naming the digest\n%s", code, out)
			}
			if b, _ := os.ReadFile(file); string(b) != string(orig) {
				t.Error("the refused rewrite changed the file")
			}
		})
	}
	clitest.WriteFile(t, file, want)
	if code, out := releaseYML(t, ref, file); code != 2 || !strings.Contains(out, "exactly one") {
		t.Errorf("a second rewrite: exit %d, want 2\n%s", code, out)
	}
}

// TestReleaseWorkflow checks what actionlint does not: actions pinned by SHA, a concurrency
// group, timeouts, no permission above the job that needs it, a build from the Dockerfile's
// pinned bases (no --build-arg), provenance attested for the pushed digest, and action.yml
// rewritten by the tested script.
func TestReleaseWorkflow(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", "release.yml"))
	clitest.Must(t, err)
	for _, m := range pinned.FindAllStringSubmatch(string(b), -1) {
		if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(m[2]) || m[3] == "" {
			t.Errorf("%s@%s: pin actions by full commit SHA with a # vX.Y.Z comment", m[1], m[2])
		}
	}
	var w struct {
		Permissions any `yaml:"permissions"`
		Concurrency any `yaml:"concurrency"`
		Jobs        map[string]struct {
			Timeout     int               `yaml:"timeout-minutes"`
			Permissions map[string]string `yaml:"permissions"`
			Steps       []struct {
				ID   string            `yaml:"id"`
				Uses string            `yaml:"uses"`
				Run  string            `yaml:"run"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	clitest.Must(t, yaml.Unmarshal(b, &w))
	if p, ok := w.Permissions.(map[string]any); !ok || len(p) != 0 || w.Concurrency == nil {
		t.Errorf("want permissions: {} at the top and a concurrency group; got %v, %v", w.Permissions, w.Concurrency)
	}
	var built, attested, rewritten bool
	for id, j := range w.Jobs {
		if j.Timeout == 0 {
			t.Errorf("job %s has no timeout-minutes", id)
		}
		for _, s := range j.Steps {
			if strings.Contains(s.Run, "docker build") {
				built = !strings.Contains(s.Run, "--build-arg")
			}
			if strings.HasPrefix(s.Uses, "actions/attest-build-provenance@") {
				attested = s.With["subject-digest"] == "${{ steps.push.outputs.digest }}" &&
					s.With["push-to-registry"] == "true" && j.Permissions["id-token"] == "write" &&
					j.Permissions["attestations"] == "write"
			}
			if strings.Contains(s.Run, "bash .ci/release-action-yml.sh") {
				rewritten = j.Permissions["contents"] == "write" && j.Permissions["id-token"] == ""
			}
		}
	}
	if !built || !attested || !rewritten {
		t.Errorf("built from the pinned bases %v, provenance attested for the pushed digest %v, action.yml "+
			"rewritten by the script in a job without id-token %v", built, attested, rewritten)
	}
}
