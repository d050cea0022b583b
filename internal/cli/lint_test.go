package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/internal/clitest"
)

// lintWorkflows runs actionlint (the library, offline, without shellcheck or pyflakes) on the
// workflows of the project at root. Local actions (uses: ./) are read from root/action.yml, so
// the Action's metadata is checked against every use of it.
func lintWorkflows(t *testing.T, root string) []*actionlint.Error {
	t.Helper()
	proj, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l, err := actionlint.NewLinter(
		&out,
		&actionlint.LinterOptions{Shellcheck: "", Pyflakes: "", WorkingDir: root, Oneline: true},
	)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows under %s: %v", root, err)
	}
	errs, err := l.LintFiles(files, proj)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

func TestWorkflowsAndActionLint(t *testing.T) {
	for _, e := range lintWorkflows(t, repoRoot) {
		t.Errorf("%s:%d:%d: %s [%s]", e.Filepath, e.Line, e.Column, e.Message, e.Kind)
	}
}

// TestLintCatchesAMisuseOfTheAction plants a workflow that passes an input action.yml does not
// declare, to show the lint really reads the Action's metadata.
func TestLintCatchesAMisuseOfTheAction(t *testing.T) {
	root := t.TempDir()
	clitest.Must(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	for _, name := range []string{"action.yml", "Dockerfile"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, name))
		clitest.Must(t, err)
		clitest.WriteFile(t, filepath.Join(root, name), string(b))
	}
	clitest.WriteFile(t, filepath.Join(root, ".github", "workflows", "bad.yml"), `on: push
jobs:
  grade:
    runs-on: ubuntu-latest
    steps:
      - uses: ./
        with:
          command: grade
          tokne: oops
`)
	errs := lintWorkflows(t, root)
	if len(errs) != 1 || !strings.Contains(errs[0].Message, `input "tokne" is not defined`) {
		t.Errorf("want exactly the undeclared input flagged, got %v", errs)
	}
}

// actionMetadata is action.yml, decoded strictly.
type actionMetadata struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string `yaml:"description"`
		Required    bool   `yaml:"required"`
		Default     string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
	} `yaml:"outputs"`
	Runs struct {
		Using string   `yaml:"using"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
	} `yaml:"runs"`
}

func TestActionMetadata(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot, "action.yml"))
	clitest.Must(t, err)
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	var md actionMetadata
	clitest.Must(t, dec.Decode(&md))
	if md.Runs.Using != "docker" || md.Runs.Image != "Dockerfile" || len(md.Runs.Args) != 0 {
		t.Errorf("runs: %+v; want a Docker action built from Dockerfile, run without args (Action mode)", md.Runs)
	}
	wantInputs := []string{"command", "suite", "repos", "concurrency", "shard", "publish", "token",
		"approval-environment", "signing-key", "fail-on", "sha", "check-name", "annotations", "job-summary",
		"baseline", "comment", "pr", "fail-on-empty", "mirror", "keyring", "image-cache"}
	for _, in := range wantInputs {
		if _, ok := md.Inputs[in]; !ok {
			t.Errorf("input %s is not declared", in)
		}
	}
	for name, in := range md.Inputs {
		if in.Description == "" || in.Required {
			t.Errorf("input %s: needs a description and a default, not required: true", name)
		}
	}
	var outputs []string
	for name := range md.Outputs {
		outputs = append(outputs, name)
	}
	slices.Sort(outputs)
	want := []string{
		"bundle",
		"check-run-url",
		"comment-url",
		"conclusion",
		"error",
		"image-key",
		"improved",
		"integrity-violation",
		"json",
		"regressed",
		"resolved",
		"results-file",
		"total",
		"unresolved",
	}
	if !slices.Equal(outputs, want) {
		t.Errorf("outputs %v, want %v (what runAction sets)", outputs, want)
	}
	if md.Inputs["publish"].Default != "false" || md.Inputs["token"].Default != "" {
		t.Error("publish must default to false and token to empty")
	}
}

// TestDockerfile checks the properties the issue asks of the Action's image.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	clitest.Must(t, err)
	var froms []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "FROM ") {
			froms = append(froms, l)
		}
	}
	if len(froms) < 2 || !strings.Contains(froms[0], "${GO_IMAGE}") ||
		!strings.Contains(froms[len(froms)-1], "${BASE_IMAGE}") {
		t.Errorf("want a multi-stage build from overridable ${GO_IMAGE} and ${BASE_IMAGE}: %q", froms)
	}
	// The bases are pinned by digest, and the Go image is go.mod's Go.
	args := regexp.MustCompile(`(?m)^ARG (GO_IMAGE|BASE_IMAGE)=(\S+)$`).FindAllStringSubmatch(string(b), -1)
	pinnedBase := regexp.MustCompile(`^[a-z0-9._/-]+:[a-z0-9._-]+@sha256:[0-9a-f]{64}$`)
	if len(args) != 2 {
		t.Errorf("want ARG GO_IMAGE=... and ARG BASE_IMAGE=... defaults, got %q", args)
	}
	mod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	clitest.Must(t, err)
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}
	for _, a := range args {
		if !pinnedBase.MatchString(a[2]) {
			t.Errorf("ARG %s=%s: pin the base as NAME:TAG@sha256:DIGEST", a[1], a[2])
		}
		if a[1] == "GO_IMAGE" && !strings.HasPrefix(a[2], "golang:"+string(goLine[1])+"-") {
			t.Errorf("ARG GO_IMAGE=%s: want the golang image of go.mod's go %s", a[2], goLine[1])
		}
	}
	final := string(b)[strings.LastIndex(string(b), "FROM "):]
	if !strings.Contains(final, "git") || !strings.Contains(final, `ENTRYPOINT ["/usr/local/bin/tender"]`) {
		t.Error("the final stage must have git and run tender without arguments")
	}
}
