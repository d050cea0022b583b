package suite

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/integrity"
	"github.com/tender-grader/tender/report"
)

// SuiteFile is the name of a suite's manifest inside its directory.
const SuiteFile = "tender.yaml"

// LoadOptions are the operator's additions to a suite: they never come from the suite files.
type LoadOptions struct {
	Repos map[string]string // repository ID -> local clone path (--repo ID=PATH)
}

// SuiteDoc is tender.yaml as written (and as `tender import` writes it). Unknown keys are
// errors when it is read.
type SuiteDoc struct {
	Name           string                    `yaml:"name,omitempty"`
	Version        string                    `yaml:"version,omitempty"`
	Import         ImportInfo                `yaml:",inline"` // model and instance set (importinfo.go)
	Repositories   map[string]RepoDoc        `yaml:"repositories,omitempty"`
	Verifier       VerifierDoc               `yaml:"verifier,omitempty"`
	Environments   map[string]EnvironmentDoc `yaml:"environments,omitempty"`
	ProtectedPaths *[]string                 `yaml:"protected_paths,omitempty"`
	RestoredPaths  *[]string                 `yaml:"restored_paths,omitempty"`
	Flaky          string                    `yaml:"flaky,omitempty"`         // FlakyFailed (default) or FlakyExcluded
	AmbiguousIDs   string                    `yaml:"ambiguous_ids,omitempty"` // AmbiguousError (default) or All
	Apply          string                    `yaml:"apply,omitempty"`         // strict (default) or swebench
	Pairs          []PairDoc                 `yaml:"pairs,omitempty"`
	// PairsFile names a JSON Lines file in the suite that holds the pairs, one object a line
	// with the keys of a pair in tender.yaml: a suite of thousands of pairs does not fit the
	// manifest's cap. A suite gives pairs or pairs_file, not both.
	PairsFile string `yaml:"pairs_file,omitempty"`
}

type RepoDoc struct {
	Bundle     string `yaml:"bundle,omitempty"`
	FastExport string `yaml:"fast_export,omitempty"`
	URL        string `yaml:"url,omitempty"`
	// Environment names the environment its pairs run in, unless a pair names its own.
	Environment string `yaml:"environment,omitempty"`
	// Symlinks says what its trees may hold at mode 120000: "refuse" (the default) or
	// "in-tree" (relative links that stay inside the tree; gitsafe.SymlinksInTree).
	Symlinks string `yaml:"symlinks,omitempty"`
}

type VerifierDoc struct {
	Image   string            `yaml:"image,omitempty"`
	Runner  string            `yaml:"runner,omitempty"`
	Command []string          `yaml:"command,omitempty"`
	Setup   [][]string        `yaml:"setup,omitempty"`
	Post    [][]string        `yaml:"post,omitempty"`
	Timeout string            `yaml:"timeout,omitempty"`
	CPUs    float64           `yaml:"cpus,omitempty"`
	Memory  string            `yaml:"memory,omitempty"`
	Pids    int64             `yaml:"pids,omitempty"`
	Disk    string            `yaml:"disk,omitempty"`
	Env     map[string]string `yaml:"env,omitempty"`
	PassEnv []string          `yaml:"pass_env,omitempty"`
	Plugins []string          `yaml:"plugins,omitempty"`
	Ini     map[string]string `yaml:"ini,omitempty"` // -o KEY=VALUE for pytest (pytestopts.go)
	// PythonPath lists workspace-relative directories put on sys.path after pytest (src/ layouts).
	PythonPath []string `yaml:"python_path,omitempty"`
}

