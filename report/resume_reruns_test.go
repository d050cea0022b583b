package report

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResumeKeepsRerunLogs: the logs of a kept pair's reruns and base-commit runs stay in the
// bundle on resume; those of a pair graded again, and look-alikes of another check, go.
func TestResumeKeepsRerunLogs(t *testing.T) {
	dir := t.TempDir()
	kept := PairResult{
		Schema: SchemaVersion,
		ID:     "p",
		Checks: []Check{{Name: "regression", LogFile: CheckLog("p", "regression")}},
	}
	files := []string{
		CheckLog("p", "regression"),
		CheckLog("p", "regression-rerun1"),
		CheckJUnit("p", "regression-rerun1"),
		CheckLog("p", "regression-base2"),
		CheckLog("p", "target-rerun1"),
		CheckLog("q", "target-rerun1"),
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("log\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := PrepareResume(dir, []PairResult{kept}); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f)))
		if want := i < 4; (err == nil) != want {
			t.Errorf("%s: kept=%v, want %v", f, err == nil, want)
		}
	}
}
