package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tender-grader/tender/report/bundle"
)

// ErrForeignFile marks a file in an output directory that Tender did not write: a resume
// refuses to seal it, and leaves it for the operator to move.
var ErrForeignFile = errors.New("a file tender did not write")

// PrepareResume makes dir hold only what a resumed run can stand behind: results.jsonl is
// rewritten (synced, then renamed into place) with the records of keep whose files are
// there, in that order, and every other file Tender writes there is removed: the batch-level
// outputs and the envelope (the run writes them again), temporary files a crash left, and
// the files of pairs that are graded again. A file Tender would not have written is refused
// with ErrForeignFile, and nothing is changed. It returns the records kept, and why the
// others were not.
func PrepareResume(dir string, keep []PairResult) ([]PairResult, []string, error) {
	var kept []PairResult
	var dropped []string
	files := map[string]bool{}
	for _, r := range keep {
		names, err := recordFiles(dir, r)
		if err != nil {
			dropped = append(dropped, fmt.Sprintf("%s: %v", r.ID, err))
			continue
		}
		kept = append(kept, r)
		for _, n := range names {
			files[n] = true
		}
	}
	stale, err := staleFiles(dir, files)
	if err != nil {
		return nil, nil, err
	}
	if err := rewriteResults(dir, kept); err != nil {
		return nil, nil, err
	}
	for _, name := range stale {
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			return nil, nil, fmt.Errorf("report: removing %s from %s: %w", name, dir, err)
		}
	}
	return kept, dropped, nil
}

// recordFiles lists the files a record names, each of which must be a regular file in dir.
func recordFiles(dir string, r PairResult) ([]string, error) {
	if err := checkPairID(r.ID); err != nil {
		return nil, err
	}
	var names []string
	for _, c := range r.Checks {
		for _, n := range []string{c.LogFile, c.JUnitFile} {
			if n == "" {
				continue
			}
			if path.Dir(n) != PairDir(r.ID) {
				return nil, fmt.Errorf("%s is not among the pair's files", n)
			}
			fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(n)))
			if err != nil || !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("%s is missing or not a regular file", n)
			}
			names = append(names, n)
		}
		names = append(names, rerunFiles(dir, r.ID, c.Name)...)
	}
	return names, nil
}

// rerunFiles are the logs of a check's reruns and base-commit runs (--reruns), which the
// record does not name: its flaky reasons summarize them. Only regular files are kept.
func rerunFiles(dir, id, check string) []string {
	var names []string
	for _, kind := range []string{"-rerun", "-base"} {
		for _, ext := range []string{".log", ".junit.xml"} {
			matches, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(PairDir(id)), check+kind+"[0-9]*"+ext))
			for _, m := range matches {
				if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() {
					rel, _ := filepath.Rel(dir, m)
					names = append(names, filepath.ToSlash(rel))
				}
			}
		}
	}
	return names
}

// staleFiles lists what a resume removes: everything but results.jsonl and the files kept,
// at the top level only names Tender writes (the pairs directory is all Tender's).
func staleFiles(dir string, keep map[string]bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("report: reading %s: %w", dir, err)
	}
	var stale []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == ResultsJSONL:
		case name == PairsDir && e.IsDir():
			s, err := stalePairFiles(dir, keep)
			if err != nil {
				return nil, err
			}
			stale = append(stale, s...)
		case name == EnvironmentsDir && e.IsDir(): // written again when the run finishes
			stale = append(stale, name)
		case e.Type().IsRegular() && ownTopLevel(name):
			stale = append(stale, name)
		default:
			return nil, fmt.Errorf(
				"%w: %s holds %s; move it out of the bundle directory, then resume",
				ErrForeignFile,
				dir,
				name,
			)
		}
	}
	return stale, nil
}

// ownTopLevel: the batch-level outputs, the envelope, and the temporary files their atomic
// writes leave behind when a process dies between create and rename.
func ownTopLevel(name string) bool {
	outputs := append(Aggregates(), bundle.EnvelopeName)
	if slices.Contains(outputs, name) {
		return true
	}
	for _, o := range outputs {
		if strings.HasPrefix(name, "."+o+".") {
			return true
		}
	}
	return false
}

// stalePairFiles lists the entries under pairs/ that are not kept: files, and whole
// directories that hold nothing kept.
func stalePairFiles(dir string, keep map[string]bool) ([]string, error) {
	dirs := map[string]bool{}
	for k := range keep {
		for d := path.Dir(k); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var stale []string
	root := filepath.Join(dir, PairsDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != PairsDir && !dirs[rel] {
				stale = append(stale, rel)
				return filepath.SkipDir
			}
			return nil
		}
		if !keep[rel] {
			stale = append(stale, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("report: reading %s: %w", root, err)
	}
	return stale, nil
}

// rewriteResults replaces dir/results.jsonl with records, one line each, synced.
func rewriteResults(dir string, records []PairResult) error {
	var b bytes.Buffer
	for _, r := range records {
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("report: encoding result %q: %w", r.ID, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return writeFileAtomic(filepath.Join(dir, ResultsJSONL), b.Bytes())
}
