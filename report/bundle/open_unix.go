//go:build unix

package bundle

import (
	"errors"
	"syscall"
)

// openFlags refuses a symlink as the last path component (ELOOP) and never blocks on a FIFO
// that was swapped in after the directory was listed.
const openFlags = syscall.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// isSymlinkErr reports whether an open with O_NOFOLLOW met a symlink.
func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }
