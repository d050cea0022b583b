package report

import (
	"fmt"
	"slices"
)

// Code is a reason code. Codes are public contract: tools match on them, docs/reason-codes.md
// lists them, and every package that emits one takes it from the registry below.
type Code string

// Locus says what a reason's Path and Line point at.
type Locus string

const (
	NoLocus   Locus = ""      // no place, or only a workspace path
	PatchLine Locus = "patch" // Line is a line of the candidate patch; Path the file it touched
	TestLine  Locus = "test"  // Path and Line are the test's file and line, when the report has them
)

// CodeInfo is one entry of the registry.
type CodeInfo struct {
	Code    Code
	Origin  string // the stage that decides it, as the table in docs/reason-codes.md says
	Meaning string
	Locus   Locus
	// Verdict is what a reason of this code leads to when it ends a pair or fails a check:
	// Unresolved, IntegrityViolation or Error, never Resolved; or Note, for a code that explains
	// or records and never decides a verdict on its own. The grader's stop takes the verdict from
	// here, and so does resume when it checks that a record's verdict follows from its reasons.
	Verdict Verdict
}

// Note is the CodeInfo.Verdict of a code that decides nothing. It is not a verdict of a pair
// (Valid says false), only a mark in the registry and in the reason-code table.
const Note Verdict = "note"

// IsNote reports whether the code decides nothing.
func (ci CodeInfo) IsNote() bool { return ci.Verdict == Note }

// The registry. Origins: pipeline (the pair's own steps), gitsafe (the repository), pre-scan
// (the integrity scan of the patch), restore (evaluator paths), sentinels (forgery checks),
// reconcile (the report), sandbox (the verifier's limits), grader (infrastructure). Each entry
// ends with the verdict its code leads to (or Note); TestReasonCodesMatchTheDocs holds the
// table in docs/reason-codes.md to this list, verdict column included.
const (
	CodeEmptyPatch    Code = "empty_patch"
	CodePatchFailed   Code = "patch_failed"
	CodePatchTooLarge Code = "patch_too_large"

	CodeUnsafePath Code = "unsafe_path"
	CodeProtected  Code = "protected_path"
	CodeEvaluator  Code = "evaluator_asset"
	CodeGitPath    Code = "git_path"
	CodeShadowing  Code = "shadowing_module"

	CodeConfigUnverifiable Code = "config_section_unverifiable"
	CodeUnsafeEntry        Code = "unsafe_workspace_entry"
	CodeRestoreConflict    Code = "restore_conflict"

	CodeReportForged Code = "report_forged"
	CodeTampering    Code = "tampering"
	CodeTripwire     Code = "tripwire"
	CodeBootstrap    Code = "bootstrap_failed"
	CodeEvalChanged  Code = "evaluator_files_changed"

	CodeEvaluatorReset Code = "evaluator_files_reset"

	CodeFlaky Code = "flaky"

	CodeTestMissing      Code = "test_missing"
	CodeTestDuplicate    Code = "test_duplicate"
	CodeTestSkipped      Code = "test_skipped"
	CodeTestXFail        Code = "test_xfail"
	CodeTestFailed       Code = "test_failed"
	CodeTestError        Code = "test_error"
	CodeReportMissing    Code = "report_missing"
	CodeReportUnparsable Code = "report_unparsable"
	CodeTotalsMismatch   Code = "totals_mismatch"
	CodeExitCodeMismatch Code = "exit_code_mismatch"

	CodeSetupFailed    Code = "setup_failed"
	CodeTimeout        Code = "timeout"
	CodeOOM            Code = "oom"
	CodePidsLimit      Code = "pids_limit"
	CodeDiskFull       Code = "disk_full"
	CodeReportTooLarge Code = "report_too_large"

	CodeRepositoryRefused Code = "repository_refused"
	CodeBaseMissing       Code = "base_commit_missing"
	CodeSourceDirty       Code = "source_dirty"
	CodeHeadMismatch      Code = "head_mismatch"
	CodeUnsafeTree        Code = "unsafe_tree"

	CodeTestPatchInvalid  Code = "test_patch_invalid"
	CodeTestPatchFailed   Code = "test_patch_failed"
	CodeTestIDUnresolved  Code = "test_id_unresolved"
	CodeTestIDResolved    Code = "test_id_resolved"
	CodeTestIDExpanded    Code = "test_id_expanded"
	CodeEnvironmentBroken Code = "environment_broken"
	CodeVerifierFailed    Code = "verifier_failed"
	CodeVerifierKilled    Code = "verifier_killed"
	CodeWorkspaceFailed   Code = "workspace_failed"
	CodeHostDiskFull      Code = "host_disk_full"
	CodeInternalPanic     Code = "internal_panic"
	CodeInterrupted       Code = "interrupted"
	CodeMoreReasons       Code = "more_reasons"
)

