package github

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v93/github"

	"github.com/tender-grader/tender/report"
)

// Limits of the check-runs API, in bytes: GitHub counts bytes where its documentation says
// characters, so a byte cap is right for ASCII and safe for everything else.
const (
	MaxAnnotationsPerRequest = 50
	MaxOutputBytes           = 65535 // output.summary and output.text
	MaxTitleBytes            = 255   // annotation title; also used for the output title and name
	MaxMessageBytes          = 64 << 10
)

// Annotation levels.
const (
	LevelFailure = "failure"
	LevelWarning = "warning"
	LevelNotice  = "notice"
)

// Target names the commit a check run attaches to.
type Target struct {
	Owner, Repo string
	HeadSHA     string
	DetailsURL  string // optional: the workflow run
}

// DefaultAnnotationLimit is how many annotations a check run gets unless told otherwise.
const DefaultAnnotationLimit = 1000

// PlanInput is everything a plan is built from besides the results.
type PlanInput struct {
	Target  Target
	Name    string   // the check run's name; empty means CheckName(suite, shard)
	Summary string   // summary.md of the bundle; empty means a generated one
	Locator *Locator // nil places every annotation on tender.yaml line 1
	// ExternalID identifies the publication on the check run, so a retry or a second run of
	// publish for the same bundle finds the run instead of making another: the bundle digest.
	// Empty means a digest of the results.
	ExternalID string
	// AnnotationLimit caps the annotations on the check run (every pair is still listed in its
	// text); 0 means DefaultAnnotationLimit, <0 none.
	AnnotationLimit int
	Now             time.Time
}

// Plan is the exact sequence of check-run requests a publication sends: one create
// (in_progress, no annotations), one PATCH per batch of at most 50 annotations, and a final
// PATCH that completes the run with its conclusion.
type Plan struct {
	Target      Target
	Name        string
	ExternalID  string
	Create      gh.CreateCheckRunOptions
	Batches     []gh.UpdateCheckRunOptions
	Final       gh.UpdateCheckRunOptions
	Annotations []*gh.CheckRunAnnotation // those the check run gets, in order
	All         []*gh.CheckRunAnnotation // every annotation, for the fallback's job summary
	Summary     string                   // the uncapped summary, for the job-summary fallback
	title       string
	summary     string // capped
}

// BuildPlan builds the publication of r.
func BuildPlan(r report.Results, in PlanInput) *Plan {
	p := &Plan{
		Target:     in.Target,
		Name:       Cap(in.Name, MaxTitleBytes, "…"),
		Summary:    in.Summary,
		ExternalID: in.ExternalID,
	}
	if p.Name == "" {
		p.Name = CheckName(r.Suite, r.Shard)
	}
	if p.ExternalID == "" {
		p.ExternalID = resultsDigest(r)
	}
	if p.Summary == "" {
		p.Summary = generatedSummary(r)
	}
	p.All = Annotations(r, in.Locator)
	p.Annotations = limitAnnotations(p.All, in.AnnotationLimit)
	p.title = Cap(Title(r), MaxTitleBytes, "…")
	p.summary = CapOutput(p.Summary)
	p.Create = gh.CreateCheckRunOptions{
		Name: p.Name, HeadSHA: in.Target.HeadSHA, ExternalID: new(p.ExternalID), Status: new("in_progress"),
		StartedAt: &gh.Timestamp{Time: startedAt(r, in.Now)},
		Output:    &gh.CheckRunOutput{Title: &p.title, Summary: &p.summary},
	}
	if in.Target.DetailsURL != "" {
		p.Create.DetailsURL = new(in.Target.DetailsURL)
	}
	p.Batches = p.BatchesFrom(0)
	text := CapOutput(limitNote(len(p.Annotations), len(p.All)) + comparisonText(r) + detailText(r))
	p.Final = gh.UpdateCheckRunOptions{
		Name: p.Name, Status: new("completed"), Conclusion: new(Conclusion(r)),
		CompletedAt: &gh.Timestamp{Time: in.Now.UTC()},
		Output:      &gh.CheckRunOutput{Title: &p.title, Summary: &p.summary, Text: &text},
	}
	return p
}

// BatchesFrom returns the PATCH requests that append the annotations from index done on, at
// most MaxAnnotationsPerRequest each. A run found with done annotations already resumes here.
func (p *Plan) BatchesFrom(done int) []gh.UpdateCheckRunOptions {
	var out []gh.UpdateCheckRunOptions
	for i := max(done, 0); i < len(p.Annotations); i += MaxAnnotationsPerRequest {
		batch := p.Annotations[i:min(i+MaxAnnotationsPerRequest, len(p.Annotations))]
		out = append(out, gh.UpdateCheckRunOptions{Name: p.Name,
			Output: &gh.CheckRunOutput{Title: &p.title, Summary: &p.summary, Annotations: batch}})
	}
	return out
}

func limitAnnotations(all []*gh.CheckRunAnnotation, limit int) []*gh.CheckRunAnnotation {
	if limit == 0 {
		limit = DefaultAnnotationLimit
	}
	if limit < 0 || len(all) <= limit {
		return all
	}
	return all[:limit]
}

func limitNote(shown, all int) string {
	if shown == all {
		return ""
	}
	return fmt.Sprintf(
		"*%d of %d annotations are shown (the annotation limit); every pair is listed below.*\n\n",
		shown,
		all,
	)
}

