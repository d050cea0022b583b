package grader

import (
	"errors"
	"strings"
	"syscall"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/report"
)

// infraStop ends a pair on an infrastructure failure with code, or with host_disk_full when
// err is the host's disk filling up: the operator must free space, not distrust a repository.
// Like stop, it takes the verdict from the registry (error, for every code it is given).
func infraStop(code report.Code, err error) *verdictError {
	if hostDiskFull(err) {
		code = report.CodeHostDiskFull
	}
	return stop(code, err.Error())
}

// hostDiskFull reports whether err is a write that found no space: Tender's own (ENOSPC,
// EDQUOT) or git's, which says so on its stderr.
func hostDiskFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	var re *gitsafe.RunError
	return errors.As(err, &re) &&
		(strings.Contains(re.Stderr, "No space left on device") || strings.Contains(re.Stderr, "Disk quota exceeded"))
}
