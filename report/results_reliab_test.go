package report

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func idsOf(rs []PairResult) []string {
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return ids
}

// A crash can leave the last record whole but without its newline. ReadResults counts it
// (so --resume skips the pair); the writer must then keep it too, not cut it as a torn tail.
func TestOpenResultsKeepsWholeLastRecord(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ResultsJSONL)
	a, _ := json.Marshal(PairResult{ID: "a", Verdict: Resolved})
	b, _ := json.Marshal(PairResult{ID: "b", Verdict: Unresolved})
	if err := os.WriteFile(path, append(append(a, '\n'), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(PairResult{ID: "c", Verdict: Resolved}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	after, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := idsOf(after), append(idsOf(before), "c"); !slices.Equal(got, want) {
		t.Errorf(
			"records after reopening and appending: %v, want %v (ReadResults counted %v)",
			got,
			want,
			idsOf(before),
		)
	}
}

// Two writers on one results.jsonl (two processes given one --out) must not overwrite each
// other's records: the file is opened for append.
func TestResultsWritersDoNotOverwrite(t *testing.T) {
	dir := t.TempDir()
	w1, err := OpenResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Close()
	w2, err := OpenResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	var want []string
	for i, w := range []*ResultsWriter{w1, w2, w1, w2} {
		id := string(rune('a' + i))
		want = append(want, id)
		if err := w.Append(PairResult{ID: id, Verdict: Resolved}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadResults(filepath.Join(dir, ResultsJSONL))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(idsOf(got), want) {
		t.Errorf("records: %v, want %v", idsOf(got), want)
	}
}

// A FIFO where results.jsonl should be must be refused at once, not read forever.
func TestReadResultsRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), ResultsJSONL)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadResults(path)
	if !errors.Is(err, ErrResults) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ReadResults(FIFO) = %v, want ErrResults naming a non-regular file", err)
	}
	if _, err := OpenResults(filepath.Dir(path)); !errors.Is(err, ErrResults) {
		t.Errorf("OpenResults over a FIFO = %v, want ErrResults", err)
	}
}

// One output directory takes one writer at a time: the lock is refused while held, and free
// again once released.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	l1, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second LockDir = %v, want ErrLocked", err)
	}
	if err := l1.Check(); err != nil {
		t.Errorf("Check on the locked directory: %v", err)
	}
	l1.Close()
	l2, err := LockDir(dir)
	if err != nil {
		t.Fatalf("LockDir after release: %v", err)
	}
	defer l2.Close()
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(dir+".moved", dir)
	if err := l2.Check(); !errors.Is(err, ErrOutGone) {
		t.Errorf("Check after the directory moved = %v, want ErrOutGone", err)
	}
}
