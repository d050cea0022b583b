//go:build unix

package bundle

import "syscall"

// openFlags refuses a symlink as the last path component (ELOOP) and never blocks on a FIFO
// that was swapped in after the directory was listed.
const openFlags = syscall.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK
