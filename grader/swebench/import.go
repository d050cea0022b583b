package swebench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/integrity"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// ImportOptions describe `tender import swebench`.
type ImportOptions struct {
	Instances   io.Reader
	Predictions io.Reader         // nil: grade the reference patches, as SWE-bench's "gold"
	Env         io.Reader         // the --env spec; nil: every pair runs in the suite's verifier
	EnvFile     string            // the spec's path: named in errors; its dockerfiles are relative to it
	Repos       map[string]string // repository ID (OWNER__NAME) -> local clone
	Out         string            // a new or empty directory; written whole or not at all
	Name        string            // suite name
	WorkDir     string
	KeepGoing   bool // skip the instances that cannot be imported instead of failing
	// AmbiguousIDs and Apply are the suite's ambiguous_ids and apply policies; "" leaves the
	// key out (the default: error, strict).
	AmbiguousIDs, Apply string
	Progress            func(msg string) // one line per slow step; nil: quiet

	// InstancesFile and PredictionsFile name the two files in errors ("" names them by role).
	InstancesFile, PredictionsFile string
}

// ImportSummary says what an import wrote.
type ImportSummary struct {
	Pairs        int
	EmptyPatch   []string // predictions with an empty model patch: recorded, never run
	NoPrediction []string // instances the predictions do not cover: recorded in the suite, not pairs
	Failed       []string // one line per instance that could not be imported
	Environments []string // environments written
	Notes        []string // what the import added that the inputs did not say (the table of known plugins)
	Model        string
}

// Import writes a self-contained suite: each repository vendored as a git bundle of
// the base commits, each instance a pair whose candidate is the model patch (or the reference
// patch without predictions), in the environment the --env spec gives its repository and
// version. Every instance is checked before anything is written; the suite is written into
// a temporary directory next to Out, loaded back, and renamed into place, so a failed import
// leaves nothing behind.
func Import(ctx context.Context, o ImportOptions) (ImportSummary, error) {
	im := &importer{o: o, envs: map[string]suite.EnvironmentDoc{}, repos: map[string]*gitsafe.Repo{}}
	defer im.close()
	if err := im.read(); err != nil {
		return im.sum, err
	}
	if err := im.checkCommits(ctx); err != nil {
		return im.sum, err
	}
	if n := len(im.sum.Failed); n > 0 && !o.KeepGoing {
		return im.sum, fmt.Errorf("%w: %d instance(s) cannot be imported (listed above); nothing was written. "+
			"Fix them, or skip them with --keep-going", suite.ErrBadSuite, n)
	}
	if len(im.todo) == 0 {
		return im.sum, fmt.Errorf("%w: no instance to import (%d without a prediction, %d that cannot be imported)",
			suite.ErrBadSuite, len(im.sum.NoPrediction), len(im.sum.Failed))
	}
	return im.sum, im.write(ctx)
}

type importer struct {
	o     ImportOptions
	sum   ImportSummary
	preds map[string]Prediction
	spec  envSpec
	todo  []importItem
	envs  map[string]suite.EnvironmentDoc // written environments by name
	repos map[string]*gitsafe.Repo        // snapshots of the clones, by repository ID
	// notImported are instances with a candidate that were skipped: SWE-bench's error_ids.
	notImported []string
}

type importItem struct {
	in       Instance
	patch    string
	env      string   // environment name, "" for the suite's verifier
	restored []string // files the test patch touches
}

func (im *importer) fail(id, format string, a ...any) {
	line := fmt.Sprintf(format, a...)
	if id != "" {
		line = id + ": " + line
		im.notImported = append(im.notImported, id)
	}
	im.sum.Failed = append(im.sum.Failed, line)
}

// read reads the three inputs and checks each instance on its own; the clones come later.
func (im *importer) read() error {
	insts, bad, err := ReadInstances(im.o.Instances)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", suite.ErrBadSuite, fileLabel("--instances", im.o.InstancesFile), err)
	}
	known := map[string]bool{}
	for _, in := range insts {
		known[in.InstanceID] = true
	}
	for _, b := range bad {
		known[b.ID] = b.ID != ""
	}
	if im.preds, im.sum.Model, err = readPredictions(im.o.Predictions, fileLabel("--predictions", im.o.PredictionsFile),
		known); err != nil {
		return err
	}
	if im.spec, err = readEnvSpec(im.o.Env, im.o.EnvFile); err != nil {
		return err
	}
	for _, b := range bad {
		if im.preds != nil && b.ID != "" {
			if _, ok := im.preds[b.ID]; !ok {
				im.sum.NoPrediction = append(im.sum.NoPrediction, b.ID)
				continue
			}
		}
		if known[b.ID] && slices.ContainsFunc(insts, func(in Instance) bool { return in.InstanceID == b.ID }) {
			// A second record of an imported instance: say so, but the instance is a pair.
			im.sum.Failed = append(im.sum.Failed, b.ID+": instances "+withoutID(b))
			continue
		}
		im.fail(b.ID, "instances %v", withoutID(b))
	}
	for _, in := range insts {
		im.item(in)
	}
	return nil
}

func withoutID(b *RecordError) string {
	return strings.Replace(b.Error(), " ("+b.ID+")", "", 1)
}

// item checks one instance and queues it.
func (im *importer) item(in Instance) {
	it := importItem{in: in, patch: in.Patch}
	if im.preds != nil {
		p, ok := im.preds[in.InstanceID]
		if !ok {
			im.sum.NoPrediction = append(im.sum.NoPrediction, in.InstanceID)
			return
		}
		it.patch = ""
		if p.ModelPatch != nil {
			it.patch = *p.ModelPatch
		}
	}
	id := RepoID(in.Repo)
	if _, ok := im.o.Repos[id]; !ok {
		im.fail(in.InstanceID, "needs repository %s; map it to a local clone with --repo %s=PATH", in.Repo, id)
		return
	}
	if err := checkFields(in); err != nil {
		im.fail(in.InstanceID, "%v", err)
		return
	}
	if err := checkPatch("test_patch", in.TestPatch); err != nil {
		im.fail(in.InstanceID, "%v", err)
		return
	}
	if err := checkPatch("patch (the reference)", in.Patch); err != nil {
		im.fail(in.InstanceID, "%v", err)
		return
	}
	it.restored = patchFiles(in.TestPatch)
	env, err := im.environment(in)
	if err != nil {
		im.fail(in.InstanceID, "%v", err)
		return
	}
	it.env = env
	if im.preds != nil && len(bytes.TrimSpace([]byte(it.patch))) == 0 {
		im.sum.EmptyPatch = append(im.sum.EmptyPatch, in.InstanceID)
	}
	im.todo = append(im.todo, it)
}

// checkFields refuses an instance whose fields the suite loader would refuse: the instance is
// the operator's input, so it is reported as that instance (and --keep-going skips it), not
// as a suite tender import wrote wrong.
func checkFields(in Instance) error {
	if n := len(in.ProblemStatement); n > suite.MaxIssue {
		return fmt.Errorf("problem_statement is %d bytes, over the suite's cap of %d for an issue; shorten it, "+
			"or skip the instance with --keep-going", n, suite.MaxIssue)
	}
	if id := RepoID(in.Repo); !report.ValidID(id) {
		return fmt.Errorf("repo %q makes the repository ID %q, which is longer than a suite allows (128); "+
			"skip the instance with --keep-going", in.Repo, id)
	}
	for _, l := range []struct {
		field string
		ids   []string
	}{{"FAIL_TO_PASS", in.FailToPass}, {"PASS_TO_PASS", in.PassToPass}} {
		if j, problem := suite.TestIDProblem(l.ids); problem != "" {
			return fmt.Errorf("%s[%d]: %s", l.field, j, problem)
		}
	}
	return nil
}

// checkPatch refuses an instance patch that Tender could not apply. A model patch is never
// checked here: a broken candidate is graded (patch_failed), not left out.
func checkPatch(field, text string) error {
	if _, err := gitsafe.ParsePatch([]byte(text)); err != nil {
		return fmt.Errorf("%s cannot be used: %v", field, err)
	}
	return nil
}

