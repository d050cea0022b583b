package suite

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tender-grader/tender/sandbox"
)

const pinnedID = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// envSuite is goodSuite with two environments: the repository's and one a second pair names.
const envSuite = `name: t
version: "1"
verifier:
  python_path: [src]
  setup: [["true"]]
environments:
  deb:
    debian:
      packages: [python3-tz]
  deb-again:
    debian: {packages: [python3-tz]}
  file:
    dockerfile: envs/file/Dockerfile
    python_path: []
  pinned:
    image: ` + pinnedID + `
    setup: []
repositories:
  r:
    fast_export: repos/r.fi
    environment: deb
pairs:
  - id: p1
    repository: r
    base_commit: 0123456789abcdef0123456789abcdef01234567
    issue: pairs/p1/issue.md
    patch: pairs/p1/patch.diff
    fail_to_pass: ["tests/test_a.py::test_a"]
  - id: p2
    repository: r
    environment: file
    base_commit: 0123456789abcdef0123456789abcdef01234567
    issue: pairs/p1/issue.md
    patch: pairs/p1/patch.diff
    fail_to_pass: ["tests/test_a.py::test_a"]
  - id: p3
    repository: r
    environment: pinned
    base_commit: 0123456789abcdef0123456789abcdef01234567
    issue: pairs/p1/issue.md
    patch: pairs/p1/patch.diff
    fail_to_pass: ["tests/test_a.py::test_a"]
`

var envFiles = map[string]string{"envs/file/Dockerfile": "FROM tender-verifier/pytest\n", "envs/file/marker.txt": "1\n"}

