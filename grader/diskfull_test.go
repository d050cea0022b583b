package grader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/tender-grader/tender/report"
)

// fullTmpfs mounts a small tmpfs and fills it (the grader's tests run as root).
func fullTmpfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Fatalf("mount a tmpfs (the test needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return dir
		}
	}
}

// TestFullTempDirIsDiskFull: when the directory Tender copies repositories and workspaces
// into is full, the pair is an error that says so (host_disk_full), not a repository that
// cannot be trusted.
func TestFullTempDirIsDiskFull(t *testing.T) {
	t.Parallel()
	b := newBatch(t, []string{"p"}, nil)
	opts := b.options(t)
	opts.WorkDir = fullTmpfs(t)
	results, err := Grade(context.Background(), b.suite, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if r.Verdict != report.Error || len(r.Reasons) == 0 || r.Reasons[0].Code != report.CodeHostDiskFull {
		t.Errorf(
			"with a full work directory: %s %v, want error host_disk_full\n%s",
			r.Verdict,
			report.DistinctCodes(r.Reasons),
			fmt.Sprint(r.Reasons),
		)
	}
}
