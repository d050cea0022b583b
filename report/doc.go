// Package report turns what the verifiers produced into checks and outputs. It reconciles a
// parsed JUnit report against the required test IDs, owns the registry of reason codes and
// the layout of the evidence bundle (file names, pair directories, a strict reader of
// results.json), and writes results.json, results.jsonl, tender-results.xml and summary.md. It
// lays out the SWE-bench files and summary.md's SWE-bench column that grader/swebench makes
// (SWEBenchOutputs), and knows none of SWE-bench's rules. It holds the shard partition (Shard)
// and the rules that join the bundles of `grade --shard k/n` jobs into one (PlanMerge). Its
// subpackages parse JUnit (junit), seal and verify the bundle (bundle) and publish it to GitHub
// (github).
//
// report never runs candidate code and never runs git, and it decides no pair's verdict: its
// registry says which verdict each reason code leads to, and grader applies it.
package report
