package lifecycle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// records reads results.jsonl, so a test can tamper with it.
func records(t *testing.T, out string) []report.PairResult {
	t.Helper()
	rs, err := report.ReadResults(filepath.Join(out, report.ResultsJSONL))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// writeRecords writes results.jsonl as Tender would: a careful tamperer's edits.
func writeRecords(t *testing.T, out string, rs []report.PairResult) {
	t.Helper()
	var b strings.Builder
	for _, r := range rs {
		line, err := json.Marshal(r)
		clitest.Must(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	clitest.Must(t, os.WriteFile(filepath.Join(out, report.ResultsJSONL), []byte(b.String()), 0o644))
}

func recordIDs(t *testing.T, out string) []string {
	t.Helper()
	var ids []string
	for _, r := range records(t, out) {
		ids = append(ids, r.ID)
	}
	return ids
}

var reGraded = regexp.MustCompile(`\] (c\d+): `)

// gradedIDs lists the pairs a run graded, from its progress lines.
func gradedIDs(stderr string) []string {
	var ids []string
	for _, m := range reGraded.FindAllStringSubmatch(stderr, -1) {
		ids = append(ids, m[1])
	}
	slices.Sort(ids)
	return ids
}

// TestResumeKeepsOnlyWhatItCanRederive: --resume keeps a record only when it can stand behind
// it (its input digest, a pair of this suite and shard, well-formed, a verdict that follows
// from its checks and reasons), once per pair, and rebuilds everything it seals from those:
// an edited, foreign, stale or out-of-shard record, and a crash's leftovers, never reach the
// sealed bundle.
func TestResumeKeepsOnlyWhatItCanRederive(t *testing.T) {
	const n = 6
	suite := e2e.CheapSuite(t, n)
	all := []string{"c00000", "c00001", "c00002", "c00003", "c00004", "c00005"}
	var shard1 []string
	for _, id := range all {
		if grader.ShardOf(id, 2) == 0 {
			shard1 = append(shard1, id)
		}
	}
	for _, tc := range []struct {
		name    string
		tamper  func(t *testing.T, out string, recs []report.PairResult) []report.PairResult
		flags   []string
		ids     []string // results.jsonl after the resume, sorted: each pair once
		graded  []string // pairs the resume graded again
		gone    []string // files that must not be in the bundle
		code    int
		stderr  string
		verdict string // of c00000 after the resume
	}{
		{name: "untouched", ids: all, code: cli.ExitOK},
		{name: "edited verdict", tamper: func(t *testing.T, out string, recs []report.PairResult) []report.PairResult {
			for i := range recs {
				if recs[i].ID == "c00000" {
					recs[i].Verdict = report.Resolved
				}
			}
			return recs
		}, ids: all, graded: []string{"c00000"}, code: cli.ExitOK, verdict: "unresolved"},
		{name: "re-cased key appended", tamper: func(t *testing.T, out string, recs []report.PairResult) []report.PairResult {
			path := filepath.Join(out, report.ResultsJSONL)
			var lines []string
			for _, l := range strings.SplitAfter(clitest.ReadFile(t, path), "\n") {
				if strings.Contains(l, `"id":"c00000"`) {
					l = strings.TrimSuffix(l, "}\n") + `,"Verdict":"resolved"}` + "\n"
				}
				lines = append(lines, l)
			}
			clitest.Must(t, os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644))
			return nil
		}, ids: all, graded: []string{"c00000"}, code: cli.ExitOK, verdict: "unresolved"},
		{name: "line of another suite", tamper: func(t *testing.T, out string, recs []report.PairResult) []report.PairResult {
			other := recs[1]
			other.ID = "zz-other"
			return append(recs, other)
		}, ids: all, code: cli.ExitOK},
		{name: "same id, other inputs", tamper: func(t *testing.T, out string, recs []report.PairResult) []report.PairResult {
			other := recs[1]
			other.InputDigest = strings.Repeat("0", 64)
			other.Verdict = report.Resolved
			return append(recs, other)
		}, ids: all, code: cli.ExitOK},
		{name: "stale duplicate", tamper: func(t *testing.T, out string, recs []report.PairResult) []report.PairResult {
			return append(recs, recs[2])
		}, ids: all, code: cli.ExitOK},
		{name: "outside the resumed shard", flags: []string{"--shard", "1/2"}, ids: shard1, code: cli.ExitOK},
		{name: "crash leftovers", tamper: func(t *testing.T, out string, recs []report.PairResult) []report.PairResult {
			clitest.WriteFiles(t, out, map[string]string{
				".results.json.123.tmp": "{", ".bundle.dsse.json.456": "{", ".summary.md.7.tmp": "x",
				"pairs/ghost/target.log": "stale", "pairs/c00000/target.log": "stale",
			})
			return recs
		}, ids: all, gone: []string{".results.json.123.tmp", ".bundle.dsse.json.456", ".summary.md.7.tmp", "pairs/ghost",
			"pairs/c00000/target.log"}, code: cli.ExitOK},
		{name: "last record without its newline", tamper: func(t *testing.T, out string, recs []report.PairResult) []report.PairResult {
			path := filepath.Join(out, report.ResultsJSONL)
			data := clitest.ReadFile(t, path)
			clitest.Must(t, os.WriteFile(path, []byte(strings.TrimSuffix(data, "\n")), 0o644))
			return nil
		}, ids: all, code: cli.ExitOK},
		{name: "another suite entirely", tamper: func(t *testing.T, out string, recs []report.PairResult) []report.PairResult {
			for i := range recs {
				recs[i].ID = "other-" + recs[i].ID
			}
			return recs
		}, code: cli.ExitUsage, stderr: "none of its 6 record(s) is a pair of suite cheap"},
		{name: "a bundle of another suite", tamper: func(t *testing.T, out string, recs []report.PairResult) []report.PairResult {
			path := filepath.Join(out, report.ResultsJSON)
			other := strings.Replace(clitest.ReadFile(t, path), `"suite": "cheap"`, `"suite": "other"`, 1)
			clitest.Must(t, os.WriteFile(path, []byte(other), 0o644))
			return nil
		}, code: cli.ExitUsage, stderr: "holds a bundle of suite other, not cheap"},
		{name: "a file tender did not write", tamper: func(t *testing.T, out string, recs []report.PairResult) []report.PairResult {
			clitest.WriteFiles(t, out, map[string]string{"notes.txt": "mine"})
			return recs
		}, code: cli.ExitUsage, stderr: "notes.txt; move it out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, out := e2e.GradeOK(t, suite)
			if tc.tamper != nil {
				if recs := tc.tamper(t, out, records(t, out)); recs != nil {
					writeRecords(t, out, recs)
				}
			}
			before := clitest.ReadFile(t, filepath.Join(out, report.ResultsJSONL))
			_, stderr, code := e2e.RunTender(t, append([]string{"grade", suite, "--resume", out}, tc.flags...)...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("resume: exit %d, want %d with %q\n%s", code, tc.code, tc.stderr, stderr)
			}
			if code != cli.ExitOK {
				if after := clitest.ReadFile(t, filepath.Join(out, report.ResultsJSONL)); after != before {
					t.Errorf("the refused resume changed results.jsonl")
				}
				for _, name := range []string{report.ResultsJSON, "bundle.dsse.json"} {
					if _, err := os.Stat(filepath.Join(out, name)); err != nil {
						t.Errorf("the refused resume removed %s: %v", name, err)
					}
				}
				if _, err := os.Stat(filepath.Join(out, "notes.txt")); tc.name == "a file tender did not write" &&
					err != nil {
					t.Errorf("the refused resume touched the operator's file: %v", err)
				}
				return
			}
			if got := slices.Sorted(slices.Values(recordIDs(t, out))); !slices.Equal(got, tc.ids) {
				t.Errorf("results.jsonl after resume: %v, want %v", got, tc.ids)
			}
			if got := gradedIDs(stderr); !slices.Equal(got, tc.graded) {
				t.Errorf("graded again: %v, want %v\n%s", got, tc.graded, stderr)
			}
			for _, name := range tc.gone {
				if _, err := os.Stat(filepath.Join(out, name)); err == nil {
					t.Errorf("%s is still in the bundle", name)
				}
			}
			if tc.verdict != "" {
				if v := verdictOf(t, out, "c00000"); v != tc.verdict {
					t.Errorf("c00000 is %s after the resume, want %s", v, tc.verdict)
				}
			}
			if _, stderr, code := e2e.RunTender(t, "verify", out); code != cli.ExitOK {
				t.Errorf("the resumed bundle does not verify:\n%s", stderr)
			}
		})
	}
}

func verdictOf(t *testing.T, out, id string) string {
	t.Helper()
	for _, p := range clitest.ReadResults(t, out).Pairs {
		if p.ID == id {
			return string(p.Verdict)
		}
	}
	return ""
}
