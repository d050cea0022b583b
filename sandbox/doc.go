// Package sandbox defines what a verifier backend is, and holds everything about running a
// check that needs no container engine: the Backend interface, Spec, Limits and Result, the
// token layout and the environment allowlist, bounded output capture, tar streaming of the
// workspace, the shared sentinel errors, the local backend, and the engine-free half of the
// offline image build (recipes, the machine's apt sources, and the debootstrap rootfs).
//
// The Docker backend is in sandbox/docker, the only package that imports the Docker SDK.
// The image build is split where the engine starts: making the rootfs runs debootstrap on
// the host and needs no engine, so it is here (BuildRootfs, Rootfs.Stream, LockBuild);
// sandbox/docker imports the stream as an image. The grader imports this package and
// never a concrete backend: it holds a Backend, and Backend.Close cleans up whatever the
// backend started.
//
// The local backend runs a subprocess on the host. It exists for trusted fixtures only, it
// refuses to start unless the caller says the code is trusted, and it marks every result
// "local backend: not isolated". README.md lists what each backend enforces and where it
// stops.
//
// This package must never import a container engine's SDK, never pass a host environment
// variable that the suite did not name, never follow a symlink or read a special file while
// copying or streaming a tree, and never leave behind the files of a finished check or the
// processes of its process group.
package sandbox
