package grader

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/sandbox"
)

// TestSaveLogsBoundsThePairsShare: a refused report keeps its first MiB, with its size and
// digest in the check; an accepted report is kept whole while the pair's 4 MiB share lasts,
// and cut once it is used up; nothing of the pair's is written past the share.
func TestSaveLogsBoundsThePairsShare(t *testing.T) {
	dir := t.TempDir()
	pl := &pipeline{suite: &suite.Suite{}, pair: &suite.Pair{ID: "p"}, opts: Options{LogDir: dir}}
	big := bytes.Repeat([]byte("<testcase/>\n"), (5<<19)/12)
	checks := []struct {
		refused, cut bool
	}{{refused: true, cut: true}, {refused: false, cut: false}, {refused: false, cut: true}}
	for i, c := range checks {
		chk := &report.Check{Name: []string{"target", "regression", "rerun"}[i]}
		if err := pl.saveLogs(chk, &sandbox.Result{}, big, c.refused, pyboot.Control{}); err != nil {
			t.Fatal(err)
		}
		if chk.JUnitTruncated != c.cut || c.cut && (chk.JUnitBytes != int64(len(big)) || len(chk.JUnitSHA256) != 64) {
			t.Errorf(
				"check %d: truncated %v (%d bytes, %q), want %v",
				i,
				chk.JUnitTruncated,
				chk.JUnitBytes,
				chk.JUnitSHA256,
				c.cut,
			)
		}
	}
	var total int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, _ := d.Info()
			total += fi.Size()
		}
		return nil
	})
	if total > maxPairBundle+int64(3*len(logCutNote)) || total < maxPairBundle {
		t.Errorf("the pair's files take %d bytes, want the 4 MiB share (%d)", total, maxPairBundle)
	}
	if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(report.CheckJUnit("p", "target")))); err != nil ||
		fi.Size() != maxRefusedReport {
		t.Errorf("the refused report keeps %v bytes (%v), want its first MiB", fi.Size(), err)
	}
}
