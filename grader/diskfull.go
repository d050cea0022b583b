package grader

import (
	"errors"
	"strings"
	"syscall"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/report"
)

// infraStop ends a pair with an error verdict of code, or of host_disk_full when err is the
// host's disk filling up: the operator must free space, not distrust a repository.
func infraStop(code report.Code, err error) *verdictError {
	if hostDiskFull(err) {
		code = report.CodeHostDiskFull
	}
	return stop(report.Error, code, err.Error())
}

// hostDiskFull reports whether err is a write that found no space: Tender's own (ENOSPC,
// EDQUOT) or git's, which says so on its stderr.
func hostDiskFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	var re *gitsafe.RunError
	return errors.As(err, &re) && (strings.Contains(re.Stderr, "No space left on device") || strings.Contains(re.Stderr, "Disk quota exceeded"))
}
