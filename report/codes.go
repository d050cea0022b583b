package report

import "slices"

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

	CodeTestPatchInvalid Code = "test_patch_invalid"
	CodeTestPatchFailed  Code = "test_patch_failed"
	CodeVerifierFailed   Code = "verifier_failed"
	CodeVerifierKilled   Code = "verifier_killed"
	CodeWorkspaceFailed  Code = "workspace_failed"
	CodeHostDiskFull     Code = "host_disk_full"
	CodeInternalPanic    Code = "internal_panic"
	CodeInterrupted      Code = "interrupted"
)

var registry = []CodeInfo{
	{CodeEmptyPatch, "pipeline", "the candidate patch is empty; nothing ran", NoLocus},
	{CodePatchFailed, "pipeline", "the patch does not parse or does not apply; nothing partly applied is tested", NoLocus},
	{CodePatchTooLarge, "pipeline", "the candidate patch is over the size cap; never parsed", NoLocus},

	{CodeUnsafePath, "gitsafe, pre-scan", "absolute path, `..`, symlink or submodule mode", PatchLine},
	{CodeProtected, "pre-scan", "a path under `protected_paths`", PatchLine},
	{CodeEvaluator, "pre-scan", "a path the evaluator writes (test patch outside restored paths, hidden assets)", PatchLine},
	{CodeGitPath, "pre-scan", "a `.git` component, or a look-alike", PatchLine},
	{CodeShadowing, "pre-scan", "a module that would shadow the test tooling", PatchLine},

	{CodeConfigUnverifiable, "restore", "a mixed-purpose config whose test-runner section could not be reset verifiably", NoLocus},
	{CodeUnsafeEntry, "restore", "the workspace held something the restore refuses to touch", NoLocus},
	{CodeRestoreConflict, "restore", "the workspace held something the restore refuses to touch", NoLocus},

	{CodeReportForged, "sentinels", "a sentinel test was flipped or dropped, or the exit status disagrees", NoLocus},

	{CodeTestMissing, "reconcile", "a required test is not in the report", NoLocus},
	{CodeTestDuplicate, "reconcile", "a required test is reported more than once", NoLocus},
	{CodeTestSkipped, "reconcile", "a required test was skipped", TestLine},
	{CodeTestXFail, "reconcile", "a required test was an expected failure", TestLine},
	{CodeTestFailed, "reconcile", "a required test failed", TestLine},
	{CodeTestError, "reconcile", "a required test errored", TestLine},
	{CodeReportMissing, "reconcile", "the runner wrote no report", NoLocus},
	{CodeReportUnparsable, "reconcile", "the report cannot be parsed", NoLocus},
	{CodeTotalsMismatch, "reconcile", "the report's declared totals disagree with its cases", NoLocus},
	{CodeExitCodeMismatch, "reconcile", "the runner's exit code disagrees with the cases", NoLocus},

	{CodeTimeout, "sandbox", "killed at the deadline", NoLocus},
	{CodeOOM, "sandbox", "out of memory", NoLocus},
	{CodePidsLimit, "sandbox", "the process limit was reached", NoLocus},
	{CodeDiskFull, "sandbox", "a tmpfs filled up", NoLocus},
	{CodeReportTooLarge, "sandbox", "the report was over the size cap and was not read", NoLocus},

	{CodeRepositoryRefused, "gitsafe", "the repository cannot be trusted", NoLocus},
	{CodeBaseMissing, "gitsafe", "the base commit is not in the repository", NoLocus},
	{CodeSourceDirty, "gitsafe", "the operator's clone has uncommitted changes", NoLocus},
	{CodeHeadMismatch, "gitsafe", "the clone's HEAD is not the pinned base commit", NoLocus},
	{CodeUnsafeTree, "gitsafe", "the base tree holds a symlink, a submodule or a .git entry", NoLocus},

	{CodeTestPatchInvalid, "grader", "the evaluator's test patch does not parse", NoLocus},
	{CodeTestPatchFailed, "grader", "the evaluator's test patch does not apply", NoLocus},
	{CodeVerifierFailed, "grader", "a verifier could not be run", NoLocus},
	{CodeVerifierKilled, "grader", "a verifier was killed from outside (not at its deadline, not for memory)", NoLocus},
	{CodeWorkspaceFailed, "grader", "a workspace could not be prepared", NoLocus},
	{CodeHostDiskFull, "grader", "the host's disk filled up (the temporary directory, most often); free space and resume", NoLocus},
	{CodeInternalPanic, "grader", "Tender itself failed on this pair", NoLocus},
	{CodeInterrupted, "grader", "the run was interrupted", NoLocus},
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
