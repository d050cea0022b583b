package report

import (
	"fmt"
	"slices"
)

// Code is a reason code. Codes are public contract: tools match on them, the README lists
// them, and every package that emits one takes it from the registry below.
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
	Origin  string // the stage that decides it, as the README's table says
	Meaning string
	Locus   Locus
	// Note: the code explains or records; it never decides a verdict on its own.
	Note bool
}

// The registry. Origins: pipeline (the pair's own steps), gitsafe (the repository), pre-scan
// (the integrity scan of the patch), restore (evaluator paths), sentinels (forgery checks),
// reconcile (the report), sandbox (the verifier's limits), grader (infrastructure).
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
	{CodeEmptyPatch, "pipeline", "the candidate patch is empty; nothing ran", NoLocus, false},
	{CodePatchFailed, "pipeline", "the patch does not parse or does not apply; nothing partly applied is tested", NoLocus, false},
	{CodePatchTooLarge, "pipeline", "the candidate patch is over the size cap; never parsed", NoLocus, false},

	{CodeUnsafePath, "gitsafe, pre-scan", "absolute path, `..`, symlink or submodule mode", PatchLine, false},
	{CodeProtected, "pre-scan", "a path under `protected_paths`", PatchLine, false},
	{CodeEvaluator, "pre-scan", "a path the evaluator writes (test patch outside restored paths, hidden assets)", PatchLine, false},
	{CodeGitPath, "gitsafe, pre-scan", "a `.git` component, or a look-alike", PatchLine, false},
	{CodeShadowing, "pre-scan", "a module that would shadow the test tooling", PatchLine, false},

	{CodeConfigUnverifiable, "restore", "a mixed-purpose config whose test-runner section could not be reset verifiably", NoLocus, false},
	{CodeUnsafeEntry, "restore", "the workspace held something the restore refuses to touch", NoLocus, false},
	{CodeRestoreConflict, "restore", "the workspace held something the restore refuses to touch", NoLocus, false},

	{CodeReportForged, "sentinels, bootstrap", "a sentinel contradicts the report, or the report or exit status is not the test process's own", NoLocus, false},
	{CodeTampering, "bootstrap", "the code under test tampered with the test machinery (a tripwire that fails the check)", NoLocus, false},
	{CodeTripwire, "bootstrap", "the code under test did something unusual that decides nothing; noted", NoLocus, true},
	{CodeBootstrap, "bootstrap", "Tender's pytest bootstrap could not run the tests; no verdict", NoLocus, false},
	{CodeFlaky, "reruns", "a required test's outcome differed across reruns (`--reruns`); it counts as failed unless the suite says `flaky: excluded` and it is a pass_to_pass test that also fails on the base commit (noted)", NoLocus, true},
	{CodeEvaluatorReset, "restore", "the candidate changed an evaluator file; it was reset before the tests ran (noted)", NoLocus, true},

	{CodeTestMissing, "reconcile", "a required test is not in the report", NoLocus, false},
	{CodeTestDuplicate, "reconcile", "a required test is reported more than once", NoLocus, false},
	{CodeTestSkipped, "reconcile", "a required test was skipped", TestLine, false},
	{CodeTestXFail, "reconcile", "a required test was an expected failure", TestLine, false},
	{CodeTestFailed, "reconcile", "a required test failed", TestLine, false},
	{CodeTestError, "reconcile", "a required test errored", TestLine, false},
	{CodeReportMissing, "reconcile", "the runner wrote no report", NoLocus, false},
	{CodeReportUnparsable, "reconcile", "the report cannot be parsed", NoLocus, false},
	{CodeTotalsMismatch, "reconcile", "the report's declared totals disagree with its cases", NoLocus, false},
	{CodeExitCodeMismatch, "reconcile", "the runner's exit code disagrees with the cases", NoLocus, false},

	{CodeSetupFailed, "sandbox", "a setup command of the suite failed; the tests did not run", NoLocus, false},
	{CodeTimeout, "sandbox", "killed at the deadline", NoLocus, false},
	{CodeOOM, "sandbox", "out of memory", NoLocus, false},
	{CodePidsLimit, "sandbox", "the process limit was reached", NoLocus, false},
	{CodeDiskFull, "sandbox", "a tmpfs filled up", NoLocus, false},
	{CodeReportTooLarge, "sandbox", "the report was over the size cap and was not read", NoLocus, false},

	{CodeRepositoryRefused, "gitsafe", "the repository cannot be trusted", NoLocus, false},
	{CodeBaseMissing, "gitsafe", "the base commit is not in the repository", NoLocus, false},
	{CodeSourceDirty, "gitsafe", "the operator's clone has uncommitted changes", NoLocus, false},
	{CodeHeadMismatch, "gitsafe", "the clone's HEAD is not the pinned base commit", NoLocus, false},
	{CodeUnsafeTree, "gitsafe", "the base tree holds a symlink, a submodule or a .git entry", NoLocus, false},

	{CodeTestPatchInvalid, "grader", "the evaluator's test patch does not parse", NoLocus, false},
	{CodeTestPatchFailed, "grader", "the evaluator's test patch does not apply", NoLocus, false},
	{CodeTestIDUnresolved, "baseline", "a required test ID looks truncated and names no collected test, or several; no verdict", NoLocus, false},
	{CodeTestIDResolved, "baseline", "a truncated required test ID was resolved to the one collected test it names (noted)", NoLocus, true},
	{CodeEnvironmentBroken, "baseline", "collection fails the same way on the base commit with the test patch alone: the environment, not the patch; no verdict", NoLocus, false},
	{CodeVerifierFailed, "grader", "a verifier could not be run", NoLocus, false},
	{CodeVerifierKilled, "grader", "a verifier was killed from outside (not at its deadline, not for memory)", NoLocus, false},
	{CodeWorkspaceFailed, "grader", "a workspace could not be prepared", NoLocus, false},
	{CodeHostDiskFull, "grader", "the host's disk (most often the temporary directory) filled up", NoLocus, false},
	{CodeInternalPanic, "grader", "Tender itself failed on this pair", NoLocus, false},
	{CodeInterrupted, "grader", "the run was interrupted", NoLocus, false},
	{CodeMoreReasons, "grader", "more reasons than a check or pair keeps; their count", NoLocus, true},
}

// Codes returns the registry, in the README's order.
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
	return append(out, Reason{Code: CodeMoreReasons, Detail: fmt.Sprintf("and %d more reasons, not recorded", len(rs)-n)})
}
