// Package envs holds the end-to-end tests of what a check runs in and where: environments
// built from Debian packages (debootstrap from a mirror) and Dockerfiles with their build
// network, and a pool of engines (a second dockerd, TLS); integration/realworld grades real
// projects and prebuilt instance images. They are a package of their own, apart from
// integration/cli, so that go test runs them beside the program's other end-to-end tests, and
// each package stays within go test's ten minutes. Its TestMain ensures both verifier images
// first, and fails the package, never skips, when the engine cannot be reached. The package
// holds no code of its own: only tests.
package envs
