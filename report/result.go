package report

import "time"

// SchemaVersion is the version of results.json and results.jsonl. Bump it on any change that
// is not a pure addition of an optional field.
const SchemaVersion = "tender.results/v1"

// Verdict is the grade of one pair.
type Verdict string

const (
	Resolved           Verdict = "resolved"
	Unresolved         Verdict = "unresolved"
	IntegrityViolation Verdict = "integrity_violation"
	Error              Verdict = "error"
)

// Valid reports whether v is one of the four verdicts.
func (v Verdict) Valid() bool {
	switch v {
	case Resolved, Unresolved, IntegrityViolation, Error:
		return true
	}
	return false
}

// Reason is a machine-readable reason code with a human-readable detail. Codes are stable and
// documented in the README; Detail is free text and may name a path and a patch line.
type Reason struct {
	Code   Code   `json:"code"`
	Detail string `json:"detail,omitempty"`
	Path   string `json:"path,omitempty"`
	Line   int    `json:"line,omitempty"`
}

// TestStatus is the reconciled status of one required test.
type TestStatus string

const (
	TestPassed    TestStatus = "passed"
	TestFailed    TestStatus = "failed"
	TestError     TestStatus = "error"
	TestSkipped   TestStatus = "skipped"
	TestXFail     TestStatus = "xfail"
	TestXPass     TestStatus = "xpass"
	TestMissing   TestStatus = "missing"
	TestDuplicate TestStatus = "duplicate"
	// TestExcluded: a flaky pass_to_pass test dropped from the required set under the suite's
	// `flaky: excluded` policy (never a fail_to_pass test).
	TestExcluded TestStatus = "excluded"
)

// Fingerprint identifies the workspace a check ran in, recorded before the patch is applied.
type Fingerprint struct {
	Commit      string `json:"commit"`
	Tree        string `json:"tree"`
	IndexDigest string `json:"index_digest,omitempty"`
	Clean       bool   `json:"clean"`
}

// Resources is what the engine reported about one check's use of the machine.
type Resources struct {
	WallMillis      int64 `json:"wall_ms"`
	PeakMemory      int64 `json:"peak_memory_bytes,omitempty"`
	OOMKilled       bool  `json:"oom_killed,omitempty"`
	TimedOut        bool  `json:"timed_out,omitempty"`
	StdoutBytes     int64 `json:"stdout_bytes"`
	StderrBytes     int64 `json:"stderr_bytes"`
	OutputTruncated bool  `json:"output_truncated,omitempty"`
}

// Check is the record of one verifier run (target or regression).
type Check struct {
	Name        string                `json:"name"` // "target" or "regression"
	Passed      bool                  `json:"passed"`
	Backend     string                `json:"backend"`
	Isolated    bool                  `json:"isolated"`
	ImageID     string                `json:"image_id,omitempty"`
	ExitCode    int                   `json:"exit_code"`
	Fingerprint Fingerprint           `json:"fingerprint"`
	Tests       map[string]TestStatus `json:"tests"`
	Reasons     []Reason              `json:"reasons,omitempty"`
	ApplyMethod string                `json:"apply_method,omitempty"` // how the candidate patch applied
	Resources   Resources             `json:"resources"`
	LogFile     string                `json:"log_file,omitempty"`   // bundle-relative
	JUnitFile   string                `json:"junit_file,omitempty"` // bundle-relative
	// The bundle keeps a bounded share of each pair (docs/outputs.md): when it keeps only the
	// head of a check's report (a refused report's first MiB, or what is left of the pair's
	// share), JUnitTruncated says so and JUnitBytes and JUnitSHA256 are the whole report's.
	JUnitTruncated bool   `json:"junit_truncated,omitempty"`
	JUnitBytes     int64  `json:"junit_bytes,omitempty"`
	JUnitSHA256    string `json:"junit_sha256,omitempty"`
	LogTruncated   bool   `json:"log_truncated,omitempty"` // the log was cut at the pair's share
}

// ApplyHunk says where a fallback of `apply: swebench` put one hunk of the candidate patch.
type ApplyHunk struct {
	Path   string `json:"path"`
	Hunk   int    `json:"hunk"`   // 1-based, within its file
	Line   int    `json:"line"`   // 1-based line of the base file where the hunk's old side starts
	Offset int    `json:"offset"` // Line minus the line the hunk header names
	Fuzz   int    `json:"fuzz"`   // context lines ignored at each end of the hunk
}

