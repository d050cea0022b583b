package grader

import (
	"io/fs"
	"path/filepath"
	"slices"
)

// evaluatorFiles are the evaluator's files in a workspace as Tender leaves it for the verifier:
// every file under restored paths, the test patch's files and the hidden assets, by
// slash-separated workspace path. A backend that can writes them after the setup commands, as
// another user than the verifier's, read-only to it (sandbox.Spec.Evaluator): no code of the
// candidate's, a setup command or a process it left, can read the tests before they run, or
// rewrite them.
//
// The modules of the required tests (modules) join them: the planter, Tender's root step,
// rewrites those, so they must be Tender's even where the candidate's patch made them (a
// pass-to-pass test's module that no restored path covers). A module that is a link is left as
// it is: the planter would write through it.
func (pl *pipeline) evaluatorFiles(tree string, modules []string, links map[string]string) []string {
	want := map[string]bool{}
	for _, m := range modules {
		if _, isLink := links[m]; !isLink {
			want[m] = true
		}
	}
	if pl.testPatch != nil {
		for _, p := range pl.testPatch.Paths() {
			want[p] = true
		}
	}
	for _, a := range pl.pair.Assets {
		want[a.Path] = true
	}
	var out []string
	filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(tree, p)
		rel = filepath.ToSlash(rel)
		if want[rel] || pl.suite.Restored.Match(rel) {
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out
}
