package github

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	gh "github.com/google/go-github/v93/github"
)

// Outcome is what a publication did.
type Outcome struct {
	CheckRunID int64
	HTMLURL    string
	Reused     bool   // the run existed already (same name, commit and external_id)
	Abandoned  string // when publishing failed after the run existed: the conclusion it was given
	FellBack   bool   // the token was refused; annotations went out as workflow commands
	Note       string // what happened, for the log
	// Comment is the pull-request comment posted or updated after the check run; nil when
	// none was asked for or it was skipped.
	Comment *CommentOutcome
}

// listPageSize and maxListPages bound the look-up of an existing run.
const (
	listPageSize = 100
	maxListPages = 10
	// abandonTimeout bounds the request that completes a half-published run, which runs
	// even when the publication's context was cancelled.
	abandonTimeout = 2 * time.Minute
)

// errFound stops the retries of a request whose work turned out to be done already.
var errFound = errors.New("found done already")

// Publish sends p so that it can be repeated: it finds the run this publication made before
// (same name, commit and external_id) or creates it, looking again before any retry of the
// create; appends the annotations the run does not have yet; then completes it. When anything
// fails after the run exists, the run is completed as neutral (cancelled when ctx was) with a
// note, never left in progress; running Publish again for the same plan finishes it.
func (c *Client) Publish(ctx context.Context, p *Plan) (*Outcome, error) {
	run, reused, err := c.ensureRun(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &Outcome{CheckRunID: run.GetID(), HTMLURL: run.GetHTMLURL(), Reused: reused}
	done := 0
	if reused {
		done = run.GetOutput().GetAnnotationsCount()
	}
	if err := c.complete(ctx, p, out.CheckRunID, done); err != nil {
		return out, c.abandon(ctx, p, out, err)
	}
	verb := "published"
	if reused {
		verb = "published to the existing"
	}
	out.Note = fmt.Sprintf("%s check run %q (%d annotations) %s", verb, p.Name, len(p.Annotations), out.HTMLURL)
	return out, nil
}

// ensureRun returns the run of this publication, creating it when there is none.
func (c *Client) ensureRun(ctx context.Context, p *Plan) (*gh.CheckRun, bool, error) {
	run, err := c.findRun(ctx, p)
	if err != nil || run != nil {
		return run, run != nil, err
	}
	var found *gh.CheckRun
	lookFirst := func(ctx context.Context) error {
		run, err := c.findRun(ctx, p)
		if err != nil {
			return fmt.Errorf(
				"a create may have succeeded unseen, and looking for its run failed, so it is not sent again: %w",
				err,
			)
		}
		if run != nil {
			found = run
			return errFound
		}
		return nil
	}
	run, resp, err := c.gh.Checks.CreateCheckRun(
		WithBeforeRetry(ctx, lookFirst),
		p.Target.Owner,
		p.Target.Repo,
		p.Create,
	)
	if errors.Is(err, errFound) {
		return found, true, nil
	}
	if err != nil {
		return nil, false, c.wrap("creating check run "+strconv.Quote(p.Name), resp, err)
	}
	return run, false, nil
}

// findRun returns the newest run on p's commit with p's name and external_id, or nil.
func (c *Client) findRun(ctx context.Context, p *Plan) (*gh.CheckRun, error) {
	opts := &gh.ListCheckRunsOptions{CheckName: new(p.Name), Filter: new("all"),
		ListOptions: gh.ListOptions{PerPage: listPageSize}}
	var best *gh.CheckRun
	for page := 1; page <= maxListPages; page++ {
		opts.Page = page
		res, resp, err := c.gh.Checks.ListCheckRunsForRef(ctx, p.Target.Owner, p.Target.Repo, p.Target.HeadSHA, opts)
		if err != nil {
			return nil, c.wrap("looking for an earlier check run "+strconv.Quote(p.Name), resp, err)
		}
		for _, r := range res.CheckRuns {
			if r.GetExternalID() == p.ExternalID && r.GetName() == p.Name && (best == nil || r.GetID() > best.GetID()) {
				best = r
			}
		}
		if len(res.CheckRuns) < listPageSize {
			break
		}
	}
	return best, nil
}

// complete appends the annotations from index done on, then sends the completion.
func (c *Client) complete(ctx context.Context, p *Plan, id int64, done int) error {
	o, r := p.Target.Owner, p.Target.Repo
	batches := p.BatchesFrom(done)
	for i, b := range batches {
		done += len(b.Output.Annotations)
		_, resp, err := c.gh.Checks.UpdateCheckRun(WithBeforeRetry(ctx, c.annotationsReached(p, id, done)), o, r, id, b)
		if errors.Is(err, errFound) {
			continue
		}
		if err != nil {
			return c.wrap(fmt.Sprintf("adding annotation batch %d of %d", i+1, len(batches)), resp, err)
		}
	}
	if _, resp, err := c.gh.Checks.UpdateCheckRun(ctx, o, r, id, p.Final); err != nil {
		return c.wrap("completing check run "+strconv.Quote(p.Name), resp, err)
	}
	return nil
}

// annotationsReached stops the retries of a batch that GitHub appended although its answer
// was lost: annotations append, so sending it again would show them twice.
func (c *Client) annotationsReached(p *Plan, id int64, want int) BeforeRetry {
	return func(ctx context.Context) error {
		run, resp, err := c.gh.Checks.GetCheckRun(ctx, p.Target.Owner, p.Target.Repo, id)
		if err != nil {
			return c.wrap("reading check run "+strconv.FormatInt(id, 10)+" before a retry", resp, err)
		}
		if run.GetOutput().GetAnnotationsCount() >= want {
			return errFound
		}
		return nil
	}
}

// abandon completes a half-published run as neutral (cancelled when ctx was cancelled) with
// a note that says what failed, and returns cause (joined with any failure to do so).
func (c *Client) abandon(ctx context.Context, p *Plan, out *Outcome, cause error) error {
	conclusion := "neutral"
	if ctx.Err() != nil {
		conclusion = "cancelled"
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	title := "Publishing did not finish"
	summary := CapOutput(fmt.Sprintf("**Tender could not finish publishing these results**: %s.\n\n"+
		"The annotations below may be incomplete and the conclusion is not the grade. Run `tender publish` "+
		"again for the same bundle to finish this check run.\n\n---\n\n%s", EscapeMarkdown(cause.Error()), p.Summary))
	opts := gh.UpdateCheckRunOptions{Name: p.Name, Status: new("completed"), Conclusion: new(conclusion),
		CompletedAt: &gh.Timestamp{Time: c.now().UTC()}, Output: &gh.CheckRunOutput{Title: &title, Summary: &summary}}
	if _, resp, err := c.gh.Checks.UpdateCheckRun(cctx, p.Target.Owner, p.Target.Repo, out.CheckRunID, opts); err != nil {
		return errors.Join(
			cause,
			c.wrap(
				fmt.Sprintf(
					"completing check run %d as %s after the failure; it is left in progress",
					out.CheckRunID,
					conclusion,
				),
				resp,
				err,
			),
		)
	}
	out.Abandoned = conclusion
	out.Note = fmt.Sprintf(
		"check run %q %s was completed as %s because publishing failed",
		p.Name,
		out.HTMLURL,
		conclusion,
	)
	return fmt.Errorf(
		"%w (check run %d completed as %s; run publish again for this bundle to finish it)",
		cause,
		out.CheckRunID,
		conclusion,
	)
}