var registry = []CodeInfo{
	{CodeEmptyPatch, "pipeline", "the candidate patch is empty; nothing ran", NoLocus, Unresolved},
	{CodePatchFailed, "pipeline", "the patch does not parse or does not apply; nothing partly applied is tested",
		NoLocus, Unresolved},
	{CodePatchTooLarge, "pipeline", "the candidate patch is over the size cap; never parsed",
		NoLocus, IntegrityViolation},

	{CodeUnsafePath, "gitsafe, pre-scan", "absolute path, `..`, symlink or submodule mode",
		PatchLine, IntegrityViolation},
	{CodeProtected, "pre-scan", "a path under `protected_paths`", PatchLine, IntegrityViolation},
	{CodeEvaluator, "pre-scan", "a path the evaluator writes (test patch outside restored paths, hidden assets)",
		PatchLine, IntegrityViolation},
	{CodeGitPath, "gitsafe, pre-scan", "a `.git` component, or a look-alike", PatchLine, IntegrityViolation},
	{CodeShadowing, "pre-scan", "a module that would shadow the test tooling", PatchLine, IntegrityViolation},

	{CodeConfigUnverifiable, "restore",
		"a mixed-purpose config whose test-runner section could not be reset verifiably",
		NoLocus, IntegrityViolation},
	{CodeUnsafeEntry, "restore", "the workspace held something the restore refuses to touch",
		NoLocus, IntegrityViolation},
	{CodeRestoreConflict, "restore", "the workspace held something the restore refuses to touch",
		NoLocus, IntegrityViolation},

	{CodeReportForged, "sentinels, bootstrap",
		"a sentinel contradicts the report, or the report or exit status is not the test process's own",
		NoLocus, IntegrityViolation},
	{CodeTampering, "bootstrap",
		"the code under test tampered with the test machinery (a tripwire that fails the check)",
		NoLocus, IntegrityViolation},
	{CodeTripwire, "bootstrap", "the code under test did something unusual that decides nothing; noted", NoLocus, Note},
	{CodeBootstrap, "bootstrap", "Tender's pytest bootstrap could not run the tests; no verdict", NoLocus, Error},
	{CodeEvalChanged, "bootstrap",
		"no longer given: an evaluator file was not what Tender restored when the tests were to start; the evaluator's " +
			"files are now written after the setup commands, read-only to them; no verdict",
		NoLocus, Error},
	{CodeFlaky, "reruns",
		"a required test's outcome differed across reruns (`--reruns`); it counts as failed unless the suite says " +
			"`flaky: excluded` and it is a pass_to_pass test that also fails on the base commit (noted)",
		NoLocus, Note},
	{CodeEvaluatorReset, "restore",
		"the candidate changed an evaluator file; it was reset before the tests ran (noted)",
		NoLocus, Note},

	{CodeTestMissing, "reconcile", "a required test is not in the report", NoLocus, Unresolved},
	{CodeTestDuplicate, "reconcile", "a required test is reported more than once", NoLocus, Unresolved},
	{CodeTestSkipped, "reconcile", "a required test was skipped", TestLine, Unresolved},
	{CodeTestXFail, "reconcile", "a required test was an expected failure", TestLine, Unresolved},
	{CodeTestFailed, "reconcile", "a required test failed", TestLine, Unresolved},
	{CodeTestError, "reconcile", "a required test errored", TestLine, Unresolved},
	{CodeReportMissing, "reconcile", "the runner wrote no report", NoLocus, Unresolved},
	{CodeReportUnparsable, "reconcile", "the report cannot be parsed", NoLocus, Unresolved},
	{CodeTotalsMismatch, "reconcile", "the report's declared totals disagree with its cases", NoLocus, Unresolved},
	{CodeExitCodeMismatch, "reconcile", "the runner's exit code disagrees with the cases", NoLocus, Unresolved},

	{CodeSetupFailed, "sandbox", "a setup command of the suite failed; the tests did not run", NoLocus, Unresolved},
	{CodeTimeout, "sandbox", "killed at the deadline", NoLocus, Unresolved},
	{CodeOOM, "sandbox", "out of memory", NoLocus, Unresolved},
	{CodePidsLimit, "sandbox", "the process limit was reached", NoLocus, Unresolved},
	{CodeDiskFull, "sandbox", "a tmpfs filled up", NoLocus, Unresolved},
	{CodeReportTooLarge, "sandbox", "the report was over the size cap and was not read", NoLocus, Unresolved},

	{CodeRepositoryRefused, "gitsafe", "the repository cannot be trusted", NoLocus, Error},
	{CodeBaseMissing, "gitsafe", "the base commit is not in the repository", NoLocus, Error},
	{CodeSourceDirty, "gitsafe", "the operator's clone has uncommitted changes", NoLocus, Error},
	{CodeHeadMismatch, "gitsafe", "the clone's HEAD is not the pinned base commit", NoLocus, Error},
	{CodeUnsafeTree, "gitsafe", "the base tree holds a symlink, a submodule or a .git entry", NoLocus, Error},

	{CodeTestPatchInvalid, "grader", "the evaluator's test patch does not parse", NoLocus, Error},
	{CodeTestPatchFailed, "grader", "the evaluator's test patch does not apply", NoLocus, Error},
	{CodeTestIDUnresolved, "baseline",
		"a required test ID looks truncated and names no collected test, or several; no verdict",
		NoLocus, Error},
	{CodeTestIDResolved, "baseline",
		"a truncated required test ID was resolved to the one collected test it names (noted)",
		NoLocus, Note},
	{CodeTestIDExpanded, "baseline",
		"a truncated required test ID names several collected tests; under `ambiguous_ids: all` each is required " +
			"in its place (noted)",
		NoLocus, Note},
	{CodeEnvironmentBroken, "baseline",
		"collection fails the same way on the base commit with the test patch alone: the environment, not the patch; " +
			"no verdict",
		NoLocus, Error},
	{CodeVerifierFailed, "grader", "a verifier could not be run", NoLocus, Error},
	{CodeVerifierKilled, "grader", "a verifier was killed from outside (not at its deadline, not for memory)",
		NoLocus, Error},
	{CodeWorkspaceFailed, "grader", "a workspace could not be prepared", NoLocus, Error},
	{CodeHostDiskFull, "grader", "the host's disk (most often the temporary directory) filled up", NoLocus, Error},
	{CodeInternalPanic, "grader", "Tender itself failed on this pair", NoLocus, Error},
	{CodeInterrupted, "grader", "the run was interrupted", NoLocus, Error},
	{CodeMoreReasons, "grader", "more reasons than a check or pair keeps; their count", NoLocus, Note},
}

