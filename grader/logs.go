package grader

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/sandbox"
)

// saveLogs writes a check's bounded output and report into the bundle directory and
// records their bundle-relative names. The logs are the operator's: the runner's own words go
// there and nowhere else. The bootstrap's control lines are taken out and sentinel names
// replaced. A refused report (refused: it did not parse, or was over a cap) keeps only its
// first maxRefusedReport bytes, and every file of the pair draws on the pair's share.
func (pl *pipeline) saveLogs(
	chk *report.Check,
	res *sandbox.Result,
	junitXML []byte,
	refused bool,
	ctl pyboot.Control,
) error {
	if pl.opts.LogDir == "" {
		return nil
	}
	dir := filepath.Join(pl.opts.LogDir, filepath.FromSlash(report.PairDir(pl.pair.ID)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var log bytes.Buffer
	if !res.Isolated {
		log.WriteString("local backend: not isolated\n")
	}
	fmt.Fprintf(
		&log,
		"check: %s\nexit code: %d\ntimed out: %v\noom killed: %v\nwall: %s\n",
		chk.Name,
		res.ExitCode,
		res.TimedOut,
		res.OOMKilled,
		res.Wall,
	)
	if pl.suite.Verifier.Runner == suite.RunnerPytest {
		log.WriteString(ctl.Summary() + "\n")
	}
	fmt.Fprintf(
		&log,
		"\n--- stdout (%d bytes) ---\n%s\n--- stderr (%d bytes) ---\n%s\n",
		res.Stdout.Total,
		res.Stdout.String(),
		res.Stderr.Total,
		res.Stderr.String(),
	)
	chk.LogFile = report.CheckLog(pl.pair.ID, chk.Name)
	data, cut := pl.share.take(ctl.Redact(log.Bytes()), maxPairBundle)
	if cut {
		chk.LogTruncated = true
		data = append(data, logCutNote...)
	}
	if err := os.WriteFile(filepath.Join(pl.opts.LogDir, filepath.FromSlash(chk.LogFile)), data, 0o644); err != nil {
		return err
	}
	if junitXML == nil {
		return nil
	}
	keep := junitXML
	if refused && len(keep) > maxRefusedReport {
		keep = keep[:maxRefusedReport]
	}
	keep, _ = pl.share.take(keep, maxPairBundle)
	if len(keep) < len(junitXML) {
		sum := sha256.Sum256(junitXML)
		chk.JUnitTruncated, chk.JUnitBytes, chk.JUnitSHA256 = true, int64(len(junitXML)), hex.EncodeToString(sum[:])
	}
	chk.JUnitFile = report.CheckJUnit(pl.pair.ID, chk.Name)
	return os.WriteFile(filepath.Join(pl.opts.LogDir, filepath.FromSlash(chk.JUnitFile)), keep, 0o644)
}

// The bundle's bounds (docs/outputs.md): a refused report keeps its first MiB; the logs and
// reports of one pair, all its checks together, keep at most 4 MiB.
const (
	maxRefusedReport = 1 << 20
	maxPairBundle    = 4 << 20
)

const logCutNote = "\n--- cut here: the pair's share of the evidence bundle (4 MiB) is used up ---\n"

// bundleShare counts the bytes a pair's files take in the bundle.
type bundleShare struct {
	mu   sync.Mutex
	used int
}

// take returns the head of data that still fits in a share of limit bytes, and whether it
// cut data.
func (s *bundleShare) take(data []byte, limit int) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := min(len(data), max(limit-s.used, 0))
	s.used += n
	return data[:n], n < len(data)
}