type PairDoc struct {
	ID             string    `yaml:"id,omitempty"              json:"id,omitempty"`
	Repository     string    `yaml:"repository,omitempty"      json:"repository,omitempty"`
	Environment    string    `yaml:"environment,omitempty"     json:"environment,omitempty"`
	BaseCommit     string    `yaml:"base_commit,omitempty"     json:"base_commit,omitempty"`
	Issue          string    `yaml:"issue,omitempty"           json:"issue,omitempty"`
	Patch          string    `yaml:"patch,omitempty"           json:"patch,omitempty"`
	TestPatch      string    `yaml:"test_patch,omitempty"      json:"test_patch,omitempty"`
	Assets         string    `yaml:"assets,omitempty"          json:"assets,omitempty"`
	ReferencePatch string    `yaml:"reference_patch,omitempty" json:"reference_patch,omitempty"`
	FailToPass     *[]string `yaml:"fail_to_pass,omitempty"    json:"fail_to_pass,omitempty"`
	PassToPass     *[]string `yaml:"pass_to_pass,omitempty"    json:"pass_to_pass,omitempty"`
	Expect         string    `yaml:"expect,omitempty"          json:"expect,omitempty"`
}

var (
	reEnv    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	reRemote = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://|^[^/\s]+@[^/\s]+:`)
)

// Load reads, validates and digests the suite in dir. Every error wraps ErrBadSuite and names
// the file and field; nothing of the candidate runs before Load returns.
func Load(dir string, opts LoadOptions) (*Suite, error) {
	l := &loader{dir: dir, manifest: SuiteFile}
	return l.load(opts)
}

type loader struct {
	dir      string
	manifest string
	read     map[string][]byte // suite files read so far, by relative path: pairs share files
}

func (l *loader) errf(field, format string, a ...any) error {
	return &LoadError{File: l.manifest, Field: field, Msg: fmt.Sprintf(format, a...)}
}

func (l *loader) load(opts LoadOptions) (*Suite, error) {
	info, err := os.Stat(l.dir)
	if err != nil || !info.IsDir() {
		return nil, &LoadError{File: l.dir, Msg: "not a suite directory; pass the directory that holds tender.yaml"}
	}
	data, err := l.readFile("", SuiteFile, MaxSuiteFile)
	if err != nil {
		return nil, err
	}
	raw, lines, err := l.decode(data)
	if err != nil {
		return nil, err
	}
	s, err := l.build(raw, lines, opts)
	if err != nil {
		return nil, err
	}
	if err := l.contextSizes(s); err != nil { // before digesting: a huge context fails at once
		return nil, err
	}
	if s.Files, err = l.digestTree(); err != nil {
		return nil, err
	}
	s.Digest = digestMap(s.Files)
	if err := l.contextDigests(s); err != nil {
		return nil, err
	}
	for i, p := range s.Pairs {
		if p.InputDigest, err = inputDigest(s, p); err != nil {
			return nil, l.errf(fmt.Sprintf("pairs[%d]", i), "%v", err)
		}
	}
	return s, nil
}

// decode decodes strictly: unknown keys, duplicate keys and trailing documents are errors, and
// so is any value that cannot mean what it says (checkNodes).
func (l *loader) decode(data []byte) (*SuiteDoc, []int, error) {
	if !utf8.Valid(data) {
		return nil, nil, l.errf("", "not valid UTF-8; save the file as UTF-8")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if line, n := LongKey(data); line > 0 {
			return nil, nil, l.errf("", "%s", LongKeyError(line, n))
		}
		return nil, nil, l.yamlError(err, nil)
	}
	if err := l.checkNodes(&doc, ""); err != nil {
		return nil, nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var raw SuiteDoc
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, l.errf("", "the file is empty; see the README for a complete example")
		}
		return nil, nil, l.yamlError(err, &doc)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, nil, l.errf("", "holds more than one YAML document; keep a single document")
	}
	return &raw, pairLines(&doc), nil
}

// yamlError turns yaml.v3's multi-line errors into one line that says what to do. A type
// error names its field (found in doc) and says what was wanted in words.
func (l *loader) yamlError(err error, doc *yaml.Node) error {
	var te *yaml.TypeError
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	field := ""
	for i, m := range msgs {
		m = strings.TrimSpace(m)
		if k, ok := unknownField(m); ok {
			m = fmt.Sprintf(
				"%sunknown key %q; remove it or fix its spelling (the README lists every key)",
				linePrefix(m),
				k,
			)
		} else if doc != nil {
			if f, text, ok := typeError(m, doc); ok {
				if field == "" {
					field = f
				}
				m = text
			}
		}
		msgs[i] = m
	}
	return l.errf(field, "%s", strings.Join(msgs, "; "))
}

