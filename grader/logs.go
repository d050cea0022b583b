package grader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/sandbox"
)

// saveLogs writes a check's bounded output and raw report into the bundle directory and
// records their bundle-relative names. The logs are the operator's: the runner's own words go
// there and nowhere else. The bootstrap's control lines are taken out and sentinel names
// replaced.
func (pl *pipeline) saveLogs(chk *report.Check, res *sandbox.Result, junitXML []byte, ctl pyboot.Control) error {
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
	fmt.Fprintf(&log, "check: %s\nexit code: %d\ntimed out: %v\noom killed: %v\nwall: %s\n", chk.Name, res.ExitCode, res.TimedOut, res.OOMKilled, res.Wall)
	if pl.suite.Verifier.Runner == suite.RunnerPytest {
		log.WriteString(ctl.Summary() + "\n")
	}
	fmt.Fprintf(&log, "\n--- stdout (%d bytes) ---\n%s\n--- stderr (%d bytes) ---\n%s\n", res.Stdout.Total, res.Stdout.String(), res.Stderr.Total, res.Stderr.String())
	chk.LogFile = report.CheckLog(pl.pair.ID, chk.Name)
	if err := os.WriteFile(filepath.Join(pl.opts.LogDir, filepath.FromSlash(chk.LogFile)), ctl.Redact(log.Bytes()), 0o644); err != nil {
		return err
	}
	if junitXML == nil {
		return nil
	}
	chk.JUnitFile = report.CheckJUnit(pl.pair.ID, chk.Name)
	return os.WriteFile(filepath.Join(pl.opts.LogDir, filepath.FromSlash(chk.JUnitFile)), junitXML, 0o644)
}
