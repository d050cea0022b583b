// Package grader grades a loaded suite (grader/suite): it runs each pair's pipeline in fresh
// verifiers under bounded concurrency and decides verdicts, validates a suite's own instances
// (ValidateInstances), and decides which records of an earlier run a resumed run keeps
// (Resume). It never trusts anything a candidate wrote: required test IDs, commands and
// policy come from the suite files alone, and the suite comes to it loaded: it parses no suite
// file itself.
package grader
