package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/sandbox"
)

func TestActionImageArgs(t *testing.T) {
	in := actionInputs{Command: "image", Suite: "suite", Repos: []string{"calc=calc"}, Mirror: "http://m.test/debian",
		Keyring: "k.gpg", ImageCache: ".tender-images", Out: "out"}
	args, _ := in.args()
	want := []string{"image", "build", "--suite", "suite", "--repo", "calc=calc", "--mirror", "http://m.test/debian",
		"--keyring", "k.gpg", "--image-cache", ".tender-images"}
	if d := cmp.Diff(want, args); d != "" {
		t.Errorf("image args (-want +got):\n%s", d)
	}
	args, _ = actionInputs{Command: "image"}.args()
	if d := cmp.Diff([]string{"image", "build"}, args); d != "" {
		t.Errorf("image args without a suite (-want +got):\n%s", d)
	}
	in.Command = "grade"
	args, _ = in.args()
	want = []string{"grade", "suite", "--out", "out", "--repo", "calc=calc", "--mirror", "http://m.test/debian",
		"--keyring", "k.gpg", "--image-cache", ".tender-images"}
	if d := cmp.Diff(want, args); d != "" {
		t.Errorf("grade args (-want +got):\n%s", d)
	}
}

// TestActionImageInputsChecked: the image inputs are checked before any engine is asked, with
// one line naming the flag, and image-key is set as soon as the suite loads.
func TestActionImageInputsChecked(t *testing.T) {
	demo := filepath.Join(repoRoot, "fixtures", "demo")
	s, err := loadSuite(demo, nil)
	clitest.Must(t, err)
	file := filepath.Join(t.TempDir(), "a-file")
	clitest.WriteFile(t, file, "x")
	for name, tc := range map[string]struct {
		inputs map[string]string
		want   string
	}{
		"image: keyring without mirror": {map[string]string{"command": "image", "suite": demo, "keyring": file},
			"--keyring is for --mirror"},
		"grade: keyring without mirror": {map[string]string{"command": "grade", "suite": demo, "keyring": file,
			"out": filepath.Join(t.TempDir(), "out")}, "--keyring is for --mirror"},
		"image: cache is a file": {map[string]string{"command": "image", "suite": demo, "image-cache": file},
			"--image-cache " + file + ": not a directory"},
		"image: mirror not a URL": {map[string]string{"command": "image", "suite": demo, "mirror": "deb.example"},
			`--mirror "deb.example"`},
	} {
		t.Run(name, func(t *testing.T) {
			r := clitest.NewRunner(t, Main, "https://api.example.test", tc.inputs, map[string]any{})
			code, stdout, stderr := r.Run(t)
			if code != exitUsage || !strings.Contains(stdout, "::error::") || !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, exitUsage, tc.want, stdout, stderr)
			}
			if got := r.Outputs(t)["image-key"]; got != suiteImageKey(s) {
				t.Errorf("image-key %q, want %q", got, suiteImageKey(s))
			}
		})
	}
}

// TestSuiteImageKey: the key the Action sets is what `tender image digest --suite` prints, and
// it follows the recipes a suite's grade builds.
func TestSuiteImageKey(t *testing.T) {
	demo := filepath.Join(repoRoot, "fixtures", "demo")
	s, err := loadSuite(demo, nil)
	clitest.Must(t, err)
	key := suiteImageKey(s)
	stdout, stderr, code := runTender(t, "image", "digest", "--suite", demo)
	if code != exitOK || strings.TrimSpace(stdout) != key || !strings.HasPrefix(key, "tender-images-") {
		t.Fatalf("image digest --suite: exit %d, %q (key %s)\n%s", code, stdout, key, stderr)
	}
	if rs := suiteRecipes(s); len(rs) != 1 || rs[0].Name != sandbox.ImagePytest {
		t.Errorf("demo's recipes: %+v, want tender-verifier/pytest alone", rs)
	}
	s.Verifier.Image = sandbox.ImageGo
	if suiteImageKey(s) == key {
		t.Error("the key did not change with the verifier image's recipe")
	}
	for _, p := range s.Pairs {
		p.Environment = "elsewhere"
	}
	if len(suiteRecipes(s)) != 0 {
		t.Error("a verifier image no pair runs in is in the recipes")
	}
	if _, _, code := runTender(t, "image", "digest", "--suite", demo, "--image-cache", t.TempDir()); code != exitUsage {
		t.Errorf("image digest --image-cache: exit %d, want %d", code, exitUsage)
	}
}
