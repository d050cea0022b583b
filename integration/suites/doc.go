// Package suites holds the end-to-end tests that grade whole fixture suites in real verifiers:
// the attack suites (every expect met, only the controls resolved, no canary anywhere) and the
// gaps suite (the verdicts the threat model claims); the honest corpus is integration/honest's.
// They are a package of their own, apart from integration/cli, so that go test runs them beside
// the program's other end-to-end tests rather than after them. Its TestMain ensures the pytest
// verifier image first, and fails the package, never skips, when the engine cannot be reached.
// The package holds no code of its own: only tests.
package suites
