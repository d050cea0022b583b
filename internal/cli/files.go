package cli

import (
	"os"
	"path/filepath"
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

// makeOutDir makes an output directory (and its parents) that a command will write into, and
// refuses, as one line naming the flag, a place it could not write: a kernel file system
// (/proc, /sys), a read-only mount, a directory the user may not write to.
func makeOutDir(flag, dir string) error {
	if err := checkOutPlace(flag, dir, dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageError("%s %s: cannot make the directory (%s); choose another place", flag, dir, pathErrText(err))
	}
	return checkWritable(flag, dir)
}

// checkOutPlace checks the directory that out would be made in: within, the nearest directory
// that exists, as the kernel answers for it (a read-only mount refuses even root).
func checkOutPlace(flag, out, within string) error {
	at := existingDir(within)
	var st syscall.Statfs_t
	if err := syscall.Statfs(at, &st); err == nil && pseudoFS(st.Type) {
		return usageError("%s %s is on a kernel file system (/proc, /sys, ...); choose a directory on a disk",
			flag, out)
	}
	if at == out {
		return nil // it exists: checkWritable answers for it
	}
	if err := syscall.Access(at, accessWrite); err != nil {
		return usageError("%s %s: cannot make the directory: %s is not writable (%s); choose another place",
			flag, out, at, pathErrText(err))
	}
	return nil
}

// checkWritable refuses an existing directory that cannot take new files.
func checkWritable(flag, dir string) error {
	if err := syscall.Access(dir, accessWrite); err != nil {
		fix := "choose another place"
		if flag == "--resume" {
			fix = "copy the bundle to a place you can write to, and resume it there"
		}
		return usageError("%s %s: cannot write in the directory (%s); %s", flag, dir, pathErrText(err), fix)
	}
	return nil
}

// accessWrite is W_OK|X_OK: making a file in a directory needs both.
const accessWrite = 0x2 | 0x1

// existingDir is dir or its nearest ancestor that is a directory.
func existingDir(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() || d == filepath.Dir(d) {
			return d
		}
	}
}