var reUnknown = regexp.MustCompile(`field (\S+) not found in type`)

func unknownField(m string) (string, bool) {
	if g := reUnknown.FindStringSubmatch(m); g != nil {
		return g[1], true
	}
	return "", false
}

func linePrefix(m string) string {
	if strings.HasPrefix(m, "line ") {
		if i := strings.Index(m, ":"); i > 0 {
			return m[:i+2]
		}
	}
	return ""
}

// pairLines finds the line of each pair's entry, for annotations.
func pairLines(doc *yaml.Node) []int {
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "pairs" {
			var lines []int
			for _, n := range root.Content[i+1].Content {
				lines = append(lines, n.Line)
			}
			return lines
		}
	}
	return nil
}

func (l *loader) build(raw *SuiteDoc, lines []int, opts LoadOptions) (*Suite, error) {
	s := &Suite{Dir: l.dir, Name: raw.Name, Version: raw.Version}
	if !report.ValidID(raw.Name) {
		return nil, l.errf("name", "is %q; give the suite a name of letters, digits, '.', '_' or '-'", raw.Name)
	}
	if strings.TrimSpace(raw.Version) == "" {
		return nil, l.errf("version", "is missing; add a version string such as \"1\"")
	}
	var err error
	if s.Repositories, err = l.repositories(raw.Repositories, opts.Repos); err != nil {
		return nil, err
	}
	if s.Verifier, err = l.verifier(raw.Verifier); err != nil {
		return nil, err
	}
	if s.Flaky, err = l.flaky(raw.Flaky); err != nil {
		return nil, err
	}
	if s.AmbiguousIDs, err = l.ambiguousIDs(raw.AmbiguousIDs); err != nil {
		return nil, err
	}
	if s.Apply, err = gitsafe.ParseApplyPolicy(raw.Apply); err != nil {
		return nil, l.errf("apply", "is %q; write strict (git apply alone, the default) or swebench "+
			"(SWE-bench's chain: git apply, then git apply --reject, then a fuzzed apply)", raw.Apply)
	}
	if s.Environments, err = l.environments(raw.Environments, s.Verifier.Runner); err != nil {
		return nil, err
	}
	s.repoEnv = map[string]string{}
	for _, id := range slices.Sorted(maps.Keys(raw.Repositories)) {
		name := raw.Repositories[id].Environment
		if _, ok := s.Environments[name]; name != "" && !ok {
			return nil, l.errf(
				"repositories."+id+".environment",
				"%q is not in environments (known: %s)",
				name,
				knownNames(s.Environments),
			)
		}
		s.repoEnv[id] = name
	}
	s.ProtectedPaths, s.RestoredPaths = orDefault(
		raw.ProtectedPaths,
		integrity.DefaultProtected,
	), orDefault(
		raw.RestoredPaths,
		integrity.DefaultRestored,
	)
	if s.Protected, err = l.patterns("protected_paths", s.ProtectedPaths, true); err != nil {
		return nil, err
	}
	if s.Restored, err = l.patterns("restored_paths", s.RestoredPaths, false); err != nil {
		return nil, err
	}
	if raw.PairsFile != "" {
		if len(raw.Pairs) > 0 {
			return nil, l.errf("pairs_file", "is set and so is pairs; keep one of them")
		}
		if raw.Pairs, err = l.readPairsFile(raw.PairsFile); err != nil {
			return nil, err
		}
		lines = nil                // the pairs are not in tender.yaml: no line to annotate
		l.manifest = raw.PairsFile // errors in a pair name the file that holds it
	}
	if len(raw.Pairs) == 0 {
		return nil, l.errf("pairs", "is empty; a suite needs at least one pair")
	}
	seen := map[string]int{}
	for i := range raw.Pairs {
		p, err := l.pair(i, &raw.Pairs[i], s)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[p.ID]; dup {
			return nil, l.errf(
				fmt.Sprintf("pairs[%d].id", i),
				"%q is also the id of pairs[%d]; pair ids must be unique",
				p.ID,
				j,
			)
		}
		seen[p.ID] = i
		if i < len(lines) {
			p.Line = lines[i]
		}
		s.Pairs = append(s.Pairs, p)
	}
	if err := l.instanceImages(s); err != nil {
		return nil, err
	}
	l.manifest = SuiteFile
	if s.Import, err = l.importInfo(raw.Import, seen); err != nil {
		return nil, err
	}
	return s, nil
}