// Digests are sha256 hex digests of a pair's inputs.
type Digests struct {
	Patch     string `json:"patch"`
	Issue     string `json:"issue"`
	TestPatch string `json:"test_patch,omitempty"`
	Assets    string `json:"assets,omitempty"` // digest over the sorted asset list
}

// PairResult is one line of results.jsonl and one entry of results.json.
type PairResult struct {
	Schema            string   `json:"schema"`
	ID                string   `json:"id"`
	Repository        string   `json:"repository"`
	SuiteFile         string   `json:"suite_file,omitempty"` // the suite manifest, for annotations
	Line              int      `json:"line,omitempty"`       // the pair's entry in the suite manifest
	PatchFile         string   `json:"patch_file,omitempty"` // the candidate patch, suite-relative, for annotations
	Verdict           Verdict  `json:"verdict"`
	Expect            Verdict  `json:"expect,omitempty"`
	ExpectMet         *bool    `json:"expect_met,omitempty"`
	Reasons           []Reason `json:"reasons,omitempty"`
	RequestedCommit   string   `json:"requested_commit"`
	ExecutedCommit    string   `json:"executed_commit,omitempty"`
	TestedAsSubmitted bool     `json:"tested_as_submitted"`
	EmptyPatch        bool     `json:"empty_patch,omitempty"`
	Digests           Digests  `json:"digests"`
	Checks            []Check  `json:"checks,omitempty"`
	FailToPass        []string `json:"fail_to_pass"`
	PassToPass        []string `json:"pass_to_pass"`
	// ResolvedTestIDs maps each truncated required ID, as the suite gives it, to the one
	// collected test it names; the checks required the full IDs.
	ResolvedTestIDs map[string]string `json:"resolved_test_ids,omitempty"`
	// StandInTestIDs maps each truncated required ID that names several collected tests, under
	// the suite's `ambiguous_ids: all`, to every test that stood in for it, in collection
	// order; the checks required each of them.
	StandInTestIDs map[string][]string `json:"stand_in_test_ids,omitempty"`
	// ApplyMethod is how the candidate patch was applied (git_apply, git_apply_reject, fuzz),
	// when a check applied it; ApplyHunks says where each hunk went after a fuzz step.
	ApplyMethod string      `json:"apply_method,omitempty"`
	ApplyHunks  []ApplyHunk `json:"apply_hunks,omitempty"`
	// SWEBenchApply is, for a patch Tender refused (patch_failed), the step of SWE-bench's chain
	// that applies it (git_apply_reject, fuzz): under `apply: strict`, git apply alone refused it;
	// under `apply: swebench`, a hunk fuzzed onto a file the evaluator resets. "" otherwise.
	SWEBenchApply  string    `json:"swebench_apply_method,omitempty"`
	Started        time.Time `json:"started"`      // volatile
	DurationMillis int64     `json:"duration_ms"`  // volatile
	InputDigest    string    `json:"input_digest"` // over every input of the pair; used by --resume
}

// Results is results.json: the whole batch.
type Results struct {
	Schema       string          `json:"schema"`
	Tool         string          `json:"tool"` // "tender <version>"
	Suite        string          `json:"suite"`
	SuiteVersion string          `json:"suite_version"`
	SuiteDigest  string          `json:"suite_digest"`
	Shard        string          `json:"shard,omitempty"`
	Backend      string          `json:"backend"`
	Started      time.Time       `json:"started"`  // volatile
	Finished     time.Time       `json:"finished"` // volatile
	Counts       map[Verdict]int `json:"counts"`
	Pairs        []PairResult    `json:"pairs"`
	// Model is the model whose patches the suite holds (SWE-bench's model_name_or_path).
	Model string `json:"model,omitempty"`
	// NoPrediction and NotImported are instances of an imported SWE-bench file that are not
	// pairs: the predictions did not cover them, or import skipped them (--keep-going). The
	// SWE-bench report counts them, as SWE-bench counts every instance of its dataset.
	NoPrediction []string `json:"no_prediction,omitempty"`
	NotImported  []string `json:"not_imported,omitempty"`
	// ShardPlan is how the pairs were balanced over the shards (grade --durations); nil for
	// the hash of the pair id.
	ShardPlan *ShardPlan `json:"shard_plan,omitempty"`
	// Comparison is this batch compared with a baseline bundle (grade or merge --baseline);
	// nil when there was none.
	Comparison *Comparison `json:"comparison,omitempty"`
}
