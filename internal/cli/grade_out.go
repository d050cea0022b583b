package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// outDir is the bundle directory of one grade, locked from before anything in it is read or
// written until the bundle is sealed, so two runs never write one bundle.
type outDir struct {
	path string
	lock *report.DirLock
	skip map[string]report.PairResult // finished pairs a resume keeps
}

func (o *outDir) Close() error { return o.lock.Close() }

// openOut makes a new run's directory, or takes over a resumed one.
func openOut(inv *invocation, f gradeFlags, s *suite.Suite, shard grader.Shard) (*outDir, error) {
	if f.resume == "" {
		return newOut(f.out)
	}
	if f.outSet {
		return nil, usageError(
			"--out and --resume are both given; --resume DIR writes the bundle in DIR, so drop --out",
		)
	}
	return resumeOut(inv, f.resume, s, shard)
}

// newOut makes --out, which must be new or empty, and locks it.
func newOut(dir string) (*outDir, error) {
	if dir == "" {
		return nil, usageError("--out is empty; name a new directory for the bundle")
	}
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return nil, usageError("--out %s is not a directory; name a new directory for the bundle", dir)
	}
	if err := makeOutDir("--out", dir); err != nil {
		return nil, err
	}
	lock, err := lockOut("--out", dir)
	if err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
		lock.Close()
		if err != nil {
			return nil, usageError("--out %s: cannot read the directory (%s)", dir, pathErrText(err))
		}
		return nil, usageError(
			"--out %s is not empty; choose a new directory, or continue it with --resume %s",
			dir,
			dir,
		)
	}
	return &outDir{path: dir, lock: lock}, nil
}

// lockOut locks an existing output directory on a real file system.
func lockOut(flag, dir string) (*report.DirLock, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil, usageError("%s %s: %s; give the directory of a bundle", flag, dir, pathErrText(err))
	}
	if pseudoFS(st.Type) {
		return nil, usageError(
			"%s %s is on a kernel file system (/proc, /sys, ...); choose a directory on a disk",
			flag,
			dir,
		)
	}
	if err := checkWritable(flag, dir); err != nil {
		return nil, err // a read-only mount: nothing could be recorded there
	}
	lock, err := report.LockDir(dir)
	switch {
	case errors.Is(err, report.ErrLocked):
		return nil, usageError(
			"%s %s: another tender process is writing to it; wait for it, or choose another directory",
			flag,
			dir,
		)
	case err != nil:
		return nil, usageError("%s %s: %s; give the directory of a bundle", flag, dir, pathErrText(err))
	}
	return lock, nil
}

// pseudoFS: proc, sysfs, devpts, cgroup, cgroup2, debugfs, securityfs, tracefs.
func pseudoFS(t int64) bool {
	switch t {
	case 0x9fa0, 0x62656572, 0x1cd1, 0x27e0eb, 0x63677270, 0x64626720, 0x73636673, 0x74726163:
		return true
	}
	return false
}

// pathErrText is an fs error without the operation and path Go puts in front of it.
func pathErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// sameSuite refuses to resume, and so to set aside every record of, a directory that another
// suite wrote: the wrong SUITE given to --resume must not cost a finished bundle.
func sameSuite(dir string, s *suite.Suite, recs []report.PairResult) error {
	if res, err := report.ReadResultsJSON(dir); err == nil && res.Suite != s.Name {
		return usageError(
			"--resume %s holds a bundle of suite %s, not %s; give the suite it graded",
			dir,
			res.Suite,
			s.Name,
		)
	}
	ids := map[string]bool{}
	for _, p := range s.Pairs {
		ids[p.ID] = true
	}
	for _, r := range recs {
		if ids[r.ID] {
			return nil
		}
	}
	if len(recs) > 0 {
		return usageError(
			"--resume %s: none of its %d record(s) is a pair of suite %s; give the suite it graded",
			dir,
			len(recs),
			s.Name,
		)
	}
	return nil
}

// resumeOut locks an earlier run's directory and keeps, of its records, those the resumed run
// can stand behind (grader.Resume), rebuilding the directory around them.
func resumeOut(inv *invocation, dir string, s *suite.Suite, shard grader.Shard) (*outDir, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, usageError("--resume %s is not a directory; give the --out of an earlier grade", dir)
	}
	lock, err := lockOut("--resume", dir)
	if err != nil {
		return nil, err
	}
	kept, err := keepForResume(inv, dir, s, shard)
	if err != nil {
		lock.Close()
		return nil, err
	}
	skip := map[string]report.PairResult{}
	for _, r := range kept {
		skip[r.ID] = r
	}
	return &outDir{path: dir, lock: lock, skip: skip}, nil
}

func keepForResume(inv *invocation, dir string, s *suite.Suite, shard grader.Shard) ([]report.PairResult, error) {
	recs, bad, err := report.ReadRecords(filepath.Join(dir, report.ResultsJSONL))
	if err != nil {
		return nil, usageError("--resume %s: %s; give the --out of an earlier grade", dir, pathErrText(err))
	}
	if err := sameSuite(dir, s, recs); err != nil {
		return nil, err
	}
	keep, dropped := grader.Resume(s, shard, recs)
	kept, missing, err := report.PrepareResume(dir, keep)
	if errors.Is(err, report.ErrForeignFile) {
		return nil, usageError("--resume: %v", err)
	}
	if err != nil {
		return nil, err
	}
	if dropped = append(append(bad, dropped...), missing...); len(dropped) > 0 {
		shown := dropped[:min(3, len(dropped))]
		fmt.Fprintf(
			inv.Stderr,
			"tender: --resume: %d record(s) set aside (their pairs are graded again): %s",
			len(dropped),
			strings.Join(shown, "; "),
		)
		if len(dropped) > len(shown) {
			fmt.Fprintf(inv.Stderr, "; and %d more", len(dropped)-len(shown))
		}
		fmt.Fprintln(inv.Stderr)
	}
	return kept, nil
}