// flaky reads the suite's policy for flaky required tests.
func (l *loader) flaky(v string) (string, error) {
	switch v {
	case "", FlakyFailed:
		return FlakyFailed, nil
	case FlakyExcluded:
		return FlakyExcluded, nil
	}
	return "", l.errf(
		"flaky",
		"is %q; write failed (a flaky required test counts as failed, the default) or excluded (a flaky pass_to_pass test is dropped)",
		v,
	)
}

// ambiguousIDs reads the suite's policy for a truncated test ID that names several tests.
func (l *loader) ambiguousIDs(v string) (string, error) {
	switch v {
	case "", AmbiguousError:
		return AmbiguousError, nil
	case AmbiguousAll:
		return AmbiguousAll, nil
	}
	return "", l.errf(
		"ambiguous_ids",
		"is %q; write error (such a pair has no verdict, the default) or all (every test the ID names is required)",
		v,
	)
}

func orDefault(given *[]string, defaults []string) []string {
	if given != nil {
		return *given
	}
	return defaults
}

func (l *loader) patterns(field string, pats []string, fold bool) (*integrity.Matcher, error) {
	m, err := integrity.Compile(field, pats, fold)
	if err != nil {
		return nil, &LoadError{File: l.manifest, Msg: err.Error()}
	}
	return m, nil
}

func (l *loader) repositories(raw map[string]RepoDoc, mapped map[string]string) (map[string]RepoSource, error) {
	if len(raw) == 0 {
		return nil, l.errf(
			"repositories",
			"is empty; vendor each repository as a bundle or fast-export stream and name it here",
		)
	}
	out := map[string]RepoSource{}
	for _, id := range slices.Sorted(maps.Keys(raw)) {
		r := raw[id]
		field := "repositories." + id
		if !report.ValidID(id) {
			return nil, l.errf(field, "is not a valid repository ID; use letters, digits, '.', '_' or '-'")
		}
		for _, v := range []string{r.URL, r.Bundle, r.FastExport} {
			if v != "" && (r.URL != "" || reRemote.MatchString(v)) {
				return nil, l.errf(
					field,
					"names a remote source (%q): remote repository sources are disabled; vendor it as a bundle or fast-export stream, or map it to a local clone with --repo %s=PATH",
					v,
					id,
				)
			}
		}
		src, err := l.repoSource(field, id, r, mapped[id])
		if err != nil {
			return nil, err
		}
		if src.Symlinks, err = gitsafe.ParseSymlinks(r.Symlinks); err != nil {
			return nil, l.errf(field+".symlinks", "%q is not a setting; use refuse (the default) or in-tree (relative "+
				"symlinks that stay inside the tree)", r.Symlinks)
		}
		out[id] = src
	}
	for _, id := range slices.Sorted(maps.Keys(mapped)) {
		if _, ok := raw[id]; !ok {
			return nil, usageErrorf(
				"--repo %s=...: the suite has no repository %q (it has: %s)",
				id,
				id,
				strings.Join(slices.Sorted(maps.Keys(raw)), ", "),
			)
		}
	}
	return out, nil
}

