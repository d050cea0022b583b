// Package lifecycle holds the end-to-end tests of a grading run's processes, from outside and
// from inside the verifier: the tender program interrupted, hung up, killed with -9 and
// resumed, its --out removed or filled, a verifier killed from outside; and the candidate's
// processes that outlive a test or a setup command, read the nonce, or kill the bootstrap's
// parent. No container, temporary directory or process may be left, and no result lost or
// recorded twice. They were part of integration/cli, and are a package of their own so that
// go test runs them beside it, each package within Go's default ten minutes. Its TestMain
// ensures the pytest verifier image first, and fails the package, never skips, when the engine
// cannot be reached. The package holds no code of its own: only tests.
package lifecycle
