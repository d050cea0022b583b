// Package realworld holds the end-to-end tests that grade real projects: astroid's SWE-bench
// instances and the Debian source packages of fixtures/realworld, each in the environment its
// suite names (built from Debian's packages), against SWE-bench's verdicts; and a prebuilt
// instance image in the SWE-bench style, with its own copy of the project. They were part of
// integration/envs, and are a package of their own so that go test runs them beside it, each
// package within Go's default ten minutes. Its TestMain ensures both verifier images first,
// and fails the package, never skips, when the engine cannot be reached. The package holds no
// code of its own: only tests.
package realworld