// resultsDigest identifies r when no bundle digest is given.
func resultsDigest(r report.Results) string {
	b, _ := json.Marshal(r)
	sum := sha256.Sum256(b)
	return "results-sha256:" + hex.EncodeToString(sum[:])
}

// startedAt is when grading began, or now when the results do not say.
func startedAt(r report.Results, now time.Time) time.Time {
	if r.Started.IsZero() {
		return now.UTC()
	}
	return r.Started.UTC()
}

// CheckName names the check run for the suite and the shard, so it is never the job's own.
func CheckName(suite, shard string) string {
	name := "tender: " + suite
	if shard != "" {
		name += " (shard " + shard + ")"
	}
	return Cap(name, MaxTitleBytes, "…")
}

// Conclusion is the check-run conclusion of r. Any error verdict is a failure. When every pair
// states an expectation, success means every expectation was met; otherwise success means every
// pair was resolved.
func Conclusion(r report.Results) string {
	expected, met := 0, 0
	for _, p := range r.Pairs {
		if p.Verdict == report.Error {
			return "failure"
		}
		if p.Expect != "" {
			expected++
			if p.Verdict == p.Expect {
				met++
			}
		}
	}
	if len(r.Pairs) > 0 && expected == len(r.Pairs) {
		return pick(met == expected, "success", "failure")
	}
	for _, p := range r.Pairs {
		if p.Verdict != report.Resolved {
			return "failure"
		}
	}
	return "success"
}

func pick(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

// Title is the one-line headline of r, with what regressed and improved when r was compared
// with a baseline.
func Title(r report.Results) string {
	c := report.Count(r.Pairs).Verdicts
	t := fmt.Sprintf("%d/%d resolved, %d unresolved, %d integrity violation(s), %d error(s)",
		c[report.Resolved], len(r.Pairs), c[report.Unresolved], c[report.IntegrityViolation], c[report.Error])
	if cmp := r.Comparison; cmp != nil {
		t += fmt.Sprintf("; %d regressed, %d improved", cmp.Counts[report.Regressed], cmp.Counts[report.Improved])
	}
	return t
}

// Step is one request of a plan as the dry run prints it.
type Step struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Body   any    `json:"body"`
}

// Steps lists the requests of p in the order they are sent when no run exists yet: the
// look-up of a run with the same external_id, the create, the annotation batches and the
// completion. The id of the created check run is not known before it exists, so later paths
// carry the placeholder {check_run_id}.
func (p *Plan) Steps() []Step {
	base := fmt.Sprintf("/repos/%s/%s/check-runs", p.Target.Owner, p.Target.Repo)
	steps := []Step{{"GET", p.lookupPath(), nil}, {"POST", base, p.Create}}
	for _, b := range p.Batches {
		steps = append(steps, Step{"PATCH", base + "/{check_run_id}", b})
	}
	return append(steps, Step{"PATCH", base + "/{check_run_id}", p.Final})
}

func (p *Plan) lookupPath() string {
	q := url.Values{"check_name": {p.Name}, "filter": {"all"}, "per_page": {strconv.Itoa(listPageSize)}}
	return fmt.Sprintf(
		"/repos/%s/%s/commits/%s/check-runs?%s",
		p.Target.Owner,
		p.Target.Repo,
		p.Target.HeadSHA,
		q.Encode(),
	)
}

// WriteDryRun prints the exact JSON payloads p would send, one indented document per step.
func (p *Plan) WriteDryRun(w io.Writer) error { return WriteSteps(w, p.Steps()) }

// WriteSteps prints steps as the dry run does: one indented JSON array.
func WriteSteps(w io.Writer, steps []Step) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(steps)
}

// sortedPairs returns r's pairs sorted by id, so plans are stable.
func sortedPairs(r report.Results) []report.PairResult {
	ps := append([]report.PairResult(nil), r.Pairs...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
	return ps
}

func generatedSummary(r report.Results) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Tender: %s\n\n%s\n\n| verdict | pairs |\n| --- | --- |\n",
		EscapeMarkdown(r.Suite), Title(r))
	c := report.Count(r.Pairs).Verdicts
	for _, v := range []report.Verdict{report.Resolved, report.Unresolved, report.IntegrityViolation, report.Error} {
		fmt.Fprintf(&b, "| %s | %d |\n", v, c[v])
	}
	return b.String()
}

// comparisonText is the comparison with the baseline for the check run's text: at most half
// of it, so every pair's lines keep room.
func comparisonText(r report.Results) string {
	if r.Comparison == nil {
		return ""
	}
	return report.ComparisonMarkdown(r.Comparison, "## Compared with the baseline", MaxOutputBytes/2) + "\n"
}

func detailText(r report.Results) string {
	var b strings.Builder
	for _, p := range sortedPairs(r) {
		fmt.Fprintf(&b, "### %s: %s\n\n", EscapeMarkdown(p.ID), p.Verdict)
		for _, rs := range p.Reasons {
			fmt.Fprintf(&b, "- %s\n", EscapeMarkdown(reasonText(rs)))
		}
		if len(p.Reasons) > 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

func reasonText(r report.Reason) string {
	s := string(r.Code)
	if r.Path != "" {
		s += " " + r.Path
		if r.Line > 0 {
			s += fmt.Sprintf(" (line %d)", r.Line)
		}
	}
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	return s
}
