package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResultsWriterConcurrent(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			// Big details make interleaved writes visible as broken lines.
			r := PairResult{ID: fmt.Sprintf("p%02d", i), Verdict: Resolved,
				Reasons: []Reason{{Code: "x", Detail: strings.Repeat(string(rune('a'+i%26)), 8<<10)}}}
			errs <- w.Append(r)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResults(filepath.Join(dir, ResultsJSONL))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		if r.Schema != SchemaVersion {
			t.Errorf("%s: schema %q", r.ID, r.Schema)
		}
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	if len(ids) != n || ids[0] != "p00" || ids[n-1] != fmt.Sprintf("p%02d", n-1) {
		t.Errorf("read %d results: %v", len(ids), ids)
	}
	if err := w.Append(PairResult{ID: "late"}); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Append after Close = %v, want os.ErrClosed", err)
	}
}

func TestResultsResumeAfterTornWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ResultsJSONL)
	whole, _ := json.Marshal(PairResult{ID: "done", Verdict: Resolved})
	torn := `{"schema":"tender.results/v1","id":"half","verd`
	if err := os.WriteFile(path, append(append(whole, '\n'), torn...), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "done" {
		t.Fatalf("ReadResults = %+v, want only the whole line", got)
	}
	w, err := OpenResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(PairResult{ID: "next", Verdict: Unresolved}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "half") {
		t.Errorf("the torn line survived:\n%s", data)
	}
	got, err = ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"done", "next"}, []string{got[0].ID, got[1].ID}); diff != "" || len(got) != 2 {
		t.Errorf("after resume (-want +got):\n%s", diff)
	}
}

func TestReadResultsErrors(t *testing.T) {
	dir := t.TempDir()
	a, _ := json.Marshal(PairResult{ID: "a"})
	b, _ := json.Marshal(PairResult{ID: "b"})
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(string(a)+"\nnot json\n"+string(b)+"\n"), 0o644)
	if _, err := ReadResults(bad); !errors.Is(err, ErrResults) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad middle line: %v", err)
	}
	edited := filepath.Join(dir, "edited.jsonl")
	os.WriteFile(edited, []byte(string(a)+"\n"+strings.Replace(string(b), `"id"`, `"ID"`, 1)+"\n"), 0o644)
	if _, err := ReadResults(edited); !errors.Is(err, ErrResults) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a record not as tender writes it: %v", err)
	}
	if _, err := ReadResults(filepath.Join(dir, "none.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	noNL := filepath.Join(dir, "nonl.jsonl")
	os.WriteFile(noNL, []byte(string(a)+"\n"+string(b)), 0o644)
	got, err := ReadResults(noNL)
	if err != nil || len(got) != 2 {
		t.Errorf("whole last line without newline: %d results, %v", len(got), err)
	}
}

func TestOpenResultsKeepsWholeFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ResultsJSONL)
	// A file larger than one read-back chunk, ending in a newline: nothing may be cut.
	line := `{"id":"` + strings.Repeat("z", 100<<10) + `"}` + "\n"
	os.WriteFile(path, []byte(line), 0o644)
	w, err := OpenResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if data, _ := os.ReadFile(path); string(data) != line {
		t.Errorf("file changed: %d bytes, want %d", len(data), len(line))
	}
}