// patchFiles lists the files a test patch touches (old and new names).
func patchFiles(text string) []string {
	p, err := gitsafe.ParsePatch([]byte(text))
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range p.Files {
		for _, name := range []string{f.OldPath, f.NewPath} {
			if name != "" && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// checkCommits snapshots each clone (never running git on its own .git) and checks every
// queued instance's base commit. A clone that is not a repository is the operator's mistake
// and fails the import; a missing commit fails only its instance.
func (im *importer) checkCommits(ctx context.Context) error {
	byRepo := map[string][]importItem{}
	for _, it := range im.todo {
		id := RepoID(it.in.Repo)
		byRepo[id] = append(byRepo[id], it)
	}
	im.todo = nil
	for _, id := range slices.Sorted(maps.Keys(byRepo)) {
		r, err := im.snapshot(ctx, id)
		if err != nil {
			return err
		}
		for _, it := range byRepo[id] {
			if _, err := r.ResolveCommit(ctx, it.in.BaseCommit); err != nil {
				im.fail(
					it.in.InstanceID,
					"base commit %s is not in the clone %s (--repo %s); fetch it there, or skip the instance with --keep-going",
					it.in.BaseCommit,
					im.o.Repos[id],
					id,
				)
				continue
			}
			if err := r.CheckObjects(ctx, it.in.BaseCommit); errors.Is(err, gitsafe.ErrMissingObjects) {
				im.fail(
					it.in.InstanceID,
					"the clone %s (--repo %s) lacks objects of base commit %s (%v); make a full clone, "+
						"or a shallow one that holds the base commits (git clone --depth N), or skip the instance with --keep-going",
					im.o.Repos[id],
					id,
					it.in.BaseCommit,
					err,
				)
				continue
			} else if err != nil {
				return fmt.Errorf("--repo %s: %w", id, err)
			}
			im.todo = append(im.todo, it)
		}
	}
	slices.SortStableFunc(
		im.todo,
		func(a, b importItem) int { return strings.Compare(a.in.InstanceID, b.in.InstanceID) },
	)
	return nil
}

func (im *importer) progress(format string, a ...any) {
	if im.o.Progress != nil {
		im.o.Progress(fmt.Sprintf(format, a...))
	}
}

func (im *importer) close() {
	for _, r := range im.repos {
		r.Close()
	}
}

func (im *importer) snapshot(ctx context.Context, id string) (*gitsafe.Repo, error) {
	if r, ok := im.repos[id]; ok {
		return r, nil
	}
	im.progress("reading the clone of %s (%s)", id, im.o.Repos[id])
	r, err := gitsafe.Snapshot(ctx, gitsafe.Source{Kind: gitsafe.SourceClone, Path: im.o.Repos[id]}, im.o.WorkDir)
	if errors.Is(err, gitsafe.ErrNotRepository) || errors.Is(err, gitsafe.ErrUnsafeRepo) {
		return nil, fmt.Errorf("%w: --repo %s=%s: %w", suite.ErrBadSuite, id, im.o.Repos[id], errors.Unwrap(err))
	}
	if err != nil {
		return nil, fmt.Errorf("--repo %s: %w", id, err)
	}
	im.repos[id] = r
	return r, nil
}

// write writes the whole suite into a temporary directory beside Out, loads it back, and
// renames it into place.
func (im *importer) write(ctx context.Context) error {
	parent := filepath.Dir(filepath.Clean(im.o.Out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("--out %s: cannot make its parent directory (%w); choose another place", im.o.Out, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(im.o.Out)+".import-")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the temporary name is Tender's, not the operator's
		}
		return fmt.Errorf("--out %s: cannot write the suite beside it, in %s (%w); choose another place",
			im.o.Out, parent, err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	doc, err := im.suiteDoc(tmp)
	if err != nil {
		return err
	}
	if err := im.vendorRepos(ctx, tmp); err != nil {
		return err
	}
	if err := writeSuiteDoc(tmp, doc); err != nil {
		return err
	}
	if _, err := suite.Load(tmp, suite.LoadOptions{}); err != nil {
		return fmt.Errorf("the written suite does not load (a bug in tender import): %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, im.o.Out); err != nil {
		return fmt.Errorf("moving the suite into --out %s: %w", im.o.Out, err)
	}
	return nil
}

func (im *importer) suiteDoc(dir string) (suite.SuiteDoc, error) {
	doc := suite.SuiteDoc{Name: im.o.Name, Version: "1", Repositories: map[string]suite.RepoDoc{}}
	restored := slices.Clone(integrity.DefaultRestored)
	defaults := integrity.MustCompile("restored_paths", integrity.DefaultRestored, false)
	for _, it := range im.todo {
		pd, err := writePairFiles(dir, it.in, it.patch)
		if err != nil {
			return doc, err
		}
		pd.Environment = it.env
		doc.Pairs = append(doc.Pairs, pd)
		id := RepoID(it.in.Repo)
		doc.Repositories[id] = suite.RepoDoc{Bundle: path.Join("repos", id+".bundle")}
		for _, f := range it.restored {
			if q := quoteGlob(f); !defaults.Match(f) && !slices.Contains(restored, q) {
				restored = append(restored, q)
			}
		}
	}
	slices.Sort(restored[len(integrity.DefaultRestored):])
	doc.RestoredPaths = &restored
	if err := im.writeEnvironments(dir, &doc); err != nil {
		return doc, err
	}
	doc.Import = suite.ImportInfo{Model: im.sum.Model}
	doc.AmbiguousIDs, doc.Apply = im.o.AmbiguousIDs, im.o.Apply
	if len(im.sum.NoPrediction) > 0 || len(im.notImported) > 0 {
		set := &suite.SWEBenchSet{NoPrediction: slices.Sorted(slices.Values(im.sum.NoPrediction)),
			NotImported: slices.Sorted(slices.Values(im.notImported))}
		doc.Import.SWEBench = set
	}
	im.sum.Pairs = len(doc.Pairs)
	return doc, nil
}

// quoteGlob makes a file name a doublestar pattern that matches only itself. Each
// metacharacter, and a space at either end (the loader refuses a pattern that starts or ends
// with one), goes in a class of its own: the loader refuses the backslash escapes. A ']'
// outside a class is already literal, and a patch path never holds a backslash (gitsafe).
func quoteGlob(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if strings.ContainsRune("*?[{}", r) || (i == 0 || i == len(rs)-1) && unicode.IsSpace(r) {
			b.WriteString("[" + string(r) + "]")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fileLabel names an input file in errors: the flag and the path, or the flag alone.
func fileLabel(flag, name string) string {
	if name == "" {
		return flag
	}
	return flag + " " + name
}

func readPredictions(r io.Reader, label string, known map[string]bool) (map[string]Prediction, string, error) {
	if r == nil {
		return nil, "", nil
	}
	preds, err := ReadPredictions(r)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %s: %v", suite.ErrBadSuite, label, err)
	}
	model := ""
	for _, id := range slices.Sorted(maps.Keys(preds)) {
		if !known[id] {
			return nil, "", fmt.Errorf("%w: %s: %q is not an instance in the instances file",
				suite.ErrBadSuite, label, id)
		}
		switch m := preds[id].ModelNameOrPath; {
		case model == "":
			model = m
		case m != "" && m != model:
			return nil, "", fmt.Errorf("%w: %s: %s is by model %q but others are by %q; "+
				"import one model's predictions at a time", suite.ErrBadSuite, label, id, m, model)
		}
	}
	return preds, model, nil
}

func writePairFiles(out string, in Instance, patch string) (suite.PairDoc, error) {
	rel := path.Join("pairs", in.InstanceID)
	files := map[string]string{"issue.md": in.ProblemStatement, "patch.diff": patch, "reference.diff": in.Patch}
	if in.TestPatch != "" {
		files["test.diff"] = in.TestPatch
	}
	for name, content := range files {
		dst := filepath.Join(out, filepath.FromSlash(rel), name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return suite.PairDoc{}, err
		}
		if err := os.WriteFile(dst, []byte(content), 0o644); err != nil {
			return suite.PairDoc{}, err
		}
	}
	f2p := []string(in.FailToPass)
	pd := suite.PairDoc{ID: in.InstanceID, Repository: RepoID(in.Repo), BaseCommit: in.BaseCommit,
		Issue: path.Join(
			rel,
			"issue.md",
		), Patch: path.Join(rel, "patch.diff"), ReferencePatch: path.Join(rel, "reference.diff"),
		FailToPass: &f2p}
	if in.TestPatch != "" {
		pd.TestPatch = path.Join(rel, "test.diff")
	}
	if len(in.PassToPass) > 0 {
		p2p := []string(in.PassToPass)
		pd.PassToPass = &p2p
	}
	return pd, nil
}

// vendorRepos writes one bundle per repository holding its instances' base commits.
func (im *importer) vendorRepos(ctx context.Context, dir string) error {
	commits := map[string][]string{}
	for _, it := range im.todo {
		id := RepoID(it.in.Repo)
		if !slices.Contains(commits[id], it.in.BaseCommit) {
			commits[id] = append(commits[id], it.in.BaseCommit)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(commits)) {
		r, err := im.snapshot(ctx, id)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, "repos", id+".bundle")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		slices.Sort(commits[id])
		im.progress(
			"writing %s: %d base commit(s)",
			filepath.ToSlash(filepath.Join("repos", id+".bundle")),
			len(commits[id]),
		)
		if err := r.WriteBundle(ctx, dst, commits[id]); err != nil {
			return fmt.Errorf("--repo %s: writing the bundle: %w", id, err)
		}
	}
	return nil
}

func writeSuiteDoc(out string, doc suite.SuiteDoc) error {
	manifest, err := encodeSuiteDoc(doc)
	if err != nil {
		return err
	}
	if len(manifest) > importPairsInline {
		// Too big for tender.yaml's cap, or close to it: the pairs go to a JSON Lines file,
		// written a pair at a time.
		f, err := os.Create(filepath.Join(out, importPairsFile))
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, p := range doc.Pairs {
			if err := enc.Encode(p); err != nil {
				f.Close()
				return err
			}
		}
		if err := errors.Join(w.Flush(), f.Close()); err != nil {
			return err
		}
		doc.Pairs, doc.PairsFile = nil, importPairsFile
		if manifest, err = encodeSuiteDoc(doc); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(out, suite.SuiteFile), manifest, 0o644)
}

// Import writes the pairs into tender.yaml up to half of its cap, and to pairs.jsonl beyond.
const (
	importPairsInline = suite.MaxSuiteFile / 2
	importPairsFile   = "pairs.jsonl"
)

func encodeSuiteDoc(doc suite.SuiteDoc) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# Written by tender import swebench. See the README for the suite format.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