func (l *loader) repoSource(field, id string, r RepoDoc, clone string) (RepoSource, error) {
	if clone != "" {
		info, err := os.Stat(clone)
		if err != nil || !info.IsDir() {
			return RepoSource{}, usageErrorf("--repo %s=%s: not a directory; give the path of a local clone", id, clone)
		}
		abs, err := filepath.Abs(clone)
		return RepoSource{Clone: abs}, err
	}
	switch {
	case r.Bundle != "" && r.FastExport != "":
		return RepoSource{}, l.errf(field, "sets both bundle and fast_export; keep one")
	case r.Bundle != "":
		if _, err := l.checkFile(field+".bundle", r.Bundle, MaxRepoStream); err != nil {
			return RepoSource{}, err
		}
		return RepoSource{Bundle: r.Bundle}, nil
	case r.FastExport != "":
		if _, err := l.checkFile(field+".fast_export", r.FastExport, MaxRepoStream); err != nil {
			return RepoSource{}, err
		}
		return RepoSource{FastExport: r.FastExport}, nil
	}
	return RepoSource{}, l.errf(
		field,
		"has no source; set bundle or fast_export to a file in the suite, or pass --repo %s=PATH",
		id,
	)
}

// usageErrorf is an operator error (a flag), not a suite file error; it still wraps ErrBadSuite
// so that it exits 2.
func usageErrorf(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadSuite}, a...)...)
}

func (l *loader) pair(i int, r *PairDoc, s *Suite) (*Pair, error) {
	f := func(name string) string { return fmt.Sprintf("pairs[%d].%s", i, name) }
	if !report.ValidID(r.ID) {
		return nil, l.errf(
			f("id"),
			"is %q; use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit",
			r.ID,
		)
	}
	p := &Pair{ID: r.ID, Repository: r.Repository, BaseCommit: r.BaseCommit, IssuePath: r.Issue, PatchPath: r.Patch,
		TestPatchPath: r.TestPatch, AssetsPath: r.Assets, ReferencePath: r.ReferencePatch}
	if _, ok := s.Repositories[r.Repository]; !ok {
		return nil, l.errf(
			f("repository"),
			"%q is not in repositories (known: %s)",
			r.Repository,
			strings.Join(slices.Sorted(maps.Keys(s.Repositories)), ", "),
		)
	}
	var err error
	if p.Environment, err = l.pairEnvironment(f("environment"), r, s); err != nil {
		return nil, err
	}
	if !gitsafe.IsObjectID(r.BaseCommit) {
		return nil, l.errf(
			f("base_commit"),
			"%q is not a full commit id; give all 40 lowercase hex digits",
			r.BaseCommit,
		)
	}
	if p.Issue, err = l.requiredFile(f("issue"), r.Issue, MaxIssue); err != nil {
		return nil, err
	}
	if !utf8.Valid(p.Issue) {
		return nil, l.errf(f("issue"), "%s is not valid UTF-8; save the issue text as UTF-8", r.Issue)
	}
	if p.Patch, p.PatchOversize, p.patchDigest, err = l.candidatePatch(f("patch"), r.Patch); err != nil {
		return nil, err
	}
	if p.TestPatch, err = l.optionalFile(f("test_patch"), r.TestPatch, MaxPatch); err != nil {
		return nil, err
	}
	if p.ReferencePatch, err = l.optionalFile(f("reference_patch"), r.ReferencePatch, MaxPatch); err != nil {
		return nil, err
	}
	if r.Assets != "" {
		if p.Assets, err = l.readAssets(f("assets"), r.Assets); err != nil {
			return nil, err
		}
	}
	if p.FailToPass, err = l.testList(f("fail_to_pass"), r.FailToPass, true); err != nil {
		return nil, err
	}
	if p.PassToPass, err = l.testList(f("pass_to_pass"), r.PassToPass, false); err != nil {
		return nil, err
	}
	if r.Expect != "" {
		if p.Expect = report.Verdict(r.Expect); !p.Expect.Valid() {
			return nil, l.errf(
				f("expect"),
				"%q is not a verdict; use resolved, unresolved, integrity_violation or error",
				r.Expect,
			)
		}
	}
	p.Digests = report.Digests{Patch: p.patchDigest, Issue: sha(p.Issue), Assets: assetsDigest(p.Assets)}
	if p.TestPatchPath != "" {
		p.Digests.TestPatch = sha(p.TestPatch)
	}
	return p, nil
}

