// Package cli holds the end-to-end tests of the tender program (internal/cli): the real
// program, driven through cli.Main and as a built binary, grades real suites with real git and
// the real Docker engine, and is attacked; integration/lifecycle has it interrupted, killed and
// starved of disk. Its TestMain ensures the verifier images before any test runs, and fails the
// package, never skips, when the engine cannot be reached. The program's tests that need no
// engine (inputs, publish plans, merges, lint) live beside it in internal/cli. The package
// holds no code of its own: only tests.
package cli
