package sandbox

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandAndEnviron(t *testing.T) {
	l := NewLayout("/workspace", "/tender")
	got := l.Expand(
		[]string{
			"pytest",
			"--junitxml={junit}",
			"-c",
			"{assets}/pytest.ini",
			"{workspace}/x",
			"{tender}",
			"{unknown}",
			"$HOME",
		},
	)
	want := []string{
		"pytest",
		"--junitxml=/tender/out/junit.xml",
		"-c",
		"/tender/assets/pytest.ini",
		"/workspace/x",
		"/tender",
		"{unknown}",
		"$HOME",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("expand (-want +got):\n%s", diff)
	}
	env := l.Environ(map[string]string{"B": "2", "A": "1"})
	wantEnv := []string{"PATH=" + SafePath, "HOME=/tender/home", "TENDER_WORKSPACE=/workspace", "TENDER_DIR=/tender",
		"TENDER_JUNIT=/tender/out/junit.xml", "TENDER_ASSETS=/tender/assets", "A=1", "B=2"}
	if diff := cmp.Diff(wantEnv, env); diff != "" {
		t.Errorf("environ (-want +got):\n%s", diff)
	}
}

func TestValidateEnv(t *testing.T) {
	tests := []struct {
		k, v string
		ok   bool
	}{
		{"FOO", "bar", true}, {"_x1", "", true},
		{"TENDER_JUNIT", "/x", false}, {"TENDER_ANYTHING", "", false}, {"PATH", "/evil", false}, {"HOME", "/", false},
		{"A=B", "c", false}, {"1A", "c", false}, {"", "c", false}, {"A B", "c", false}, {"NUL", "a\x00b", false},
	}
	for _, tt := range tests {
		t.Run(tt.k, func(t *testing.T) {
			s := Spec{
				RunID:     "r",
				Name:      "n",
				Workspace: "/w",
				Command:   []string{"true"},
				Env:       map[string]string{tt.k: tt.v},
			}
			if err := s.Validate(); (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrBadSpec)) {
				t.Errorf("validate(%q=%q) = %v, want ok %v", tt.k, tt.v, err, tt.ok)
			}
		})
	}
}

func TestAllowEnvPassesOnlyNamed(t *testing.T) {
	host := map[string]string{"GITHUB_TOKEN": "secret", "NAMED": "v", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := host[k]; return v, ok }
	got, err := AllowEnv([]string{"NAMED", "EMPTY", "UNSET"}, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"NAMED": "v", "EMPTY": ""}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := AllowEnv([]string{"TENDER_JUNIT"}, func(string) (string, bool) { return "x", true }); !errors.Is(
		err,
		ErrBadSpec,
	) {
		t.Errorf("naming a reserved variable: err = %v", err)
	}
}

func TestRecipes(t *testing.T) {
	py, ok := BuiltinRecipe(ImagePytest + ":latest")
	if !ok || py.Ref() != "tender-verifier/pytest:latest" {
		t.Fatalf("pytest recipe: %+v %v", py, ok)
	}
	gor, ok := BuiltinRecipe(ImageGo)
	if !ok || py.Digest() == gor.Digest() {
		t.Fatalf("go recipe: %+v", gor)
	}
	if _, ok := BuiltinRecipe("python:3.12"); ok {
		t.Error("a pullable image was taken for a built-in recipe")
	}
	reordered := py
	reordered.Packages = []string{"python3-pytest", "python3"}
	reordered.Mirror = "http://another.test/debian"
	if reordered.Digest() != py.Digest() {
		t.Error("package order or mirror changed the digest")
	}
	more := py
	more.Packages = append(more.Packages, "git")
	if more.Digest() == py.Digest() {
		t.Error("a new package did not change the digest")
	}
	py.Packages[0] = "mutated"
	if again, _ := BuiltinRecipe(ImagePytest); again.Packages[0] == "mutated" {
		t.Error("BuiltinRecipe returned shared state")
	}
}
