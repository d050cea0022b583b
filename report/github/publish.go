package github

import (
	"context"
	"fmt"
	"os"
	"strconv"

	gh "github.com/google/go-github/v62/github"
	"github.com/sethvargo/go-githubactions"
)

// Outcome is what a publication did.
type Outcome struct {
	CheckRunID int64
	HTMLURL    string
	FellBack   bool   // the token was refused; annotations went out as workflow commands
	Note       string // what happened, for the log
}

// Publish sends p: create, the annotation batches, then the final completion.
func (c *Client) Publish(ctx context.Context, p *Plan) (*Outcome, error) {
	o, r := p.Target.Owner, p.Target.Repo
	run, resp, err := c.gh.Checks.CreateCheckRun(ctx, o, r, p.Create)
	if err != nil {
		return nil, c.wrap("creating check run "+strconv.Quote(p.Name), resp, err)
	}
	out := &Outcome{CheckRunID: run.GetID(), HTMLURL: run.GetHTMLURL()}
	for i, b := range p.Batches {
		_, resp, err := c.gh.Checks.UpdateCheckRun(ctx, o, r, out.CheckRunID, b)
		if err != nil {
			return out, c.wrap(fmt.Sprintf("adding annotation batch %d of %d", i+1, len(p.Batches)), resp, err)
		}
	}
	if _, resp, err := c.gh.Checks.UpdateCheckRun(ctx, o, r, out.CheckRunID, p.Final); err != nil {
		return out, c.wrap("completing check run "+strconv.Quote(p.Name), resp, err)
	}
	out.Note = fmt.Sprintf("published check run %q (%d annotations) %s", p.Name, len(p.Annotations), out.HTMLURL)
	return out, nil
}

// PublishWithFallback publishes p, and when the API answers 403 (as for pull requests from
// forks, whose token may not write checks) writes the annotations as workflow commands and the
// summary to the job summary instead, and says so.
func (c *Client) PublishWithFallback(ctx context.Context, p *Plan, fb Fallback) (*Outcome, error) {
	out, err := c.Publish(ctx, p)
	if err == nil || !Forbidden(err) {
		return out, err
	}
	if err := fb.Write(p, err); err != nil {
		return out, err
	}
	if out == nil {
		out = &Outcome{}
	}
	out.FellBack = true
	out.Note = fmt.Sprintf("check run refused (%v); wrote %d annotations as workflow commands and the job summary instead", err, len(p.Annotations))
	return out, nil
}

// Fallback writes a plan the Actions way: workflow commands on the log and the job summary.
type Fallback struct {
	Action      *githubactions.Action
	SummaryPath string // GITHUB_STEP_SUMMARY; empty skips the summary
}

// MaxJobSummaryBytes is the size limit of one step's job summary.
const MaxJobSummaryBytes = 1 << 20

// Write emits a warning naming cause, one workflow command per annotation and the summary.
func (f Fallback) Write(p *Plan, cause error) error {
	f.Action.Warningf("tender: could not publish the check run (%v); annotations follow as workflow commands and the results are in the job summary", cause)
	for _, a := range p.Annotations {
		f.Action.IssueCommand(WorkflowCommand(a))
	}
	if f.SummaryPath == "" {
		return nil
	}
	note := "> Published as a job summary: the token could not create the check run.\n\n"
	return appendFile(f.SummaryPath, CapBytes(note+p.Summary, MaxJobSummaryBytes, TruncationNote))
}

// WorkflowCommand turns an annotation into ::error / ::warning / ::notice with file, line,
// endLine and title properties; go-githubactions escapes properties and message.
func WorkflowCommand(a *gh.CheckRunAnnotation) *githubactions.Command {
	name := map[string]string{LevelFailure: "error", LevelWarning: "warning"}[a.GetAnnotationLevel()]
	if name == "" {
		name = "notice"
	}
	return &githubactions.Command{Name: name, Message: a.GetMessage(), Properties: githubactions.CommandProperties{
		"file": a.GetPath(), "line": strconv.Itoa(a.GetStartLine()),
		"endLine": strconv.Itoa(a.GetEndLine()), "title": a.GetTitle(),
	}}
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("writing the job summary: %w", err)
	}
	if _, err := f.WriteString(text + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("writing the job summary %s: %w", path, err)
	}
	return f.Close()
}
