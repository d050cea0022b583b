// Package docker is the default verifier backend: each check runs in a brand-new, locked-down
// container through the Docker Engine API. It also sweeps containers left by dead runs, turns
// a rootfs into a verifier image (image inspect, import and pull; the rootfs is made on the
// host, or in a helper container of Tender's own image when Tender runs in a container of the
// engine), and keeps an image cache of `docker save` archives by recipe digest.
//
// Each check's container has no network, no capabilities, no-new-privileges, a read-only root, user
// 65532, CPU, memory (no swap) and pids limits, and tmpfs mounts for the workspace. The
// workspace travels as a tar stream into the container's main process; two execs then run
// the command and read the counters and the JUnit report back. Every container carries
// labels naming its run, its owner process and its Backend value: Sweep removes those of
// dead owners, Close those of its own Backend. sandbox/README.md lists what the engine
// enforces and where it stops.
//
// This is the only package that imports the Docker SDK; import it under its own name
// (docker.New, docker.ErrEngine), and keep the SDK's packages (client, container, image...)
// inside it. Everything engine-free belongs in package sandbox.
//
// An image build helper (buildhelper.go) has the host's network and the capabilities
// debootstrap needs, and must never run anything but debootstrap and tar: no candidate code,
// suite file or repository content reaches it.
//
// This package must never bind-mount a host path into a container, never pass a host
// environment variable that the suite did not name, and never leave a container of a
// finished, timed-out or cancelled check behind.
package docker
