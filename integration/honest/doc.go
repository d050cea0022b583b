// Package honest holds the end-to-end test that grades the honest corpus (fixtures/honest: each
// pair an honest reference fix under one real test style) in real verifiers, twice: every pair
// must come out resolved both times, whatever sentinels were drawn. It was part of
// integration/suites, and is a package of its own so that go test runs it beside the attack
// suites, each package within Go's default ten minutes. Its TestMain ensures the pytest
// verifier image first, and fails the package, never skips, when the engine cannot be reached.
// The package holds no code of its own: only tests.
package honest
