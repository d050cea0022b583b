// Package pyboot holds the end-to-end tests of grader/pyboot: the real bootstrap runs in the
// real verifier image, on the demo project with the evaluator's test patch, against honest
// fixes and planted attacks, and what it reports is judged as the grader judges it. Its
// TestMain ensures the pytest image before any test runs, and fails the package, never skips,
// when the engine cannot be reached. The control-protocol and judge tests, which need no
// engine, live beside the code in grader/pyboot. The package holds no code of its own: only
// tests.
package pyboot
