// Package suite is Tender's suite format and its loader: tender.yaml (or its pairs_file), the
// files it names, and what they decide (repositories, the verifier and its environments, the
// protected and restored paths, each pair's required tests). Load reads, checks and digests
// every file of a suite before anything runs, and every error it returns names the file and
// field and says what to do.
//
// suite only reads: it never runs a verifier, git or any command, never writes a file, and
// never reads anything a candidate wrote except as the bytes of its patch.
package suite

import (
	"errors"
	"fmt"
	"time"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/integrity"
	"github.com/tender-grader/tender/report"
)

// ErrBadSuite marks every error that comes from the suite's own files: exit code 2.
var ErrBadSuite = errors.New("bad suite")

// LoadError is one problem in a suite file, written for the person who must fix it.
type LoadError struct {
	File  string // suite-relative file, e.g. "tender.yaml"
	Field string // e.g. "pairs[2].base_commit"
	Msg   string // what is wrong and what to do
}

func (e *LoadError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
}

func (e *LoadError) Unwrap() error { return ErrBadSuite }

// Size caps for suite files.
const (
	MaxSuiteFile   = 1 << 20
	MaxIssue       = 256 << 10
	MaxPatch       = gitsafe.MaxPatchBytes // the parser's own cap: a patch the loader keeps is one gitsafe will read
	MaxAssetFile   = 10 << 20
	MaxAssetsTotal = 100 << 20
	MaxRepoStream  = 512 << 20
	// MaxEnvContext caps a dockerfile environment's build context (every file of its
	// directory). The context is streamed to the engine, never held in memory; the cap only
	// catches a directory given by mistake (a home directory), and fits real stacks: pyvista's
	// VTK wheels and libraries are 265 MiB.
	MaxEnvContext = 2 << 30
)

// Runner names.
const (
	RunnerPytest  = "pytest"
	RunnerGo      = "go"
	RunnerCommand = "command"
)

// Flaky policies (the suite's `flaky:` key).
const (
	FlakyFailed   = "failed"   // a flaky required test counts as failed (the default)
	FlakyExcluded = "excluded" // a flaky pass_to_pass test that also fails on the base commit is dropped
)

// Policies for a truncated test ID that names several collected tests (the suite's
// `ambiguous_ids:` key).
const (
	AmbiguousError = "error" // the pair ends as error, test_id_unresolved (the default)
	AmbiguousAll   = "all"   // every test the ID names is required in its place
)

// ValidAmbiguousIDs reports whether v is a value of the `ambiguous_ids` key ("" is the default).
func ValidAmbiguousIDs(v string) bool { return v == "" || v == AmbiguousError || v == AmbiguousAll }

// ValidApply reports whether v is a value of the `apply` key ("" is the default).
func ValidApply(v string) bool {
	_, err := gitsafe.ParseApplyPolicy(v)
	return err == nil
}

// Suite is a loaded, validated suite. Every input file has been read or digested.
type Suite struct {
	Dir            string
	Name           string
	Version        string
	Repositories   map[string]RepoSource
	Verifier       Verifier
	Environments   map[string]*Environment // by name; see VerifierFor
	ProtectedPaths []string
	RestoredPaths  []string
	Protected      *integrity.Matcher
	Restored       *integrity.Matcher
	Flaky          string // FlakyFailed or FlakyExcluded: what a required test found flaky by --reruns counts as
	AmbiguousIDs   string // AmbiguousError or AmbiguousAll: what a truncated ID that names several tests means
	// Apply is how a candidate patch is applied: gitsafe.ApplyStrict (git apply alone, the
	// default) or gitsafe.ApplySWEBench (SWE-bench's fallback chain).
	Apply  gitsafe.ApplyPolicy
	Pairs  []*Pair
	Files  map[string]string // suite-relative path -> sha256 of every file in the suite directory
	Digest string            // sha256 over the sorted Files list
	Import ImportInfo        // what tender import recorded: the model, instances that are not pairs

	repoEnv map[string]string // repository ID -> its environment, while pairs load
}

// RepoSource is where a repository ID's Git objects come from (exactly one of Bundle,
// FastExport and Clone is set), and what its trees may hold.
type RepoSource struct {
	Bundle     string // suite-relative
	FastExport string // suite-relative
	Clone      string // operator-mapped local clone (--repo ID=PATH); never from the suite
	// Symlinks is the repository's `symlinks:` setting, SymlinksRefuse unless the suite says
	// in-tree (whatever the source, a mapped clone included).
	Symlinks gitsafe.Symlinks
}

// Verifier is the suite's verifier configuration, defaults applied.
type Verifier struct {
	Image   string
	Runner  string
	Command []string
	Setup   [][]string // argvs run before the test command, in the same verifier
	Post    [][]string // argvs run after it
	Timeout time.Duration
	CPUs    float64
	Memory  int64
	Pids    int64
	Disk    int64
	Env     map[string]string
	PassEnv []string
	Plugins []string
	// Ini are ini options pytest is given as -o KEY=VALUE (PytestOptions). Left out of the
	// digests when empty, so the digests of suites without them stay as they were.
	Ini map[string]string `json:",omitempty"`
	// PythonPath lists workspace-relative directories (a src/ layout) that the pytest
	// bootstrap puts on sys.path after pytest and its plugins are imported.
	PythonPath []string
	// Python is the test interpreter's path in the image ("" is python3); ProjectCopy the
	// image's own copy of the project, which the bootstrap takes off sys.path (prebuilt.go).
	// Both are left out of the digests when empty.
	Python      string `json:",omitempty"`
	ProjectCopy string `json:",omitempty"`
}

// Interpreter is the command that runs the test interpreter.
func (v Verifier) Interpreter() string {
	if v.Python != "" {
		return v.Python
	}
	return "python3"
}

// Pair is one issue/patch pair with its inputs read and digested.
type Pair struct {
	ID            string
	Repository    string
	Environment   string // name in Suite.Environments, or "" for the suite's verifier
	BaseCommit    string
	IssuePath     string
	PatchPath     string
	TestPatchPath string
	AssetsPath    string
	ReferencePath string
	FailToPass    []string
	PassToPass    []string
	Expect        report.Verdict
	Line          int // line of the pair's entry in tender.yaml, for annotations

	Issue          []byte
	Patch          []byte // nil when PatchOversize
	PatchOversize  bool   // the candidate patch is over MaxPatch; it is refused at grading
	patchDigest    string
	TestPatch      []byte
	ReferencePatch []byte
	Assets         []Asset
	Digests        report.Digests
	InputDigest    string // over every input of the pair and the suite policy; keys --resume
}

// Asset is one hidden evaluator file, read at load time.
type Asset struct {
	Path string // relative to the assets directory, slash-separated
	Data []byte
	Mode uint32
}
