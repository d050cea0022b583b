package grader

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/sandbox"
)

// saveLogs writes a check's bounded output and raw report into the bundle directory and
// records their bundle-relative names. Sentinel names are redacted from the log.
func (pl *pipeline) saveLogs(chk *report.Check, res *sandbox.Result, junitXML []byte, sent *sentinels) error {
	if pl.opts.LogDir == "" {
		return nil
	}
	rel := path.Join("pairs", safeName(pl.pair.ID))
	dir := filepath.Join(pl.opts.LogDir, filepath.FromSlash(rel))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var log bytes.Buffer
	if !res.Isolated {
		log.WriteString("local backend: not isolated\n")
	}
	fmt.Fprintf(&log, "check: %s\nexit code: %d\ntimed out: %v\noom killed: %v\nwall: %s\n", chk.Name, res.ExitCode, res.TimedOut, res.OOMKilled, res.Wall)
	fmt.Fprintf(&log, "\n--- stdout (%d bytes) ---\n%s\n--- stderr (%d bytes) ---\n%s\n", res.Stdout.Total, res.Stdout.String(), res.Stderr.Total, res.Stderr.String())
	chk.LogFile = path.Join(rel, chk.Name+".log")
	if err := os.WriteFile(filepath.Join(dir, chk.Name+".log"), sent.redact(log.Bytes()), 0o644); err != nil {
		return err
	}
	if junitXML == nil {
		return nil
	}
	chk.JUnitFile = path.Join(rel, chk.Name+".junit.xml")
	return os.WriteFile(filepath.Join(dir, chk.Name+".junit.xml"), junitXML, 0o644)
}