// Codes returns the registry, in the order of the table in docs/reason-codes.md.
func Codes() []CodeInfo { return slices.Clone(registry) }

// Lookup returns the registry entry of c.
func Lookup(c Code) (CodeInfo, bool) {
	i := slices.IndexFunc(registry, func(ci CodeInfo) bool { return ci.Code == c })
	if i < 0 {
		return CodeInfo{}, false
	}
	return registry[i], true
}

// DistinctCodes lists the codes of rs, each once, in the order they first appear.
func DistinctCodes(rs []Reason) []string {
	var codes []string
	for _, r := range rs {
		if !slices.Contains(codes, string(r.Code)) {
			codes = append(codes, string(r.Code))
		}
	}
	return codes
}

// Reason caps: a candidate controls how many reasons its report can cause.
const (
	MaxCheckReasons = 20
	MaxPairReasons  = 40
)

// CapReasons keeps the first n reasons and, when there were more, one more_reasons reason
// that counts them.
func CapReasons(rs []Reason, n int) []Reason {
	if len(rs) <= n {
		return rs
	}
	out := slices.Clone(rs[:n])
	return append(
		out,
		Reason{Code: CodeMoreReasons, Detail: fmt.Sprintf("and %d more reasons, not recorded", len(rs)-n)},
	)
}
