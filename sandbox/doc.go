// Package sandbox runs one verifier check in a fresh, locked-down box and reports what
// happened: exit code, bounded output, the JUnit report, resource use, OOM and timeout.
//
// The Docker backend is the default. Each check gets a brand-new container with no network,
// no capabilities, no-new-privileges, a read-only root, user 65532, CPU, memory (no swap) and
// pids limits, and tmpfs mounts for the workspace. The workspace travels as a tar stream into
// the container's main process; two execs then run the command and read the counters and
// the JUnit report back. The package also builds the offline verifier images from a
// debootstrap rootfs. README.md lists what the engine enforces and where it stops.
//
// The local backend runs a subprocess on the host. It exists for trusted fixtures only, it
// refuses to start unless the caller says the code is trusted, and it marks every result
// "local backend: not isolated".
//
// This package must never bind-mount a host path into a container, never pass a host
// environment variable that the suite did not name, and never leave a container of a
// finished, timed-out or cancelled check behind.
package sandbox