// candidatePatch reads the candidate's patch. An oversize patch is the candidate's fault, not
// the suite's: the pair is refused when graded, and the rest of the batch goes on.
func (l *loader) candidatePatch(field, rel string) (data []byte, oversize bool, digest string, err error) {
	if rel == "" {
		return nil, false, "", l.errf(
			field,
			"is missing; give a file path relative to the suite directory (an empty file means an empty patch)",
		)
	}
	if data, ok := l.read[rel]; ok && int64(len(data)) <= MaxPatch {
		return data, false, sha(data), nil // checked and read for an earlier pair
	}
	full, err := l.checkFile(field, rel, MaxRepoStream)
	if err != nil {
		return nil, false, "", err
	}
	if info, _ := os.Stat(full); info.Size() > MaxPatch {
		if digest, err = fileDigest(full); err != nil {
			return nil, false, "", l.unreadable(field, rel, err)
		}
		return nil, true, digest, nil
	}
	if data, err = l.readOnce(field, rel, full); err != nil {
		return nil, false, "", err
	}
	return data, false, sha(data), nil
}

func (l *loader) testList(field string, list *[]string, required bool) ([]string, error) {
	if list == nil {
		if required {
			return nil, l.errf(field, "is missing; list the test IDs that must pass")
		}
		return nil, nil
	}
	if len(*list) == 0 {
		return nil, l.errf(field, "is an empty list; list at least one test ID, or remove the key")
	}
	if j, problem := TestIDProblem(*list); problem != "" {
		return nil, l.errf(fmt.Sprintf("%s[%d]", field, j), "%s", problem)
	}
	return *list, nil
}

// TestIDProblem says what is wrong with the first unusable test ID of a required list, and
// its index; "" when every ID is usable. Import checks an instance's lists with it, so that
// an instance the loader would refuse is refused as that instance.
func TestIDProblem(list []string) (int, string) {
	seen := map[string]bool{}
	for j, id := range list {
		if strings.TrimSpace(id) == "" || strings.HasPrefix(id, "-") || len(id) > 2000 || !utf8.ValidString(id) ||
			strings.ContainsAny(id, "\x00\n\r") {
			return j, fmt.Sprintf("%.200q is not a usable test ID; give a node id like tests/test_x.py::test_y", id)
		}
		if strings.Contains(id, "::") && shapeOf(id) == idUnbalanced {
			return j, fmt.Sprintf("%q has a closing bracket with no opening one; give the node id as pytest prints it",
				id)
		}
		if seen[id] {
			return j, fmt.Sprintf("%q is listed twice; list each test once", id)
		}
		seen[id] = true
	}
	return 0, ""
}

func (l *loader) requiredFile(field, rel string, limit int64) ([]byte, error) {
	if rel == "" {
		return nil, l.errf(field, "is missing; give a file path relative to the suite directory")
	}
	return l.readFile(field, rel, limit)
}

func (l *loader) optionalFile(field, rel string, limit int64) ([]byte, error) {
	if rel == "" {
		return nil, nil
	}
	return l.readFile(field, rel, limit)
}

// readFile reads a suite file after checking its path and size.
func (l *loader) readFile(field, rel string, limit int64) ([]byte, error) {
	if data, ok := l.read[rel]; ok && int64(len(data)) <= limit {
		return data, nil // checked and read for an earlier field
	}
	full, err := l.checkFile(field, rel, limit)
	if err != nil {
		return nil, err
	}
	return l.readOnce(field, rel, full)
}

// readOnce reads a checked suite file and keeps it: ten thousand pairs that name one test
// patch read it once. The bytes are shared, so no one may change them.
func (l *loader) readOnce(field, rel, full string) ([]byte, error) {
	data, err := os.ReadFile(full)
	if err != nil {
		return nil, l.unreadable(field, rel, err)
	}
	if l.read == nil {
		l.read = map[string][]byte{}
	}
	l.read[rel] = data
	return data, nil
}