// TestLoadEnvironments: each pair runs in its environment's image with its settings; a
// pair's effective verifier is in its input digest; the names carry the recipe digests.
func TestLoadEnvironments(t *testing.T) {
	s, err := Load(writeLoadSuite(t, envSuite, envFiles), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deb, file := s.Environments["deb"], s.Environments["file"]
	if !slices.Contains(deb.Recipe.Packages, "python3-tz") || !slices.Contains(deb.Recipe.Packages, "python3-pytest") ||
		deb.Recipe.Suite != "bookworm" {
		t.Errorf("debian recipe %+v: want the pytest recipe plus python3-tz", deb.Recipe)
	}
	base, _ := sandbox.BuiltinRecipe(sandbox.ImagePytest)
	if deb.Digest == base.Digest() || deb.Ref != "tender-env/debian:"+deb.Digest[:12] || deb.Recipe.Name != deb.Ref {
		t.Errorf("debian env named %s (digest %s): want tender-env/debian:<its own digest>", deb.Ref, deb.Digest)
	}
	if again := s.Environments["deb-again"]; again.Ref != deb.Ref {
		t.Errorf("two environments with one recipe are two images: %s and %s", deb.Ref, again.Ref)
	}
	if file.Context != "envs/file" || file.Ref != "tender-env/dockerfile:"+file.Digest[:12] {
		t.Errorf("dockerfile env %+v", file)
	}
	v1, v2, v3 := s.VerifierFor(s.Pairs[0]), s.VerifierFor(s.Pairs[1]), s.VerifierFor(s.Pairs[2])
	if v1.Image != deb.Ref || !slices.Equal(v1.PythonPath, []string{"src"}) || len(v1.Setup) != 1 {
		t.Errorf("p1 (repository's environment) runs %+v", v1)
	}
	if v2.Image != file.Ref || len(v2.PythonPath) != 0 || len(v2.Setup) != 1 {
		t.Errorf("p2 (python_path: [] clears it) runs %+v", v2)
	}
	if v3.Image != pinnedID || !slices.Equal(v3.PythonPath, []string{"src"}) || len(v3.Setup) != 0 {
		t.Errorf("p3 (setup: [] clears it) runs %+v", v3)
	}
	if got := s.UsedEnvironments(s.Pairs); len(got) != 3 {
		t.Errorf("used environments: %d, want 3", len(got))
	}
	if s.Pairs[0].InputDigest == s.Pairs[1].InputDigest {
		t.Error("pairs with different verifiers share an input digest: --resume would not notice")
	}

	// A change to the build context renames the image and changes the input digest.
	more := map[string]string{"envs/file/marker.txt": "2\n"}
	for k, v := range envFiles {
		if _, ok := more[k]; !ok {
			more[k] = v
		}
	}
	s2, err := Load(writeLoadSuite(t, envSuite, more), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Environments["file"].Ref == file.Ref || s2.Pairs[1].InputDigest == s.Pairs[1].InputDigest {
		t.Error("a changed build context kept the image name or the input digest")
	}
	if s2.Pairs[0].InputDigest != s.Pairs[0].InputDigest {
		t.Error("a change to another environment's context changed p1's input digest")
	}
}

// TestLoadWithoutEnvironments: a suite of today's format runs its pairs in the suite's
// verifier, untouched.
func TestLoadWithoutEnvironments(t *testing.T) {
	s, err := Load(writeLoadSuite(t, goodSuite, nil), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := s.VerifierFor(s.Pairs[0])
	if v.Image != DefaultImage || len(s.Environments) != 0 || s.Pairs[0].Environment != "" ||
		len(s.UsedEnvironments(s.Pairs)) != 0 {
		t.Errorf("verifier %+v, environments %v", v, s.Environments)
	}
}

// TestMalformedEnvironments: every bad environment setting is one line naming its field.
func TestMalformedEnvironments(t *testing.T) {
	sub := func(old, new string) string { return strings.Replace(envSuite, old, new, 1) }
	tests := []struct {
		name, manifest, field string
		want                  []string
	}{
		{
			"unknown pair environment",
			sub("environment: file", "environment: nope"),
			"pairs[1].environment",
			[]string{`"nope"`, "known: deb, deb-again, file, pinned"},
		},
		{
			"unknown repository environment",
			sub("environment: deb", "environment: nope"),
			"repositories.r.environment",
			[]string{`"nope"`},
		},
		{
			"two kinds",
			sub("    dockerfile: envs/file/Dockerfile", "    dockerfile: envs/file/Dockerfile\n    image: "+pinnedID),
			"environments.file",
			[]string{"sets 2", "exactly one"},
		},
		{"no kind", sub("    image: "+pinnedID+"\n", ""), "environments.pinned", []string{"sets 0"}},
		{
			"bad environment name",
			sub("  deb:\n", "  \"-deb\":\n"),
			"environments.-deb",
			[]string{"not a valid environment name"},
		},
		{
			"unpinned image",
			sub(pinnedID, "tender-verifier/pytest:latest"),
			"environments.pinned.image",
			[]string{"not pinned", "sha256"},
		},
		{"short image id", sub(pinnedID, "sha256:0123"), "environments.pinned.image", []string{"not pinned"}},
		{
			"dockerfile missing",
			sub("envs/file/Dockerfile", "envs/file/Nope"),
			"environments.file.dockerfile",
			[]string{"does not exist"},
		},
		{
			"dockerfile escapes",
			sub("envs/file/Dockerfile", "../Dockerfile"),
			"environments.file.dockerfile",
			[]string{`".."`},
		},
		{
			"dockerfile absolute",
			sub("envs/file/Dockerfile", "/etc/Dockerfile"),
			"environments.file.dockerfile",
			[]string{"relative"},
		},
		{
			"dockerfile at the top",
			sub("envs/file/Dockerfile", "pairs/p1/issue.md\n  x:\n    dockerfile: tender.yaml"),
			"environments.x.dockerfile",
			[]string{"build context", "directory of its own"},
		},
		{
			"context holds a pair's file",
			sub("envs/file/Dockerfile", "pairs/p1/issue.md"),
			"environments.file.dockerfile",
			[]string{"pairs/p1/issue.md", "pair p1"},
		},
		{
			"bad package",
			sub("[python3-tz]", "[\"python3-tz; rm -rf /\"]"),
			"environments.deb.debian.packages[0]",
			[]string{"not a Debian package name"},
		},
		{
			"option-like package",
			sub("[python3-tz]", "[--allow-unauthenticated]"),
			"environments.deb.debian.packages[0]",
			[]string{"not a Debian package name"},
		},
		{
			"package already there",
			sub("[python3-tz]", "[python3-pytest]"),
			"environments.deb.debian.packages[0]",
			[]string{"already"},
		},
		{
			"bad debian suite",
			sub("      packages: [python3-tz]", "      suite: \"bookworm main\"\n      packages: [python3-tz]"),
			"environments.deb.debian.suite",
			[]string{"not a Debian suite"},
		},
		{
			"unknown environment key",
			sub("    python_path: []", "    python_path: []\n    packages: [x]"),
			"",
			[]string{`unknown key "packages"`},
		},
		{
			"empty environment setup",
			sub("    setup: []", "    setup: [[]]"),
			"environments.pinned.setup[0]",
			[]string{"empty"},
		},
		{
			"python_path absolute",
			sub("python_path: [src]", "python_path: [/src]"),
			"verifier.python_path[0]",
			[]string{"clean relative directory"},
		},
		{
			"python_path dotdot",
			sub("python_path: [src]", "python_path: [../src]"),
			"verifier.python_path[0]",
			[]string{"clean relative directory"},
		},
		{
			"python_path unclean",
			sub("python_path: [src]", "python_path: [src/../lib]"),
			"verifier.python_path[0]",
			[]string{"clean relative directory"},
		},
		{
			"python_path with a colon",
			sub("python_path: [src]", "python_path: [\"src:lib\"]"),
			"verifier.python_path[0]",
			[]string{"PYTHONPATH", "rename"},
		},
		{"python_path dot", sub("python_path: [src]", "python_path: [.]"), "verifier.python_path[0]", nil},
		{
			"python_path twice",
			sub("python_path: [src]", "python_path: [src, src]"),
			"verifier.python_path[1]",
			[]string{"twice"},
		},
		{
			"environment python_path",
			sub("    python_path: []", "    python_path: [a//b]"),
			"environments.file.python_path[0]",
			nil,
		},
		{
			"python_path for go",
			sub("  python_path: [src]", "  runner: go"),
			"environments.deb.debian",
			[]string{"runner is go"},
		},
		{
			"environment python_path for go",
			strings.Replace(
				goodSuite,
				"pairs:",
				"verifier: {runner: go}\nenvironments:\n  e: {image: "+pinnedID+", python_path: [src]}\npairs:",
				1,
			),
			"environments.e.python_path",
			[]string{"runner: pytest only"},
		},
		{
			"PYTHONPATH in env",
			sub("  setup: [[\"true\"]]", "  setup: [[\"true\"]]\n  env: {PYTHONPATH: src}"),
			"verifier.env.PYTHONPATH",
			[]string{"python_path"},
		},
		{
			"other PYTHON var in env",
			sub("  setup: [[\"true\"]]", "  setup: [[\"true\"]]\n  env: {PYTHONSAFEPATH: \"1\"}"),
			"verifier.env.PYTHONSAFEPATH",
			[]string{"Tender sets the interpreter's flags itself"},
		},
		{
			"PYTHONPATH passed",
			sub("  setup: [[\"true\"]]", "  setup: [[\"true\"]]\n  pass_env: [PYTHONPATH]"),
			"verifier.pass_env[0]",
			[]string{"python_path"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := loadNoPanic(t, writeLoadSuite(t, tt.manifest, envFiles))
			if !errors.Is(err, ErrBadSuite) {
				t.Fatalf("Load: %v, want an error wrapping ErrBadSuite", err)
			}
			msg := err.Error()
			var le *LoadError
			if strings.Contains(msg, "\n") || !errors.As(err, &le) || le.Field != tt.field {
				t.Errorf("error %q: want one line for field %q, got %#v", msg, tt.field, le)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

// TestEnvironmentContextCap: a build context the size of a real stack (pyvista's VTK, 265 MiB)
// loads; one over MaxEnvContext is refused, before any file is digested, by a line that names
// the environment, the cap and what to do.
func TestEnvironmentContextCap(t *testing.T) {
	dir := writeLoadSuite(t, envSuite, envFiles)
	sparseFile(t, filepath.Join(dir, "envs", "file", "vtk.tar"), 300<<20)
	s, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatalf("a 300 MiB build context: %v", err)
	}
	if s.Files["envs/file/vtk.tar"] == "" {
		t.Error("the stack is not among the suite's digested files")
	}
	sparseFile(t, filepath.Join(dir, "envs", "file", "vtk.tar"), MaxEnvContext)
	_, err = Load(dir, LoadOptions{})
	var le *LoadError
	if !errors.As(err, &le) || le.Field != "environments.file.dockerfile" ||
		!strings.Contains(le.Msg, "envs/file/ holds more than 2 GiB, Tender's cap for one (MaxEnvContext)") ||
		!strings.Contains(le.Msg, "network:") {
		t.Errorf("a context over the cap: %v", err)
	}
}

func sparseFile(t *testing.T, name string, size int64) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}
