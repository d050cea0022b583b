package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// SummaryMaxBytes caps summary.md; GitHub refuses a job summary over 1 MiB.
const SummaryMaxBytes = 1 << 20

// summaryReserve is room kept for the truncation note.
const summaryReserve = 1 << 10

// maxCell caps the untrusted text in one table cell; maxReasonsCell a row's reasons.
const (
	maxCell        = 300
	maxReasonsCell = 2000
)

var verdictOrder = []Verdict{Resolved, Unresolved, IntegrityViolation, Error}

// summaryMarkdown renders summary.md: the batch, the verdict counts as a Mermaid pie chart, the
// comparison with a baseline when there is one, and a table of pairs, most urgent first, with
// links to each pair's files. Every piece of text that is not Tender's own (reason details,
// codes, names from the suite) is escaped, so a candidate's path cannot inject Markdown or
// HTML. The output stays under limit bytes; rows that do not fit are left out with a note
// saying how many.
func summaryMarkdown(r Results, limit int, swe sweView) []byte {
	var b strings.Builder
	writeSummaryHead(&b, r, limit)
	writeDifferences(&b, r, swe, limit/4)
	writeTableHead(&b)
	rows := slices.Clone(r.Pairs)
	slices.SortStableFunc(rows, func(a, b PairResult) int {
		return cmp.Or(cmp.Compare(urgency(a.Verdict), urgency(b.Verdict)), strings.Compare(a.ID, b.ID))
	})
	shown := 0
	for _, p := range rows {
		// A row that does not fit is left out, and the table goes on: a smaller row after it
		// may fit. (A candidate decides how long its own row's reasons are.)
		row := pairRow(p, swe)
		if b.Len()+len(row) > limit-summaryReserve {
			continue
		}
		b.WriteString(row)
		shown++
	}
	if shown < len(rows) {
		fmt.Fprintf(&b, "\n> **Truncated:** this summary shows %d of %d pairs, to stay under %d bytes. "+
			"Every pair is in `%s`.\n", shown, len(rows), limit, ResultsJSON)
	}
	return []byte(b.String())
}

// urgency orders the table: errors first, resolved last.
func urgency(v Verdict) int {
	switch v {
	case Error:
		return 0
	case IntegrityViolation:
		return 1
	case Unresolved:
		return 2
	case Resolved:
		return 3
	}
	return -1
}

func writeSummaryHead(b *strings.Builder, r Results, limit int) {
	title := strings.TrimSpace(r.Suite + " " + r.SuiteVersion)
	fmt.Fprintf(b, "# Tender: %s\n\n", mdText(title, maxCell))
	var facts []string
	for _, f := range []struct{ name, val string }{
		{"tool", r.Tool}, {"backend", r.Backend}, {"shard", r.Shard},
		{"started", timestamp(r.Started)}, {"finished", timestamp(r.Finished)},
	} {
		if f.val != "" {
			facts = append(facts, f.name+" "+mdText(f.val, maxCell))
		}
	}
	if r.Model != "" {
		facts = append(facts, "model "+mdText(r.Model, maxCell))
	}
	facts = append(facts, fmt.Sprintf("%d pairs", len(r.Pairs)))
	fmt.Fprintf(b, "%s\n\n", strings.Join(facts, " · "))
	writeCounts(b, r)
	writeNotGraded(b, r)
	if r.Comparison != nil { // at most half the summary, so the table of pairs keeps room
		b.WriteString(ComparisonMarkdown(r.Comparison, "## Compared with the baseline", limit/2))
		b.WriteString("\n")
	}
}

func writeTableHead(b *strings.Builder) {
	b.WriteString("## Pairs\n\n")
	b.WriteString(rulesNote)
	b.WriteString(
		"| Pair | Verdict (Tender's rule) | Expected | SWE-bench's rule, same run | Reasons | Duration | Files |\n",
	)
	b.WriteString("| --- | --- | --- | --- | --- | ---: | --- |\n")
}

// rulesNote says what the two grade columns are, as neither is what SWE-bench itself would
// report: SWE-bench runs the tests its own way, unhardened, and parses the log.
const rulesNote = "Tender's rule: each required test reported once, passed, in the hardened run. " +
	"SWE-bench's rule: SWE-bench's grading of that same run's tests, not what SWE-bench's harness would report.\n\n"

// writeNotGraded names the instances of an imported SWE-bench file that are not pairs.
func writeNotGraded(b *strings.Builder, r Results) {
	for _, l := range []struct {
		what string
		ids  []string
	}{{"without a prediction (incomplete)", r.NoPrediction}, {"skipped by the import (error)", r.NotImported}} {
		if len(l.ids) == 0 {
			continue
		}
		fmt.Fprintf(
			b,
			"**%d instance(s) %s**, not graded: %s\n\n",
			len(l.ids),
			l.what,
			mdText(strings.Join(l.ids, ", "), 4*maxCell),
		)
	}
}

func writeCounts(b *strings.Builder, r Results) {
	b.WriteString("| Verdict | Pairs |\n| --- | ---: |\n")
	for _, v := range verdictOrder {
		fmt.Fprintf(b, "| %s | %d |\n", v, r.Counts[v])
	}
	b.WriteString("\n")
	if len(r.Pairs) == 0 {
		return
	}
	b.WriteString("```mermaid\npie showData title Verdicts\n")
	for _, v := range verdictOrder {
		if n := r.Counts[v]; n > 0 {
			fmt.Fprintf(b, "    %q : %d\n", string(v), n)
		}
	}
	b.WriteString("```\n\n")
}

// sweView is what summary.md shows of the SWE-bench outputs: SWE-bench's grade of each pair
// and which pairs have a report.json.
type sweView struct {
	grade   func(PairResult) string
	reports map[string]bool
	differ  func(PairResult) []RuleDifference
}

func pairRow(p PairResult, swe sweView) string {
	dir := PairDir(p.ID) + "/"
	files := "—"
	switch {
	case swe.reports[p.ID]:
		files = fmt.Sprintf("[files](%s) · [report.json](%s%s)", dir, dir, PairReport)
	case pairHasLogs(p):
		files = fmt.Sprintf("[files](%s)", dir)
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s |\n",
		mdText(p.ID, maxCell), verdictCell(p), expectCell(p), swe.cell(p),
		reasonsCell(p.Reasons), duration(p.DurationMillis), files)
}

// pairHasLogs reports whether the run wrote files into the pair's directory. A pair with an
// empty patch, or one refused before any verifier ran, has none: no link may point there.
func pairHasLogs(p PairResult) bool {
	for _, c := range p.Checks {
		if c.LogFile != "" {
			return true
		}
	}
	return slices.ContainsFunc(p.Reasons, func(r Reason) bool { return r.Code == CodeInternalPanic })
}

// verdictCell is the verdict, and how the patch was applied when a fallback of apply: swebench
// applied it.
func verdictCell(p PairResult) string {
	v := mdText(string(p.Verdict), 40)
	if p.ApplyMethod != "" && p.ApplyMethod != "git_apply" {
		v += " · patch applied by " + mdText(p.ApplyMethod, 40)
	}
	return v
}

func expectCell(p PairResult) string {
	if p.Expect == "" {
		return ""
	}
	mark := "met"
	if p.MissedExpect() {
		mark = "**not met**"
	}
	return mdText(string(p.Expect), 40) + " (" + mark + ")"
}

// cell is SWE-bench's grade of the pair's run; "—" when it has none.
func (v sweView) cell(p PairResult) string {
	if v.grade == nil {
		return "—"
	}
	if g := v.grade(p); g != "" {
		return mdText(g, 40)
	}
	return "—"
}

func reasonsCell(rs []Reason) string {
	var b strings.Builder
	for i, r := range rs {
		part := mdText(reasonText(r), maxCell)
		if b.Len()+len(part) > maxReasonsCell {
			fmt.Fprintf(&b, "; and %d more", len(rs)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(part)
	}
	return b.String()
}

func duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Minute {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// writeDifferences writes a line for each pair whose verdict SWE-bench's rule does not share,
// naming the rules that made the difference, in at most limit bytes; lines that do not fit are
// counted.
func writeDifferences(b *strings.Builder, r Results, swe sweView, limit int) {
	if swe.differ == nil {
		return
	}
	var lines []string
	for _, p := range r.Pairs {
		if ds := swe.differ(p); len(ds) > 0 {
			lines = append(lines, differenceLine(p, swe, ds))
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("## Where the two rules differ\n\n")
	start := b.Len()
	for i, line := range lines {
		if b.Len()-start+len(line) > limit {
			fmt.Fprintf(b, "- and %d more pairs; each pair's report.json has both grades\n", len(lines)-i)
			break
		}
		b.WriteString(line)
	}
	b.WriteString("\n")
}

// differenceLine is one pair's line: both grades, then each rule and what it did.
func differenceLine(p PairResult, swe sweView, ds []RuleDifference) string {
	parts := make([]string, 0, len(ds))
	for _, d := range ds {
		parts = append(parts, "**"+mdText(d.Rule, 40)+"**: "+mdText(d.Detail, maxCell))
	}
	return fmt.Sprintf("- %s: Tender's rule %s, SWE-bench's rule %s. %s\n", mdText(p.ID, maxCell),
		mdText(string(p.Verdict), 40), swe.cell(p), strings.Join(parts, "; "))
}
