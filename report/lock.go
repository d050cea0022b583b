package report

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrLocked means another process is writing to the output directory.
var ErrLocked = errors.New("another tender process is writing to this directory")

// ErrOutGone means the output directory or results.jsonl was removed or replaced while a run
// was writing to it: what the run recorded since is not where the bundle will be.
var ErrOutGone = errors.New("the output directory was removed or replaced during the run")

// DirLock is an exclusive hold on an output directory, taken before a run reads or writes
// anything in it and kept until the bundle is sealed. It is a flock(2) on the directory
// itself, so it adds no file to the bundle and dies with the process.
type DirLock struct {
	dir string
	f   *os.File
	id  os.FileInfo
}

// LockDir locks dir, which must exist. A second lock on the same directory, from this process
// or another, fails with ErrLocked.
func LockDir(dir string) (*DirLock, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("report: locking %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
		}
		return nil, fmt.Errorf("report: locking %s: %w", dir, err)
	}
	id, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("report: locking %s: %w", dir, err)
	}
	return &DirLock{dir: dir, f: f, id: id}, nil
}

// Check fails with ErrOutGone when the locked directory's path no longer names it.
func (l *DirLock) Check() error {
	now, err := os.Stat(l.dir)
	if err != nil || !os.SameFile(now, l.id) {
		return fmt.Errorf("%w: %s", ErrOutGone, l.dir)
	}
	return nil
}

// Close releases the lock.
func (l *DirLock) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
