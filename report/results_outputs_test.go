package report

import (
	"github.com/tender-grader/tender/internal/golden"

	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report/junit"
)

// The injected clock: every time in the fixture is derived from this one.
var clock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const hostile = "`<script>alert(1)</script>` | [x](javascript:alert(1)) ![i](http://e/x.png) **b** \n# h &amp; <!-- c --> \\| _u_"

func ptr[T any](v T) *T { return &v }

func fixtureResults() Results {
	f2p, p2p := []string{"tests/test_calc.py::test_add"}, []string{"tests/test_calc.py::test_sub"}
	check := func(name string, tests map[string]TestStatus, passed bool, reasons ...Reason) Check {
		return Check{Name: name, Passed: passed, Backend: "docker", Isolated: true, ImageID: "sha256:1111",
			ExitCode: boolInt(!passed), Fingerprint: Fingerprint{Commit: "c0ffee", Tree: "7ree", Clean: true},
			Tests: tests, Reasons: reasons, Resources: Resources{WallMillis: 900, StdoutBytes: 10},
			LogFile: "pairs/x/" + name + ".log", JUnitFile: "pairs/x/" + name + ".xml"}
	}
	pair := func(id string, v Verdict, ms int64) PairResult {
		return PairResult{ID: id, Repository: "calc", Verdict: v, RequestedCommit: "c0ffee", ExecutedCommit: "c0ffee",
			TestedAsSubmitted: true, Digests: Digests{Patch: "p", Issue: "i"}, FailToPass: f2p, PassToPass: p2p,
			Started: clock.Add(time.Duration(ms) * time.Millisecond), DurationMillis: ms, InputDigest: "in-" + id}
	}
	gold := pair("gold-fix", Resolved, 12345)
	gold.Expect, gold.ExpectMet = Resolved, ptr(true)
	gold.Checks = []Check{
		check("target", map[string]TestStatus{f2p[0]: TestPassed}, true),
		check("regression", map[string]TestStatus{p2p[0]: TestPassed}, true),
	}
	wrong := pair("wrong-fix", Unresolved, 8000)
	failed := Reason{
		Code:   CodeTestFailed,
		Detail: "target: tests/test_calc.py::test_add: failed: assert 3 == 4",
		Path:   "tests/test_calc.py",
		Line:   5,
	}
	wrong.Reasons = []Reason{failed}
	wrong.Checks = []Check{
		check("target", map[string]TestStatus{f2p[0]: TestFailed}, false, failed),
		check("regression", map[string]TestStatus{p2p[0]: TestPassed}, true),
	}
	skip := pair("skip-p2p", Unresolved, 61000)
	skipped := Reason{Code: CodeTestSkipped, Detail: "regression: tests/test_calc.py::test_sub: skipped: later"}
	skip.Reasons = []Reason{skipped}
	skip.Checks = []Check{
		check("target", map[string]TestStatus{f2p[0]: TestPassed}, true),
		check("regression", map[string]TestStatus{p2p[0]: TestSkipped}, false, skipped),
	}
	evil := pair("evil-paths", IntegrityViolation, 40)
	evil.Expect, evil.ExpectMet, evil.TestedAsSubmitted = Resolved, ptr(false), false
	evil.Reasons = []Reason{{Code: "protected_path", Detail: hostile, Path: ".tender/<b>x</b>|y.py", Line: 3}}
	down := pair("infra-down", Error, 5)
	down.Reasons = []Reason{{Code: "verifier_failed", Detail: "docker: connection refused"}}
	empty := pair("empty", Unresolved, 1)
	empty.EmptyPatch, empty.Digests.Patch = true, "e3b0"
	empty.Reasons = []Reason{{Code: "empty_patch", Detail: "the candidate patch is empty; nothing was run"}}
	return Results{
		Tool: "tender 0.1.0", Suite: "demo", SuiteVersion: "1", SuiteDigest: "sha256:5u17e", Backend: "docker",
		Started: clock, Finished: clock.Add(95 * time.Second),
		Pairs: []PairResult{wrong, gold, evil, skip, empty, down}, // unsorted on purpose
	}
}

func TestWriteOutputsGolden(t *testing.T) {
	dir := t.TempDir()
	if err := WriteOutputs(dir, fixtureResults(), SWEBenchOutputs{}); err != nil {
		t.Fatal(err)
	}
	var written []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			written = append(written, filepath.ToSlash(rel))
		}
		return err
	})
	want := []string{"results.json", "summary.md", "tender-results.xml"} // SWE-bench's: grader/swebench
	if diff := cmp.Diff(want, written); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	for _, name := range written {
		t.Run(name, func(t *testing.T) {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "outputs/"+name+".golden", got)
		})
	}
}

func TestWriteOutputsIsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	r := fixtureResults()
	if err := WriteOutputs(a, r, sweMarkers()); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(r.Pairs)
	if err := WriteOutputs(b, r, sweMarkers()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ResultsJSON, SWEBenchSummary, TenderJUnit, SummaryMarkdown} {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if string(x) != string(y) {
			t.Errorf("%s depends on the input order", name)
		}
	}
}

func TestSummaryTruncatedGolden(t *testing.T) {
	out := summaryMarkdown(normalized(fixtureResults()), 2600, sweView{})
	if len(out) > 2600 || !strings.Contains(string(out), "**Truncated:** this summary shows 5 of 6 pairs") {
		t.Errorf("%d bytes, want a truncation note under 2600:\n%s", len(out), out)
	}
	golden.Check(t, "outputs/summary-truncated.md.golden", out)
}

func TestSummaryCap(t *testing.T) {
	r := Results{Suite: "big", SuiteVersion: "1"}
	for i := range 20000 {
		r.Pairs = append(r.Pairs, PairResult{ID: fmt.Sprintf("pair-%05d", i), Verdict: Unresolved,
			Reasons: []Reason{{Code: CodeTestFailed, Detail: strings.Repeat("<&>|", 200)}}})
	}
	out := summaryMarkdown(normalized(r), SummaryMaxBytes, sweView{})
	if len(out) > SummaryMaxBytes {
		t.Errorf("summary is %d bytes, over the %d cap", len(out), SummaryMaxBytes)
	}
	if !regexp.MustCompile(`\*\*Truncated:\*\* this summary shows \d+ of 20000 pairs`).Match(out) {
		t.Errorf("no truncation note at the end: %q", out[len(out)-300:])
	}
}

// TestSummaryEscapesUntrustedText plants Markdown and HTML in a reason and checks none of it
// is live in summary.md: no raw tag, no link or image syntax, no cell break, no new line.
func TestSummaryEscapesUntrustedText(t *testing.T) {
	out := string(summaryMarkdown(normalized(fixtureResults()), SummaryMaxBytes, sweView{}))
	row := ""
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "| evil") {
			row = line
		}
	}
	if row == "" {
		t.Fatalf("no row for evil-paths:\n%s", out)
	}
	unescaped := regexp.MustCompile(`(^|[^\\])(\\\\)*[<>\[\]!|` + "`" + `*_&#]`)
	cells := strings.Split(row, " | ")
	reasons := cells[4]
	if m := unescaped.FindString(reasons); m != "" {
		t.Errorf("unescaped markup %q in reasons cell %q", m, reasons)
	}
	if n := countUnescapedPipes(row); n != 8 {
		t.Errorf("row has %d cell separators, want 8: %s", n, row)
	}
	for _, bad := range []string{"<script", "](", "![", "<!--", "\n# h"} {
		if strings.Contains(out, bad) && !strings.Contains(out, "\\"+bad[:1]) {
			t.Errorf("summary contains live %q", bad)
		}
	}
	if strings.Contains(reasons, "<script>") {
		t.Errorf("raw <script> in %q", reasons)
	}
}

func countUnescapedPipes(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

func TestMdText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain words 123", "plain words 123"},
		{"a|b", `a\|b`},
		{"<b>", `\<b\>`},
		{"[l](u)", `\[l\]\(u\)`},
		{"line\nbreak\r\ttab", "line break  tab"},
		{`back\slash`, `back\\slash`},
		{"&amp;", `\&amp\;`},
		{"ünïcode ✓", "ünïcode ✓"},
		{"a\u2028b", "a b"},
	}
	for _, tt := range tests {
		if got := mdText(tt.in, 100); got != tt.want {
			t.Errorf("mdText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTenderJUnitParsesAndAddsUp(t *testing.T) {
	b, err := tenderJUnit(normalized(fixtureResults()))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := junit.Parse(b, junit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]junit.Status{}
	for _, c := range rep.Cases {
		got[c.ID] = c.Status
	}
	want := map[string]junit.Status{
		"calc::empty": junit.Failed, "calc::evil-paths": junit.Errored, "calc::gold-fix": junit.Passed,
		"calc::infra-down": junit.Errored, "calc::skip-p2p": junit.Failed, "calc::wrong-fix": junit.Failed,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if m := rep.Mismatches(); len(m) != 0 {
		t.Errorf("totals do not add up: %+v", m)
	}
}

func TestWriteOutputsRefusesUnsafeIDs(t *testing.T) {
	for _, id := range []string{"..", ".", "../escape", "a/b", "", "x\x00y", strings.Repeat("a", 201)} {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			os.Mkdir(dir, 0o755)
			r := Results{Pairs: []PairResult{{ID: id, Verdict: Unresolved, Checks: []Check{{Name: "target"}}}}}
			if err := WriteOutputs(dir, r, sweMarkers()); !errors.Is(err, ErrUnsafePairID) {
				t.Fatalf("WriteOutputs = %v, want ErrUnsafePairID", err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 0 {
				t.Errorf("files written before the refusal: %v", entries)
			}
			if _, err := os.Stat(filepath.Join(parent, PairReport)); err == nil {
				t.Error("report.json written outside the output directory")
			}
		})
	}
}

// TestSummarySkipsARowThatDoesNotFit: a pair whose reasons fill its row is left out, and the
// table goes on with the rows that fit, most urgent first; no reasons cell runs past its cap.
func TestSummarySkipsARowThatDoesNotFit(t *testing.T) {
	r := fixtureResults()
	big := PairResult{ID: "aaa-huge", Verdict: Error}
	for i := range MaxPairReasons {
		big.Reasons = append(big.Reasons, Reason{Code: CodeVerifierFailed, Detail: strings.Repeat(fmt.Sprint(i), 290)})
	}
	r.Pairs = append(r.Pairs, big)
	if cell := reasonsCell(big.Reasons); len(cell) > maxReasonsCell+40 || !strings.Contains(cell, "more") {
		t.Errorf("reasons cell of %d bytes: %.80q…", len(cell), cell)
	}
	full := string(summaryMarkdown(normalized(r), SummaryMaxBytes, sweView{}))
	limit := strings.Index(full, "| aaa-huge") + 1000 // room for the head and little else
	out := string(summaryMarkdown(normalized(r), limit+summaryReserve, sweView{}))
	// aaa-huge sorts first (an error); rows after it must still be there.
	if strings.Contains(out, "aaa-huge") || !strings.Contains(out, "| infra\\-down") ||
		!strings.Contains(out, "| empty |") {
		t.Errorf("want the huge row left out and the smaller ones kept:\n%s", out)
	}
}

// sweMarkers stands in for grader/swebench's outputs, which report must not import: each part
// says what it is, every pair with a check gets a report, and the grade is the verdict, so a
// test sees where WriteOutputs put each part and what summary.md made of it.
func sweMarkers() SWEBenchOutputs {
	return SWEBenchOutputs{
		Summary: func(r Results) ([]byte, error) { return fmt.Appendf(nil, "summary of %d pairs\n", len(r.Pairs)), nil },
		Report: func(p PairResult) ([]byte, error) {
			if len(p.Checks) == 0 {
				return nil, nil
			}
			return []byte("report of " + p.ID + "\n"), nil
		},
		Grade: func(p PairResult) string {
			if len(p.Checks) == 0 {
				return ""
			}
			return "graded " + string(p.Verdict)
		},
	}
}

// TestWriteOutputsPlacesSWEBenchOutputs: the SWE-bench parts go where the layout puts them,
// summary.md links a pair's report.json only when it has one, shows the grade escaped, and
// shows "—" where there is none; a part that fails stops the outputs with its error.
func TestWriteOutputsPlacesSWEBenchOutputs(t *testing.T) {
	dir := t.TempDir()
	r := fixtureResults()
	if err := WriteOutputs(dir, r, sweMarkers()); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, SWEBenchSummary)); string(got) != "summary of 6 pairs\n" {
		t.Errorf("%s = %q", SWEBenchSummary, got)
	}
	for _, p := range r.Pairs {
		got, err := os.ReadFile(filepath.Join(dir, PairDir(p.ID), PairReport))
		if want := len(p.Checks) > 0; want != (err == nil) || want && string(got) != "report of "+p.ID+"\n" {
			t.Errorf("%s: report.json %q (%v); want one only for a pair with checks", p.ID, got, err)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, SummaryMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| gold\\-fix | resolved | resolved (met) | graded resolved |",
		"[report.json](pairs/gold-fix/report.json)",
		"| empty | unresolved |  | — |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "pairs/infra-down/report.json") {
		t.Error("summary.md links a report.json the pair does not have")
	}
	bad := sweMarkers()
	bad.Summary = func(Results) ([]byte, error) { return nil, errors.New("cannot encode") }
	if err := WriteOutputs(t.TempDir(), r, bad); err == nil || err.Error() != "cannot encode" {
		t.Errorf("a failing summary: WriteOutputs = %v, want its error", err)
	}
}

// TestSummaryNamesInstancesThatAreNotPairs: the instances of an imported file that are not
// pairs are named in summary.md, each list with what it means.
func TestSummaryNamesInstancesThatAreNotPairs(t *testing.T) {
	r := fixtureResults()
	r.NoPrediction = []string{"no-pred-b", "no-pred-a"}
	r.NotImported = []string{"skipped-1"}
	r = normalized(r)
	sum := string(summaryMarkdown(r, SummaryMaxBytes, sweView{}))
	for _, want := range []string{
		"2 instance(s) without a prediction (incomplete)**, not graded: no\\-pred\\-a\\, no\\-pred\\-b",
		"1 instance(s) skipped by the import (error)**, not graded: skipped\\-1"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
}

var reLink = regexp.MustCompile(`\]\(([^)]+)\)`)

// TestSummaryLinksExist: every link in summary.md points to a file or directory of the
// bundle, so a pair that wrote nothing (an empty patch, an error before any verifier) gets
// no link.
func TestSummaryLinksExist(t *testing.T) {
	dir := t.TempDir()
	r := fixtureResults()
	for i := range r.Pairs {
		for j, c := range r.Pairs[i].Checks {
			if c.LogFile != "" { // as the grader writes each check's log
				c.LogFile = CheckLog(r.Pairs[i].ID, c.Name)
				r.Pairs[i].Checks[j] = c
				must(t, os.MkdirAll(filepath.Join(dir, PairDir(r.Pairs[i].ID)), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(c.LogFile)), []byte("log\n"), 0o644))
			}
		}
	}
	if err := WriteOutputs(dir, r, sweMarkers()); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, SummaryMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	links := reLink.FindAllStringSubmatch(string(md), -1)
	if len(links) == 0 {
		t.Fatal("summary.md has no links")
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(l[1]))); err != nil {
			t.Errorf("summary.md links to %s, which the bundle does not hold", l[1])
		}
	}
	if !strings.Contains(string(md), "| empty | unresolved |  | — | empty\\_patch") ||
		strings.Contains(string(md), "pairs/empty/") {
		t.Errorf("the empty-patch row must have no link:\n%s", md)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
