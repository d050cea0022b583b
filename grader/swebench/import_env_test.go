package swebench

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader/suite"
)

const pinned = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// goodSpec maps one repository's versions to the three kinds of environment, with a "*" entry
// for the others.
const goodSpec = `acme/calc:
  "0.3":
    debian: {packages: [python3-tz]}
  "0.4":
    dockerfile: envs/calc/Dockerfile
  "*":
    image: ` + pinned + `
`

func TestReadEnvSpec(t *testing.T) {
	spec, err := readEnvSpec(strings.NewReader(goodSpec), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]suite.EnvironmentDoc{"acme/calc": {
		"0.3": {Debian: &suite.DebianDoc{Packages: []string{"python3-tz"}}},
		"0.4": {Dockerfile: "envs/calc/Dockerfile"},
		"*":   {Image: pinned},
	}}
	if diff := cmp.Diff(want, spec.repos); diff != "" || spec.file != "spec.yaml" {
		t.Errorf("spec of %s (-want +got):\n%s", spec.file, diff)
	}
	if spec, err := readEnvSpec(nil, ""); err != nil || spec.repos != nil {
		t.Errorf("no --env: %+v, %v; want no spec", spec, err)
	}
}

// TestReadEnvSpecRefuses: every spec that cannot be used is one error that names --env and the
// file, wraps ErrBadSuite, and says what to write.
func TestReadEnvSpecRefuses(t *testing.T) {
	for _, tt := range []struct{ name, spec, want string }{
		{"empty", "", "is empty; map OWNER/NAME to versions"},
		{"not yaml", "acme/calc: [", "write OWNER/NAME: {VERSION: {debian: ...}}"},
		{"unknown key", "acme/calc:\n  \"1\":\n    debain: {}\n", "field debain not found"},
		{"not owner/name", "calc:\n  \"1\":\n    image: " + pinned + "\n", `key "calc" is not OWNER/NAME`},
		{"no kind", "acme/calc:\n  \"1\": {}\n",
			`acme/calc version "1": give exactly one of debian, dockerfile or image (it has 0)`},
		{"two kinds", "acme/calc:\n  \"1\":\n    image: " + pinned + "\n    dockerfile: D\n", "(it has 2)"},
		{"too big", "acme/calc: {}\n#" + strings.Repeat("x", suite.MaxSuiteFile), "is larger than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readEnvSpec(strings.NewReader(tt.spec), "spec.yaml")
			if !errors.Is(err, suite.ErrBadSuite) || !strings.Contains(err.Error(), "--env spec.yaml") ||
				!strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %v, want one line with --env spec.yaml and %q", err, tt.want)
			}
		})
	}
}

// TestEnvironmentNames: an instance runs in its version's own entry, else in the "*" entry,
// which every version it covers shares; without --env it runs in the suite's verifier.
func TestEnvironmentNames(t *testing.T) {
	spec, err := readEnvSpec(strings.NewReader(goodSpec), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	im := &importer{spec: spec, envs: map[string]suite.EnvironmentDoc{}}
	for _, tt := range []struct{ repo, version, want, err string }{
		{"acme/calc", "0.3", "acme__calc-0.3", ""},
		{"acme/calc", "0.4", "acme__calc-0.4", ""},
		{"acme/calc", "1.0", "acme__calc-any", ""},
		{"acme/calc", "2.0", "acme__calc-any", ""},
		{"acme/other", "0.3", "", `--env spec.yaml has no entry for repository acme/other, and Tender's table of known environments has none either; add acme/other: {"*": {debian:`},
	} {
		got, err := im.environment(Instance{InstanceID: "i", Repo: tt.repo, Version: Version(tt.version)})
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s %s: %q, %v; want %q, %q", tt.repo, tt.version, got, err, tt.want, tt.err)
		}
	}
	kept := slices.Sorted(maps.Keys(im.envs))
	if diff := cmp.Diff([]string{"acme__calc-0.3", "acme__calc-0.4", "acme__calc-any"}, kept); diff != "" {
		t.Errorf("environments kept (-want +got):\n%s", diff)
	}

	noStar, _ := readEnvSpec(strings.NewReader("acme/calc:\n  \"0.3\":\n    image: "+pinned+"\n"), "spec.yaml")
	im = &importer{spec: noStar, envs: map[string]suite.EnvironmentDoc{}}
	if _, err := im.environment(Instance{Repo: "acme/calc", Version: "0.4"}); err == nil ||
		!strings.Contains(err.Error(), `has no entry for acme/calc version "0.4"; add one, or a "*" entry`) {
		t.Errorf("a version without an entry and no \"*\": %v", err)
	}
	odd, _ := readEnvSpec(strings.NewReader("acme/calc:\n  \"1/2\":\n    image: "+pinned+"\n"), "spec.yaml")
	im = &importer{spec: odd, envs: map[string]suite.EnvironmentDoc{}}
	if _, err := im.environment(Instance{Repo: "acme/calc", Version: "1/2"}); err == nil ||
		!strings.Contains(
			err.Error(),
			`version "1/2" makes the environment name "acme__calc-1/2", which is not a valid`,
		) {
		t.Errorf("a version that makes no valid name: %v", err)
	}
	im = &importer{envs: map[string]suite.EnvironmentDoc{}}
	if got, err := im.environment(Instance{Repo: "acme/calc", Version: "0.3"}); got != "" || err != nil {
		t.Errorf("without --env: %q, %v; want the suite's verifier", got, err)
	}
}

