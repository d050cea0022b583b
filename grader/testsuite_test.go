package grader

import (
	"os"
	"path"
	"path/filepath"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/grader/suite"
)

// demoDir is the vendored demo suite: its repository stream, base commit, test patch and test
// lists are the real parts the grader's tests build their own suites from.
const demoDir = "../fixtures/demo"

// demoSuite is the demo suite, loaded once with the real loader.
var demoSuite = sync.OnceValues(func() (*suite.Suite, error) { return suite.Load(demoDir, suite.LoadOptions{}) })

// demoPatch returns the candidate patch of one of the demo's pairs.
func demoPatch(t *testing.T, id string) string {
	t.Helper()
	return string(demo(t, id).Patch)
}

func demo(t *testing.T, id string) *suite.Pair {
	t.Helper()
	s, err := demoSuite()
	if err != nil {
		t.Fatalf("loading %s: %v", demoDir, err)
	}
	for _, p := range s.Pairs {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("%s has no pair %q", demoDir, id)
	return nil
}

// testPair is one pair of a suite written by a test. Empty fields are left out of tender.yaml.
type testPair struct {
	id         string
	stream     string // repository fast-export stream, relative to the grader package
	base       string
	patch      string
	testPatch  string
	reference  string            // the reference patch; "": none
	assets     map[string]string // path under the assets directory -> content
	failToPass []string
	passToPass []string
	expect     string
}

// demoTestPair is the demo's reference fix with the demo's test patch and test lists: graded by
// an honest verifier, it is resolved.
func demoTestPair(t *testing.T, id string) testPair {
	t.Helper()
	gold := demo(t, "gold-fix")
	return testPair{id: id, stream: demoDir + "/repos/calc.fi", base: gold.BaseCommit, patch: string(gold.Patch),
		testPatch: string(gold.TestPatch), failToPass: gold.FailToPass, passToPass: gold.PassToPass}
}

// writeTestSuite writes a suite of the pairs into a new directory and loads it with Load.
func writeTestSuite(t *testing.T, pairs ...testPair) *suite.Suite {
	t.Helper()
	s, err := tryWriteTestSuite(t, pairs...)
	if err != nil {
		t.Fatalf("Load of the test suite: %v", err)
	}
	return s
}

// tryWriteTestSuite writes a suite of the pairs into a new directory and returns what Load
// makes of it.
func tryWriteTestSuite(t *testing.T, pairs ...testPair) (*suite.Suite, error) {
	t.Helper()
	return tryWriteTestSuiteWith(t, nil, pairs...)
}

// writeTestSuiteWith is writeTestSuite with suite-level keys: edit changes the manifest
// before it is written.
func writeTestSuiteWith(t *testing.T, edit func(*suite.SuiteDoc), pairs ...testPair) *suite.Suite {
	t.Helper()
	s, err := tryWriteTestSuiteWith(t, edit, pairs...)
	if err != nil {
		t.Fatalf("Load of the test suite: %v", err)
	}
	return s
}

func tryWriteTestSuiteWith(t *testing.T, edit func(*suite.SuiteDoc), pairs ...testPair) (*suite.Suite, error) {
	t.Helper()
	dir := t.TempDir()
	doc := suite.SuiteDoc{Name: "grader-test", Version: "1", Repositories: map[string]suite.RepoDoc{}}
	files := map[string]string{}
	repoIDs := map[string]string{} // stream -> repository ID
	for _, p := range pairs {
		repo, ok := repoIDs[p.stream]
		if !ok {
			repo = "repo" + string(rune('a'+len(repoIDs)))
			repoIDs[p.stream] = repo
			data, err := os.ReadFile(p.stream)
			if err != nil {
				t.Fatal(err)
			}
			files["repos/"+repo+".fi"] = string(data)
			doc.Repositories[repo] = suite.RepoDoc{FastExport: "repos/" + repo + ".fi"}
		}
		doc.Pairs = append(doc.Pairs, pairDoc(p, repo, files))
	}
	if edit != nil {
		edit(&doc)
	}
	manifest, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	files[suite.SuiteFile] = string(manifest)
	writeFiles(t, dir, files)
	return suite.Load(dir, suite.LoadOptions{})
}

// pairDoc is p's entry in tender.yaml; its files are added to files.
func pairDoc(p testPair, repo string, files map[string]string) suite.PairDoc {
	dir := "pairs/" + p.id
	d := suite.PairDoc{ID: p.id, Repository: repo, BaseCommit: p.base, Issue: dir + "/issue.md",
		Patch: dir + "/patch.diff", Expect: p.expect}
	files[d.Issue] = "Fix the bug in " + p.id + ".\n"
	files[d.Patch] = p.patch
	if p.testPatch != "" {
		d.TestPatch = dir + "/test.diff"
		files[d.TestPatch] = p.testPatch
	}
	if p.reference != "" {
		d.ReferencePatch = dir + "/reference.diff"
		files[d.ReferencePatch] = p.reference
	}
	if len(p.assets) > 0 {
		d.Assets = dir + "/assets"
		for name, content := range p.assets {
			files[path.Join(d.Assets, name)] = content
		}
	}
	if p.failToPass != nil {
		d.FailToPass = &p.failToPass
	}
	if p.passToPass != nil {
		d.PassToPass = &p.passToPass
	}
	return d
}

// writeFiles writes slash-separated relative paths and their contents under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
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
