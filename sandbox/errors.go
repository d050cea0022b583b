package sandbox

import "errors"

// Sentinels shared by every backend; test them with errors.Is.
var (
	// ErrBadSpec marks a Spec the caller must fix.
	ErrBadSpec = errors.New("invalid sandbox spec")
	// ErrCopyIn means the workspace could not be written into the verifier.
	ErrCopyIn = errors.New("copy into verifier failed")
	// ErrUnsafeTree means a directory to be copied or streamed into a verifier holds
	// something other than regular files and directories.
	ErrUnsafeTree = errors.New("directory holds a symlink or special file")
	// ErrStep means a Spec's Plant step could not run, or failed.
	ErrStep = errors.New("a step of Tender's in the verifier failed")
	// ErrImageBuild wraps a failed verifier image build.
	ErrImageBuild = errors.New("verifier image build failed")
)
