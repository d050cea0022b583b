//go:build !unix

package bundle

import "os"

// openFlags: without O_NOFOLLOW, the type check after open (see openRegular) still refuses
// anything but a regular file.
const openFlags = os.O_RDONLY

// isSymlinkErr: without O_NOFOLLOW an open never reports a symlink; the type check after
// open refuses anything but a regular file.
func isSymlinkErr(error) bool { return false }