// unreadable is a suite file that exists but cannot be read (permissions, an I/O error).
func (l *loader) unreadable(field, rel string, err error) error {
	return l.errf(field, "%s cannot be read (%v); make it readable to the user running tender", rel, pathErr(err))
}

// checkFile checks that rel is a safe suite path to a regular file within the size cap.
func (l *loader) checkFile(field, rel string, limit int64) (string, error) {
	full, info, err := l.resolve(field, rel)
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", l.errf(field, "%s is not a regular file", rel)
	}
	if info.Size() > limit {
		return "", l.errf(
			field,
			"%s is %d bytes, over the cap of %d; shrink it or split the pair",
			rel,
			info.Size(),
			limit,
		)
	}
	return full, nil
}

// resolve checks a suite-relative path: relative, no "..", no symlink on the way, and present.
func (l *loader) resolve(field, rel string) (string, fs.FileInfo, error) {
	if reRemote.MatchString(rel) {
		return "", nil, l.errf(field, "%q is a URL: remote sources are disabled; vendor the file inside the suite", rel)
	}
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, `\`) || filepath.IsAbs(rel) {
		return "", nil, l.errf(field, "%q must be a relative path inside the suite directory", rel)
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".." {
			return "", nil, l.errf(field, "%q uses \"..\"; keep every file inside the suite directory", rel)
		}
	}
	cur := l.dir
	var info fs.FileInfo
	for _, part := range strings.Split(filepath.Clean(rel), string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		var err error
		if info, err = os.Lstat(cur); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return "", nil, l.errf(field, "%s does not exist in the suite directory; check the path", rel)
		} else if err != nil {
			return "", nil, l.unreadable(field, rel, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return "", nil, l.errf(field, "%s is or passes through a symlink; suite files must be real files", rel)
		}
	}
	return cur, info, nil
}

func (l *loader) readAssets(field, rel string) ([]Asset, error) {
	root, info, err := l.resolve(field, rel)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, l.errf(field, "%s is not a directory; hidden assets are a directory of files", rel)
	}
	var assets []Asset
	var total int64
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(root, p)
		if d.Type()&fs.ModeSymlink != 0 || !(d.IsDir() || d.Type().IsRegular()) {
			return l.errf(field, "%s/%s is not a regular file or directory", rel, filepath.ToSlash(r))
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if total += fi.Size(); fi.Size() > MaxAssetFile || total > MaxAssetsTotal {
			return l.errf(
				field,
				"%s is over the asset size caps (%d per file, %d in all)",
				rel,
				MaxAssetFile,
				MaxAssetsTotal,
			)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return l.unreadable(field, rel+"/"+filepath.ToSlash(r), err)
		}
		assets = append(assets, Asset{Path: filepath.ToSlash(r), Data: data, Mode: uint32(fi.Mode().Perm())})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(assets) == 0 {
		return nil, l.errf(field, "%s holds no files; remove the key or add the assets", rel)
	}
	return assets, nil
}

// digestTree digests every file of the suite directory. Symlinks and special files anywhere
// in it are refused: the suite is data, and must be plain files.
func (l *loader) digestTree() (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(l.dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(l.dir, p)
		rel = filepath.ToSlash(rel)
		if err != nil {
			return &LoadError{
				File: rel,
				Msg:  fmt.Sprintf("cannot be read (%v); make it readable to the user running tender", pathErr(err)),
			}
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return &LoadError{File: rel, Msg: "is a symlink or special file; a suite holds only regular files"}
		}
		sum, err := fileDigest(p)
		if err != nil {
			return &LoadError{
				File: rel,
				Msg:  fmt.Sprintf("cannot be read (%v); make it readable to the user running tender", pathErr(err)),
			}
		}
		files[rel] = sum
		return nil
	})
	return files, err
}

// pathErr drops the operation and path Go puts in front of an fs error.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func digestMap(m map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(h, "%s  %s\n", m[k], k)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func assetsDigest(assets []Asset) string {
	if len(assets) == 0 {
		return ""
	}
	m := map[string]string{}
	for _, a := range assets {
		m[a.Path] = sha(a.Data)
	}
	return digestMap(m)
}

// inputDigest covers everything that decides a pair's verdict, so --resume can tell whether a
// finished result still stands. Inputs it cannot encode are an error: never a digest of less.
func inputDigest(s *Suite, p *Pair) (string, error) {
	src := s.Repositories[p.Repository]
	var srcDigest string
	if rel := src.Bundle + src.FastExport; rel != "" {
		srcDigest = s.Files[rel]
	} else {
		srcDigest = "clone:" + src.Clone
	}
	m := map[string]any{
		"verifier": s.VerifierFor(p), "protected": s.ProtectedPaths, "restored": s.RestoredPaths,
		"repo": srcDigest, "base": p.BaseCommit, "digests": p.Digests, "ref": sha(p.ReferencePatch),
		"f2p": p.FailToPass, "p2p": p.PassToPass, "expect": p.Expect,
	}
	// Each policy only when it is not the default: the digests of today's suites stay as they are.
	if src.Symlinks == gitsafe.SymlinksInTree {
		m["symlinks"] = src.Symlinks
	}
	if s.Flaky != FlakyFailed {
		m["flaky"] = s.Flaky
	}
	if s.AmbiguousIDs != AmbiguousError {
		m["ambiguous_ids"] = s.AmbiguousIDs
	}
	if s.Apply != gitsafe.ApplyStrict {
		m["apply"] = s.Apply
	}
	doc, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("its inputs cannot be digested: %w", err)
	}
	return sha(doc), nil
}

// MaxPairsFile caps a pairs_file; each of its lines is capped at MaxSuiteFile.
const MaxPairsFile = 256 << 20

// readPairsFile reads a JSON Lines file of pairs, strictly: unknown keys, a line that is not
// one JSON object, and trailing data are errors naming the line (pairs[i] is line i+1).
func (l *loader) readPairsFile(rel string) ([]PairDoc, error) {
	full, err := l.checkFile("pairs_file", rel, MaxPairsFile)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(full)
	if err != nil {
		return nil, l.unreadable("pairs_file", rel, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), MaxSuiteFile)
	var pairs []PairDoc
	n := 0
	for sc.Scan() {
		n++
		bad := func(msg string) error { return &LoadError{File: rel, Field: fmt.Sprintf("line %d", n), Msg: msg} }
		if n == 1 && bytes.HasPrefix(sc.Bytes(), []byte("\xef\xbb\xbf")) {
			return nil, bad("starts with a byte order mark (U+FEFF); save the file as UTF-8 without a BOM")
		}
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			return nil, bad("is empty; write one pair object a line, with no blank lines")
		}
		if bytes.Equal(line, []byte("null")) {
			return nil, bad("is null; write one pair object a line")
		}
		if !utf8.Valid(line) || bytes.IndexByte(line, 0) >= 0 {
			return nil, bad("is not valid UTF-8 or holds a NUL; save the file as UTF-8")
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var p PairDoc
		if err := dec.Decode(&p); err != nil {
			return nil, bad(fmt.Sprintf("is not a pair object (%v); see the README's suite format", err))
		}
		if dec.More() {
			return nil, bad("holds more than one JSON value; write one pair object a line")
		}
		pairs = append(pairs, p)
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return nil, &LoadError{File: rel, Field: fmt.Sprintf("line %d", n+1),
			Msg: fmt.Sprintf("is over %d bytes, the most one pair may take; shorten it (pairs name their files, "+
				"and hold no text)", MaxSuiteFile)}
	}
	if err := sc.Err(); err != nil {
		return nil, &LoadError{File: rel,
			Msg: fmt.Sprintf("cannot be read (%v); make it readable to the user running tender", pathErr(err))}
	}
	return pairs, nil
}
