package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v93/github"

	"github.com/tender-grader/tender/report"
)

// MaxCommentBytes caps a PR comment's body. GitHub refuses a body of more than 65,536
// characters; a byte is never more than a character, so a byte cap is safe.
const MaxCommentBytes = 65536

// commentTruncated ends a comment cut to fit.
const commentTruncated = "\n\n*Cut to fit GitHub's comment size; the full report is in the check run and the bundle.*\n"

// CommentInput is what a PR comment is built from besides the results.
type CommentInput struct {
	Owner, Repo string
	PR          int
	// Name is the check run's name. The comment's hidden marker is derived from it, so each
	// check run (each suite and shard) keeps one comment of its own.
	Name        string
	HeadSHA     string
	CheckRunURL string // empty when not known (a dry run)
	Bundle      string // the bundle digest (sha256 of bundle.dsse.json); empty when not known
}

// CommentPlan is one PR comment: created once, then updated in place on every later
// publication, found again by its hidden Marker.
type CommentPlan struct {
	Owner, Repo string
	PR          int
	Marker      string
	Body        string
}

// BuildComment builds the comment for r: the headline, the comparison with the baseline
// when there is one, the verdict counts and a link to the check run, under the marker.
func BuildComment(r report.Results, in CommentInput) *CommentPlan {
	p := &CommentPlan{Owner: in.Owner, Repo: in.Repo, PR: in.PR, Marker: CommentMarker(in.Name)}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n### %s\n\n**%s**\n\n", p.Marker, EscapeMarkdown(in.Name), Title(r))
	if r.Comparison != nil {
		b.WriteString(report.ComparisonMarkdown(r.Comparison, "#### Compared with the baseline", MaxCommentBytes/2))
	} else {
		b.WriteString("No baseline was given, so there is nothing to compare with.\n")
	}
	b.WriteString("\n| Verdict | Pairs |\n| --- | ---: |\n")
	c := report.Count(r.Pairs).Verdicts
	for _, v := range []report.Verdict{report.Resolved, report.Unresolved, report.IntegrityViolation, report.Error} {
		fmt.Fprintf(&b, "| %s | %d |\n", v, c[v])
	}
	var links []string
	if in.CheckRunURL != "" {
		links = append(links, "[check run]("+in.CheckRunURL+")")
	}
	if in.HeadSHA != "" {
		links = append(links, "commit "+in.HeadSHA[:min(12, len(in.HeadSHA))])
	}
	if in.Bundle != "" {
		links = append(links, "bundle "+in.Bundle[:min(12, len(in.Bundle))])
	}
	if len(links) > 0 {
		fmt.Fprintf(&b, "\n%s\n", strings.Join(links, " · "))
	}
	p.Body = Cap(b.String(), MaxCommentBytes, commentTruncated)
	return p
}

// CommentMarker is the hidden first line that identifies the comment of the check run name.
func CommentMarker(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "<!-- tender-comment:" + hex.EncodeToString(sum[:8]) + " -->"
}

// CommentOutcome is what UpsertComment did.
type CommentOutcome struct {
	ID      int64
	HTMLURL string
	Updated bool // an earlier comment was updated in place
}

// maxCommentPages bounds the look-up of an earlier comment: 10 pages of 100.
const maxCommentPages = 10

// UpsertComment updates the comment p's marker finds on the pull request, or creates it; before
// any retry of a create whose answer was lost it looks again, so a retry never makes a second.
func (c *Client) UpsertComment(ctx context.Context, p *CommentPlan) (*CommentOutcome, error) {
	found, err := c.findComment(ctx, p)
	if err != nil {
		return nil, err
	}
	if found != nil {
		return c.updateComment(ctx, p, found.GetID())
	}
	lookFirst := func(ctx context.Context) error {
		again, err := c.findComment(ctx, p)
		if err != nil {
			return fmt.Errorf("a create may have succeeded unseen, and looking for it failed, so it is not sent again: %w",
				err)
		}
		if again != nil {
			found = again
			return errFound
		}
		return nil
	}
	req := gh.IssueCommentRequest{Body: p.Body}
	got, resp, err := c.gh.Issues.CreateComment(WithBeforeRetry(ctx, lookFirst), p.Owner, p.Repo, p.PR, req)
	if errors.Is(err, errFound) {
		return c.updateComment(ctx, p, found.GetID()) // the lost create did land
	}
	if err != nil {
		return nil, c.wrap(fmt.Sprintf("commenting on pull request #%d", p.PR), resp, err)
	}
	return &CommentOutcome{ID: got.GetID(), HTMLURL: got.GetHTMLURL()}, nil
}

func (c *Client) updateComment(ctx context.Context, p *CommentPlan, id int64) (*CommentOutcome, error) {
	got, resp, err := c.gh.Issues.UpdateComment(ctx, p.Owner, p.Repo, id, gh.IssueCommentRequest{Body: p.Body})
	if err != nil {
		return nil, c.wrap(fmt.Sprintf("updating comment %d on pull request #%d", id, p.PR), resp, err)
	}
	return &CommentOutcome{ID: got.GetID(), HTMLURL: got.GetHTMLURL(), Updated: true}, nil
}

// findComment returns the newest comment on the pull request that starts with p's marker and
// was written by a bot (as every GitHub App token, GITHUB_TOKEN included, writes): a person
// who pastes the marker into a comment of their own does not get it overwritten.
func (c *Client) findComment(ctx context.Context, p *CommentPlan) (*gh.IssueComment, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: listPageSize}}
	var best *gh.IssueComment
	for page := 1; page <= maxCommentPages; page++ {
		opts.Page = page
		list, resp, err := c.gh.Issues.ListComments(ctx, p.Owner, p.Repo, p.PR, opts)
		if err != nil {
			return nil, c.wrap(fmt.Sprintf("looking for Tender's comment on pull request #%d", p.PR), resp, err)
		}
		for _, cm := range list {
			if strings.HasPrefix(cm.GetBody(), p.Marker) && cm.GetUser().GetType() == "Bot" &&
				(best == nil || cm.GetID() > best.GetID()) {
				best = cm
			}
		}
		if len(list) < listPageSize {
			break
		}
	}
	return best, nil
}

// Steps lists the requests of p as a dry run prints them: the look-up, then the create. When
// an earlier comment exists the create is a PATCH of it instead.
func (p *CommentPlan) Steps() []Step {
	base := fmt.Sprintf("/repos/%s/%s/issues", p.Owner, p.Repo)
	q := url.Values{"per_page": {strconv.Itoa(listPageSize)}, "page": {"1"}}
	body := gh.IssueCommentRequest{Body: p.Body}
	return []Step{
		{"GET", fmt.Sprintf("%s/%d/comments?%s", base, p.PR, q.Encode()), nil},
		{"POST", fmt.Sprintf("%s/%d/comments", base, p.PR), body},
	}
}
