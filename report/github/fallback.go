package github

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v93/github"
	"github.com/sethvargo/go-githubactions"
)

// PublishWithFallback publishes p, and when the API answers 403 (as for pull requests from
// forks, whose token may not write checks) writes the annotations as workflow commands and the
// summary to the job summary instead, and says so.
func (c *Client) PublishWithFallback(ctx context.Context, p *Plan, fb Fallback) (*Outcome, error) {
	out, err := c.Publish(ctx, p)
	if err == nil || !Forbidden(err) {
		return out, err
	}
	shown, werr := fb.Write(p, err)
	if werr != nil {
		return out, werr
	}
	if out == nil {
		out = &Outcome{}
	}
	out.FellBack = true
	out.Note = fmt.Sprintf("check run refused (%v); wrote %d of %d annotations as workflow commands%s instead",
		err, shown, len(p.All), pick(fb.JobSummary, " and the results to the job summary", ""))
	return out, nil
}

// GitHub shows at most this many workflow-command annotations of each level (error, warning,
// notice) per step, and this many per job; the rest are dropped without a word.
const (
	MaxCommandsPerLevel = 10
	MaxCommandsPerJob   = 50
)

// MaxJobSummaryBytes is the size limit of one step's job summary.
const MaxJobSummaryBytes = 1 << 20

// Fallback writes a plan the Actions way: workflow commands on the log and the job summary.
type Fallback struct {
	Action     *githubactions.Action // its getenv supplies GITHUB_STEP_SUMMARY
	JobSummary bool                  // write the results and every annotation to the job summary
}

// Write emits a warning naming cause, as many annotations as GitHub will show in one step
// (10 per level, the warning included), then, when some did not fit, one notice that says how
// many and where they all are; and the job summary. It returns how many annotations it wrote.
func (f Fallback) Write(p *Plan, cause error) (int, error) {
	f.Action.Warningf(
		"tender: could not publish the check run (%v); annotations follow as workflow commands and the results are in the %s",
		cause,
		pick(f.JobSummary, "job summary", "evidence bundle"),
	)
	shown, dropped := f.commands(p.All)
	if dropped > 0 {
		f.Action.Noticef(
			"tender: %d more annotation(s) are not shown here: GitHub shows at most %d of each level per step. All %d are listed in the %s.",
			dropped,
			MaxCommandsPerLevel,
			len(p.All),
			pick(f.JobSummary, "job summary", "results.json of the evidence bundle"),
		)
	}
	if !f.JobSummary {
		return shown, nil
	}
	return shown, f.summary(p)
}

// commands writes the annotations that fit the per-step budget and counts the rest.
func (f Fallback) commands(all []*gh.CheckRunAnnotation) (shown, dropped int) {
	budget := map[string]int{
		"error":   MaxCommandsPerLevel,
		"warning": MaxCommandsPerLevel - 1,
		"notice":  MaxCommandsPerLevel,
	}
	need := map[string]int{}
	for _, a := range all {
		need[commandName(a)]++
	}
	if need["error"] > budget["error"] || need["warning"] > budget["warning"] || need["notice"] > budget["notice"] {
		budget["notice"]-- // room for the notice that points at the rest
	}
	for _, a := range all {
		name := commandName(a)
		if budget[name] == 0 || shown >= MaxCommandsPerJob-2 {
			dropped++
			continue
		}
		budget[name]--
		shown++
		f.Action.IssueCommand(WorkflowCommand(a))
	}
	return shown, dropped
}

// summary appends the results and a table of every annotation to the job summary.
func (f Fallback) summary(p *Plan) (err error) {
	if f.Action.Getenv("GITHUB_STEP_SUMMARY") == "" {
		return nil
	}
	defer func() { // go-githubactions panics when it cannot write the file
		if r := recover(); r != nil {
			err = fmt.Errorf("writing the job summary: %v", r)
		}
	}()
	var b strings.Builder
	b.WriteString("> Published as a job summary: the token could not create the check run.\n\n")
	b.WriteString(p.Summary)
	fmt.Fprintf(
		&b,
		"\n\n### Annotations (%d)\n\n| level | where | title | message |\n| --- | --- | --- | --- |\n",
		len(p.All),
	)
	for _, a := range p.All {
		fmt.Fprintf(&b, "| %s | %s:%d | %s | %s |\n", a.GetAnnotationLevel(), EscapeMarkdown(a.GetPath()),
			a.GetStartLine(), EscapeMarkdown(a.GetTitle()), EscapeMarkdown(a.GetMessage()))
	}
	f.Action.AddStepSummary(Cap(b.String(), MaxJobSummaryBytes-1, TruncationNote))
	return nil
}

func commandName(a *gh.CheckRunAnnotation) string {
	switch a.GetAnnotationLevel() {
	case LevelFailure:
		return "error"
	case LevelWarning:
		return "warning"
	}
	return "notice"
}

// WorkflowCommand turns an annotation into ::error / ::warning / ::notice with file, line,
// endLine and title properties; go-githubactions escapes properties and message.
func WorkflowCommand(a *gh.CheckRunAnnotation) *githubactions.Command {
	return &githubactions.Command{
		Name:    commandName(a),
		Message: a.GetMessage(),
		Properties: githubactions.CommandProperties{
			"file": a.GetPath(), "line": strconv.Itoa(a.GetStartLine()),
			"endLine": strconv.Itoa(a.GetEndLine()), "title": a.GetTitle(),
		},
	}
}