// TestWriteEnvironments: only the environments some pair uses go into the suite; a
// dockerfile's directory (relative to the spec file) is copied whole to envs/NAME/ as its
// build context, and the suite names the copy.
func TestWriteEnvironments(t *testing.T) {
	specDir := t.TempDir()
	writeTree(t, specDir, map[string]string{
		"envs/calc/Dockerfile": "FROM tender-verifier/pytest\nCOPY req.txt /\n", "envs/calc/req.txt": "pytz\n",
		"envs/calc/sub/more.txt": "1\n",
	})
	spec, err := readEnvSpec(strings.NewReader(goodSpec), filepath.Join(specDir, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	im := &importer{spec: spec, envs: map[string]suite.EnvironmentDoc{}}
	for _, v := range []string{"0.3", "0.4", "9"} {
		if _, err := im.environment(Instance{Repo: "acme/calc", Version: Version(v)}); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	doc := &suite.SuiteDoc{Pairs: []suite.PairDoc{{ID: "a", Environment: "acme__calc-0.4"}, {ID: "b"},
		{ID: "c", Environment: "acme__calc-any"}, {ID: "d", Environment: "acme__calc-any"}}}
	if err := im.writeEnvironments(out, doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]suite.EnvironmentDoc{
		"acme__calc-0.4": {Dockerfile: "envs/acme__calc-0.4/Dockerfile"},
		"acme__calc-any": {Image: pinned},
	}
	if diff := cmp.Diff(want, doc.Environments); diff != "" {
		t.Errorf("environments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"acme__calc-0.4", "acme__calc-any"}, im.sum.Environments); diff != "" {
		t.Errorf("summary's environments (-want +got):\n%s", diff)
	}
	got := readTree(t, filepath.Join(out, "envs", "acme__calc-0.4"))
	wantTree := map[string]string{"Dockerfile": "FROM tender-verifier/pytest\nCOPY req.txt /\n", "req.txt": "pytz\n",
		"sub/more.txt": "1\n"}
	if diff := cmp.Diff(wantTree, got); diff != "" {
		t.Errorf("build context (-want +got):\n%s", diff)
	}
}

// TestWriteEnvironmentsRefusesABadContext: a build context that holds a symlink, or a
// dockerfile that is not there, fails the import with an error naming the environment.
func TestWriteEnvironmentsRefusesABadContext(t *testing.T) {
	for _, tt := range []struct {
		name string
		make func(t *testing.T, dir string)
		want string
	}{
		{"symlink", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"envs/calc/Dockerfile": "FROM x\n"})
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "envs/calc/passwd")); err != nil {
				t.Fatal(err)
			}
		}, "is not a regular file; a build context holds plain files only"},
		{"missing", func(t *testing.T, dir string) {}, "no such file or directory"},
		{"over the cap", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"envs/calc/Dockerfile": "FROM x\n"})
			sparse(t, filepath.Join(dir, "envs/calc/huge.bin"), suite.MaxEnvContext)
		}, "holds more than 2 GiB, Tender's cap for one (MaxEnvContext); keep only what the image needs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			specDir := t.TempDir()
			tt.make(t, specDir)
			spec, err := readEnvSpec(strings.NewReader(goodSpec), filepath.Join(specDir, "spec.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			im := &importer{spec: spec, envs: map[string]suite.EnvironmentDoc{}}
			if _, err := im.environment(Instance{Repo: "acme/calc", Version: "0.4"}); err != nil {
				t.Fatal(err)
			}
			doc := &suite.SuiteDoc{Pairs: []suite.PairDoc{{ID: "a", Environment: "acme__calc-0.4"}}}
			err = im.writeEnvironments(t.TempDir(), doc)
			named := "environment acme__calc-0.4: dockerfile envs/calc/Dockerfile"
			if !errors.Is(err, suite.ErrBadSuite) || !strings.Contains(err.Error(), named) ||
				!strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one naming the environment and %q", err, tt.want)
			}
		})
	}
}

// TestWriteEnvironmentsCopiesARealStack: a build context the size of pyvista's VTK stack
// (265 MiB; 300 here) is copied whole, streamed file by file.
func TestWriteEnvironmentsCopiesARealStack(t *testing.T) {
	specDir := t.TempDir()
	writeTree(t, specDir, map[string]string{"envs/calc/Dockerfile": "FROM tender-verifier/pytest\nCOPY vtk.whl /\n"})
	const size = 300 << 20
	sparse(t, filepath.Join(specDir, "envs/calc/vtk.whl"), size)
	spec, err := readEnvSpec(strings.NewReader(goodSpec), filepath.Join(specDir, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	im := &importer{spec: spec, envs: map[string]suite.EnvironmentDoc{}}
	if _, err := im.environment(Instance{Repo: "acme/calc", Version: "0.4"}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	doc := &suite.SuiteDoc{Pairs: []suite.PairDoc{{ID: "a", Environment: "acme__calc-0.4"}}}
	if err := im.writeEnvironments(out, doc); err != nil {
		t.Fatalf("a %d MiB context: %v", size>>20, err)
	}
	info, err := os.Stat(filepath.Join(out, "envs", "acme__calc-0.4", "vtk.whl"))
	if err != nil || info.Size() != size {
		t.Fatalf("the copied vtk.whl: %v, %v; want %d bytes", info, err, size)
	}
}

// sparse makes a file of size bytes that takes no room on disk.
func sparse(t *testing.T, name string, size int64) {
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

// writeTree writes slash-separated relative paths and their contents under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree reads every regular file under dir, by slash-separated relative path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
