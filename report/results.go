package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// ErrResults marks a results file that cannot be used.
var ErrResults = errors.New("report: bad results file")

// ResultsWriter appends pair results to results.jsonl as each pair finishes, so that a crash
// loses no finished pair. It is safe for concurrent use: each record is written at once (a
// killed process loses nothing written), and Append returns once a sync covers it. Appends
// that arrive while a sync runs share the next one, so a batch of quick pairs does not pay a
// sync each.
type ResultsWriter struct {
	mu      sync.Mutex
	synced  sync.Cond // signalled after each sync
	f       *os.File
	path    string
	id      os.FileInfo // the file as opened: a path that names another one means it was removed
	size    int64       // bytes of whole records, to cut back a failed write
	written uint64      // records written
	durable uint64      // records covered by a finished sync
	syncing bool
	err     error // the first failure; nothing is appended after it
	lost    error // a failed sync: the records it was to cover may not be on disk
}

// OpenResults opens dir/results.jsonl for appending, creating it if needed. A last record
// without its newline (a crash between the two) keeps its line and gets the newline; a torn
// last line that is not a whole record is cut off, so the next record starts on a line of
// its own. Anything but a regular file there is refused.
func OpenResults(dir string) (*ResultsWriter, error) {
	path := filepath.Join(dir, ResultsJSONL)
	f, err := openRegular(path, os.O_RDWR|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return nil, err
	}
	size, err := repairTail(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("report: repairing %s: %w", path, err)
	}
	id, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("report: opening results: %w", err)
	}
	w := &ResultsWriter{f: f, path: path, id: id, size: size}
	w.synced.L = &w.mu
	return w, nil
}

// openRegular opens path without following a symlink and without blocking on a FIFO, and
// refuses anything but a regular file.
func openRegular(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%w: %s is a symlink, not a regular file", ErrResults, path)
	}
	if err != nil {
		return nil, fmt.Errorf("report: opening results: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrResults, path)
	}
	return f, nil
}

// repairTail ends f with a newline after its last whole record and returns its size.
func repairTail(f *os.File) (int64, error) {
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil || end == 0 {
		return end, err
	}
	keep, err := lastNewlineEnd(f, end)
	if err != nil || keep == end {
		return end, err
	}
	tail := make([]byte, end-keep)
	if _, err := f.ReadAt(tail, keep); err != nil {
		return 0, err
	}
	if json.Valid(tail) {
		_, err := f.Write([]byte("\n"))
		return end + 1, err
	}
	return keep, f.Truncate(keep)
}

// lastNewlineEnd returns the offset just after the last '\n' in the first end bytes of f,
// or 0 when there is none; it reads backwards in chunks.
func lastNewlineEnd(f *os.File, end int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for pos := end; pos > 0; {
		n := min(int64(len(buf)), pos)
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
	}
	return 0, nil
}

// Append writes one result as one line and returns once it is synced to disk. After a
// failure (a full disk, the file removed) every later Append fails with the same error.
func (w *ResultsWriter) Append(r PairResult) error {
	if r.Schema == "" {
		r.Schema = SchemaVersion
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("report: encoding result %q: %w", r.ID, err)
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("report: appending result %q: %w", r.ID, os.ErrClosed)
	}
	if w.err != nil {
		return w.err
	}
	if n, err := w.f.Write(line); err != nil {
		if n > 0 {
			_ = w.f.Truncate(w.size) // no torn line for the next run to repair
		}
		w.err = fmt.Errorf("report: appending result %q to %s: %w", r.ID, w.path, err)
		return w.err
	}
	w.size += int64(len(line))
	w.written++
	return w.waitDurable(w.written)
}

// waitDurable returns once a sync has covered record seq. The first waiter syncs for every
// record written so far; the others wait for it. A record written before another's write
// failed is still synced. Called with w.mu held.
func (w *ResultsWriter) waitDurable(seq uint64) error {
	for w.durable < seq {
		if w.lost != nil {
			return w.lost
		}
		if w.syncing {
			w.synced.Wait()
			continue
		}
		w.syncing = true
		target := w.written
		w.mu.Unlock()
		err := w.sync()
		w.mu.Lock()
		w.syncing = false
		if err != nil {
			w.lost = err
			if w.err == nil {
				w.err = err
			}
		} else {
			w.durable = max(w.durable, target)
		}
		w.synced.Broadcast()
	}
	return nil
}

