// Package docker is the default verifier backend: each check runs in a brand-new, locked-down
// container through the Docker Engine API. It also sweeps containers left by dead runs and
// turns a sandbox.Rootfs into a verifier image (image inspect, import and pull).
//
// Each container has no network, no capabilities, no-new-privileges, a read-only root, user
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
// This package must never bind-mount a host path into a container, never pass a host
// environment variable that the suite did not name, and never leave a container of a
// finished, timed-out or cancelled check behind.
package docker
