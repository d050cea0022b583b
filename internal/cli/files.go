package cli

import (
	"os"
	"syscall"
)

// openInput opens a file the operator named, for reading. Only a regular file is accepted,
// and it is opened without blocking: a FIFO or a device named by mistake is refused at once
// (exit 2, one line) instead of being waited on forever.
func openInput(what, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, usageError("%s %s: %s", what, path, pathErrText(err))
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, usageError("%s %s is not a regular file; give a file", what, path)
	}
	return f, nil
}

// checkInput is openInput for a file a library opens itself (GITHUB_EVENT_PATH, which
// go-githubactions reads): it must be a regular file when checked.
func checkInput(what, path string) error {
	f, err := openInput(what, path)
	if err != nil {
		return err
	}
	return f.Close()
}