// sync flushes the file and checks that its path still names it.
func (w *ResultsWriter) sync() error {
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("report: syncing %s: %w", w.path, err)
	}
	if now, err := os.Stat(w.path); err != nil || !os.SameFile(now, w.id) {
		return fmt.Errorf("%w: %s is gone; the records appended to it are lost", ErrOutGone, w.path)
	}
	return nil
}

// Err returns the first failure of an Append, or the removal of the file since the last
// Append: a caller checks it before using what it appended.
func (w *ResultsWriter) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.f == nil {
		return w.err
	}
	if now, err := os.Stat(w.path); err != nil || !os.SameFile(now, w.id) {
		w.err = fmt.Errorf("%w: %s is gone; the records appended to it are lost", ErrOutGone, w.path)
	}
	return w.err
}

// Close closes the file, after any sync under way. Further appends fail.
func (w *ResultsWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.syncing {
		w.synced.Wait()
	}
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// ReadResults reads results.jsonl in file order. A last line that does not end in a newline
// and does not decode is the torn write of a crash and is dropped; a bad line anywhere else
// is an error. A pair that appears more than once appears so in the result.
func ReadResults(path string) ([]PairResult, error) {
	recs, bad, err := ReadRecords(path)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%w: %s %s", ErrResults, path, bad[0])
	}
	return recs, nil
}

// ReadRecords reads results.jsonl for --resume, which keeps only what it can stand behind:
// each line must decode to exactly the bytes Tender writes for that record (no unknown,
// duplicate or re-cased key, no re-spacing), or it is listed in bad, by line, and left out.
// A torn last line is dropped without a word; a whole last record without its newline counts.
// Only a file that cannot be read is an error.
func ReadRecords(path string) (recs []PairResult, bad []string, err error) {
	f, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("report: reading results: %w", err)
	}
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r, err := decodeRecord(line)
		if err != nil {
			if i < len(lines)-1 {
				bad = append(bad, fmt.Sprintf("line %d: %v", i+1, err))
			}
			continue
		}
		recs = append(recs, r)
	}
	return recs, bad, nil
}

func decodeRecord(line []byte) (PairResult, error) {
	var r PairResult
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, err
	}
	again, err := json.Marshal(r)
	if err != nil || !bytes.Equal(again, line) {
		return r, errors.New("not a record as tender writes it")
	}
	return r, nil
}

// WriteResultsJSON writes dir/results.json: the pairs sorted by ID, the verdict counts
// recomputed from them, two-space indentation and a final newline.
func WriteResultsJSON(dir string, r Results) error {
	b, err := resultsJSON(r)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, ResultsJSON), b)
}

func resultsJSON(r Results) ([]byte, error) {
	r = normalized(r)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report: encoding results: %w", err)
	}
	return append(b, '\n'), nil
}

// normalized returns r with its schema set, its pairs sorted by ID (a copy) and its counts
// recomputed, so every writer sees the same batch.
func normalized(r Results) Results {
	if r.Schema == "" {
		r.Schema = SchemaVersion
	}
	r.Pairs = slices.Clone(r.Pairs)
	slices.SortStableFunc(r.Pairs, func(a, b PairResult) int { return strings.Compare(a.ID, b.ID) })
	for i := range r.Pairs {
		if r.Pairs[i].Schema == "" {
			r.Pairs[i].Schema = SchemaVersion
		}
	}
	r.Counts = Count(r.Pairs).Verdicts
	if r.Pairs == nil {
		r.Pairs = []PairResult{}
	}
	r.NoPrediction, r.NotImported = sortedIDs(r.NoPrediction), sortedIDs(r.NotImported)
	return r
}

func sortedIDs(ids []string) []string {
	if ids == nil {
		return nil
	}
	return slices.Sorted(slices.Values(ids))
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and renames it over
// path, so a reader never sees half a file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("report: syncing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	renamed = true
	return nil
}

// writeDerived writes one of the per-pair files derived from results.jsonl (which is synced
// record by record) in place, without a temporary file or a sync: a run that dies mid-write
// has sealed nothing, and a resume removes and rebuilds these files. A temporary file and a
// sync each would cost several system calls and a journal commit per pair of a large batch.
func writeDerived(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	return nil
}
