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
)

// ErrResults marks a results file that cannot be used.
var ErrResults = errors.New("report: bad results file")

// ResultsWriter appends pair results to results.jsonl as each pair finishes, so that a crash
// loses no finished pair. It is safe for concurrent use.
type ResultsWriter struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// OpenResults opens dir/results.jsonl for appending, creating it if needed. A torn last line
// left by a crash is cut off first, so the next line starts on a line of its own.
func OpenResults(dir string) (*ResultsWriter, error) {
	path := filepath.Join(dir, ResultsJSONL)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("report: opening results: %w", err)
	}
	if err := cutTornTail(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("report: repairing %s: %w", path, err)
	}
	return &ResultsWriter{f: f, path: path}, nil
}

// cutTornTail truncates f after its last newline and leaves the offset at the end.
func cutTornTail(f *os.File) error {
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil || end == 0 {
		return err
	}
	keep, err := lastNewlineEnd(f, end)
	if err != nil {
		return err
	}
	if keep != end {
		if err := f.Truncate(keep); err != nil {
			return err
		}
	}
	_, err = f.Seek(keep, io.SeekStart)
	return err
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

// Append writes one result as one line and syncs it to disk before returning.
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
	if _, err := w.f.Write(line); err != nil {
		return fmt.Errorf("report: appending result %q to %s: %w", r.ID, w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("report: syncing %s: %w", w.path, err)
	}
	return nil
}

// Close closes the file. Further appends fail.
func (w *ResultsWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// ReadResults reads results.jsonl in file order, for --resume. A last line that does not end
// in a newline and does not decode is the torn write of a crash and is dropped; a bad line
// anywhere else is an error. A pair that appears more than once appears so in the result;
// the caller keeps the last.
func ReadResults(path string) ([]PairResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("report: reading results: %w", err)
	}
	lines := strings.Split(string(data), "\n")
	var out []PairResult
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r PairResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			if i == len(lines)-1 {
				break // torn last line: no newline after it
			}
			return nil, fmt.Errorf("%w: %s line %d: %v", ErrResults, path, i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
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
	r.Counts = map[Verdict]int{Resolved: 0, Unresolved: 0, IntegrityViolation: 0, Error: 0}
	for i := range r.Pairs {
		if r.Pairs[i].Schema == "" {
			r.Pairs[i].Schema = SchemaVersion
		}
		r.Counts[r.Pairs[i].Verdict]++
	}
	if r.Pairs == nil {
		r.Pairs = []PairResult{}
	}
	return r
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and renames it over
// path, so a reader never sees half a file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("report: syncing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	return nil
}
