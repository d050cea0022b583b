package cli

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/bundle"
	"github.com/tender-grader/tender/report/github"
)

// publishClientOptions are merged into the token client's options; tests turn off the second
// GitHub asks between mutating requests, which the report/github tests cover.
var publishClientOptions github.ClientOptions

// publishOptions are the flags of `tender publish`.
type publishOptions struct {
	Bundle, Key, Environment, Repository, SHA, Suite, CheckName string
	Annotations, PR                                             int
	Publish, JobSummary, Comment                                bool
	Baseline                                                    baselineFlags
}

func cmdPublish(ctx context.Context, inv *invocation, args []string) error {
	_, err := runPublish(ctx, inv, args)
	return err
}

// runPublish is `tender publish`; the outcome is nil unless something was posted.
func runPublish(ctx context.Context, inv *invocation, args []string) (*github.Outcome, error) {
	o, err := parsePublish(inv, args)
	if err != nil {
		return nil, err
	}
	base, err := o.Baseline.load()
	if err != nil {
		return nil, err
	}
	m, res, err := loadVerifiedBundle(o.Bundle, o.Key)
	if err != nil {
		return nil, err
	}
	if base != nil { // replaces any comparison the bundle holds
		res.Comparison = base.compare(res)
	}
	plan, err := publishPlan(inv, o, res, m.EnvelopeSHA256)
	if err != nil {
		return nil, err
	}
	comment := commentPlan(o, plan, res, m.EnvelopeSHA256, "")
	if !o.Publish {
		return nil, dryRun(inv, plan, comment, "publishing was not requested (--publish)")
	}
	if err := checkTarget(plan.Target); err != nil {
		return nil, err
	}
	c, err := approve(ctx, inv, o, plan.Target, m.EnvelopeSHA256)
	if errors.Is(err, github.ErrNotApproved) || errors.Is(err, errNoToken) {
		return nil, dryRun(inv, plan, comment, err.Error())
	}
	if err != nil {
		return nil, err
	}
	out, err := publishPlanNow(ctx, inv, c, plan, o)
	if err != nil || comment == nil {
		return out, err
	}
	return out, publishComment(ctx, inv, c, out, commentPlan(o, plan, res, m.EnvelopeSHA256, out.HTMLURL))
}

// commentPlan is the pull-request comment --comment asks for; nil without it.
func commentPlan(o publishOptions, plan *github.Plan, res report.Results, digest, runURL string) *github.CommentPlan {
	if !o.Comment {
		return nil
	}
	t := plan.Target
	return github.BuildComment(res, github.CommentInput{Owner: t.Owner, Repo: t.Repo, PR: o.PR, Name: plan.Name,
		HeadSHA: t.HeadSHA, CheckRunURL: runURL, Bundle: digest})
}

// publishComment posts or updates the comment after the check run, behind the same approval
// and through the same token client. When the check run fell back (the token may not write
// to the repository, as on a fork's pull request) the comment would be refused too: skipped.
func publishComment(
	ctx context.Context,
	inv *invocation,
	c *github.Client,
	out *github.Outcome,
	p *github.CommentPlan,
) error {
	if out.FellBack {
		fmt.Fprintln(inv.Stderr, "tender: the pull-request comment was skipped: the token may not write here "+
			"(the check run fell back too)")
		return nil
	}
	co, err := c.UpsertComment(ctx, p)
	if err != nil && github.Forbidden(err) {
		err = fmt.Errorf("%w (the token needs pull-requests: write to comment)", err)
	}
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("publish: the check run is published, but the comment is not: %w", err))
	}
	out.Comment = co
	verb := "commented on"
	if co.Updated {
		verb = "updated the comment on"
	}
	fmt.Fprintf(inv.Stderr, "tender: %s pull request #%d: %s\n", verb, p.PR, co.HTMLURL)
	return nil
}

func parsePublish(inv *invocation, args []string) (publishOptions, error) {
	var o publishOptions
	fs := newFlags(
		inv,
		"publish",
		"publish BUNDLE [--key PUB] [--publish] [--approval-environment E] [--repository OWNER/NAME] [--sha SHA] "+
			"[--suite DIR] [--check-name NAME] [--annotations N] [--baseline BUNDLE [--baseline-key PUB]] "+
			"[--comment --pr N]",
	)
	fs.StringVar(&o.Key, "key", "", "ed25519 public key `file`; when given, the signature must verify")
	fs.BoolVar(
		&o.Publish,
		"publish",
		false,
		"post the check run (still needs a verified approval); without it, print the payloads",
	)
	fs.StringVar(
		&o.Environment,
		"approval-environment",
		"",
		"in Actions: the `environment` whose approved review on this run allows publishing",
	)
	fs.StringVar(&o.Repository, "repository", "", "`OWNER/NAME` to publish to (default $GITHUB_REPOSITORY)")
	fs.StringVar(&o.SHA, "sha", "", "commit `SHA` the check run attaches to (default $GITHUB_SHA)")
	fs.StringVar(&o.Suite, "suite", "", "suite `DIR` (repository-relative) the annotations are placed under")
	fs.StringVar(
		&o.CheckName,
		"check-name",
		"",
		"check run `NAME` (default \"tender: SUITE\", with the shard when there is one)",
	)
	fs.IntVar(
		&o.Annotations,
		"annotations",
		github.DefaultAnnotationLimit,
		"at most `N` annotations on the check run; every pair is still listed in its text",
	)
	fs.BoolVar(
		&o.JobSummary,
		"job-summary",
		true,
		"in Actions, when the check run is refused, write the results to the job summary",
	)
	fs.BoolVar(&o.Comment, "comment", false,
		"also post a comment on the pull request (--pr), created once and updated in place by later runs")
	fs.IntVar(&o.PR, "pr", 0, "pull request `N` the --comment goes to")
	o.Baseline.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return o, err
	}
	if o.Comment != (o.PR > 0) {
		return o, usageError("--comment and --pr %d go together: give both (a positive pull request number) or neither",
			o.PR)
	}
	if o.Annotations < 1 {
		return o, usageError("--annotations %d: want a positive number", o.Annotations)
	}
	if o.SHA != "" && !isHexSHA(o.SHA) {
		return o, usageError("--sha %q: want a full commit SHA (40 or 64 lower-case hex digits)", o.SHA)
	}
	if len(pos) != 1 {
		return o, usageError("publish takes one BUNDLE directory")
	}
	o.Bundle = pos[0]
	return o, nil
}

// loadVerifiedBundle verifies dir (requiring the signature when a key is given) and reads its
// results.json. Nothing is read from a bundle that does not verify.
func loadVerifiedBundle(dir, keyFile string) (*bundle.Manifest, report.Results, error) {
	var res report.Results
	var pub ed25519.PublicKey
	if keyFile != "" {
		k, err := bundle.LoadPublicKey(keyFile)
		if err != nil {
			return nil, res, withCode(exitUsage, err)
		}
		pub = k
	}
	m, err := bundle.Verify(dir, pub, bundle.VerifyOptions{RequireSignature: pub != nil})
	if err != nil {
		return nil, res, withCode(exitFailure, fmt.Errorf("bundle %s does not verify: %w", dir, err))
	}
	if res, err = report.ReadResultsJSON(dir); err != nil {
		return nil, res, withCode(exitFailure, fmt.Errorf("bundle %s: %w", dir, err))
	}
	return m, res, nil
}

func publishPlan(inv *invocation, o publishOptions, res report.Results, digest string) (*github.Plan, error) {
	summary, err := os.ReadFile(filepath.Join(o.Bundle, report.SummaryMarkdown))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	loc, err := suiteLocator(inv, o.Suite)
	if err != nil {
		return nil, err
	}
	return github.BuildPlan(
		res,
		github.PlanInput{Target: publishTarget(inv, o), Name: o.CheckName, Summary: string(summary),
			Locator: loc, ExternalID: digest, AnnotationLimit: o.Annotations, Now: time.Now()},
	), nil
}

// suiteLocator places annotations under the suite directory DIR, which must name a place in
// the repository: relative, or absolute inside GITHUB_WORKSPACE. Nothing is read from it: the
// results record each pair's suite file, entry line and patch file.
func suiteLocator(inv *invocation, dir string) (*github.Locator, error) {
	if dir == "" {
		return nil, nil
	}
	rel := filepath.Clean(dir)
	if filepath.IsAbs(rel) {
		ws := inv.Getenv("GITHUB_WORKSPACE")
		r, err := filepath.Rel(ws, rel)
		if ws == "" || err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return nil, usageError(
				"--suite %s: an absolute suite directory must be inside GITHUB_WORKSPACE; give the path relative to the repository root",
				dir,
			)
		}
		rel = r
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, usageError("--suite %s: the suite directory must be inside the repository", dir)
	}
	return github.NewLocator(filepath.ToSlash(rel)), nil
}

func publishTarget(inv *invocation, o publishOptions) github.Target {
	repo := firstNonEmpty(o.Repository, inv.Getenv("GITHUB_REPOSITORY"))
	owner, name, _ := strings.Cut(repo, "/")
	t := github.Target{Owner: owner, Repo: name, HeadSHA: firstNonEmpty(o.SHA, inv.Getenv("GITHUB_SHA"))}
	if srv, id := inv.Getenv("GITHUB_SERVER_URL"), inv.Getenv("GITHUB_RUN_ID"); srv != "" && id != "" && repo != "" {
		t.DetailsURL = strings.TrimSuffix(srv, "/") + "/" + repo + "/actions/runs/" + id
	}
	if t.Owner == "" {
		t.Owner, t.Repo = "{owner}", "{repo}"
	}
	if t.HeadSHA == "" {
		t.HeadSHA = "{head_sha}"
	}
	return t
}

func checkTarget(t github.Target) error {
	if strings.HasPrefix(t.Owner, "{") || t.Repo == "" || strings.Contains(t.Repo, "/") {
		return usageError("publish: name the repository with --repository OWNER/NAME or $GITHUB_REPOSITORY")
	}
	if strings.HasPrefix(t.HeadSHA, "{") {
		return usageError("publish: name the commit with --sha or $GITHUB_SHA")
	}
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// dryRun prints the exact payloads on stdout (the check run's, then the comment's, whose
// create becomes an update when a comment of this check run exists) and why nothing was sent
// on stderr.
func dryRun(inv *invocation, plan *github.Plan, comment *github.CommentPlan, why string) error {
	steps := plan.Steps()
	if comment != nil {
		steps = append(steps, comment.Steps()...)
	}
	fmt.Fprintf(inv.Stderr, "tender: dry run, nothing was sent: %s\n", why)
	fmt.Fprintf(inv.Stderr, "tender: the %d request(s) below are what publishing would send\n", len(steps))
	return github.WriteSteps(inv.Stdout, steps)
}

// approve returns the token client only for a verified human approval: in Actions an approved
// review of this run for the configured environment, locally the operator typing the start of
// the bundle digest at a terminal. Every other outcome wraps github.ErrNotApproved.
func approve(
	ctx context.Context,
	inv *invocation,
	o publishOptions,
	t github.Target,
	digest string,
) (*github.Client, error) {
	if inv.Getenv("GITHUB_ACTIONS") != "true" {
		if err := approveAtTerminal(inv, t, digest); err != nil {
			return nil, err
		}
		return tokenClient(inv)
	}
	c, err := tokenClient(inv)
	if err != nil {
		return nil, err
	}
	// The approval belongs to this workflow run, which lives in GITHUB_REPOSITORY whatever
	// repository the check run goes to.
	owner, repo, _ := strings.Cut(inv.Getenv("GITHUB_REPOSITORY"), "/")
	runID, _ := strconv.ParseInt(inv.Getenv("GITHUB_RUN_ID"), 10, 64)
	attempt, _ := strconv.Atoi(inv.Getenv("GITHUB_RUN_ATTEMPT"))
	a, err := c.CheckApproval(ctx, github.RunRef{Owner: owner, Repo: repo, ID: runID, Attempt: attempt}, o.Environment)
	if err != nil && !errors.Is(err, github.ErrNotApproved) {
		err = fmt.Errorf("%w: the approval could not be checked: %v", github.ErrNotApproved, err)
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(
		inv.Stderr,
		"tender: environment %q approved this run (%s)\n",
		a.Environment,
		strings.Join(a.Reviewers, ", "),
	)
	return c, nil
}

// digestPrefixLen is how many hex digits of the bundle digest the operator types.
const digestPrefixLen = 12

func approveAtTerminal(inv *invocation, t github.Target, digest string) error {
	if !inv.TTY {
		return fmt.Errorf(
			"%w: no terminal to confirm at (outside Actions, publishing needs an interactive confirmation)",
			github.ErrNotApproved,
		)
	}
	fmt.Fprintf(
		inv.Stderr,
		"Publish this bundle to %s/%s at %s?\nBundle digest (sha256 of bundle.dsse.json): %s\nType its first %d hex digits to publish: ",
		t.Owner,
		t.Repo,
		t.HeadSHA,
		digest,
		digestPrefixLen,
	)
	line, err := bufio.NewReader(io.LimitReader(inv.Stdin, 4096)).ReadString('\n')
	if err != nil && line == "" {
		return fmt.Errorf("%w: no confirmation read: %v", github.ErrNotApproved, err)
	}
	if !strings.EqualFold(strings.TrimSpace(line), digest[:digestPrefixLen]) {
		return fmt.Errorf("%w: the digits typed do not match the bundle digest", github.ErrNotApproved)
	}
	return nil
}

// errNoToken: publishing was asked for without a token, so it stays a dry run.
var errNoToken = errors.New("no token: set GITHUB_TOKEN (in the Action, the token input)")

// tokenClient builds the token client from GITHUB_TOKEN and GITHUB_API_URL, masking the token
// in the Actions log first.
func tokenClient(inv *invocation) (*github.Client, error) {
	token := inv.Getenv("GITHUB_TOKEN")
	if token == "" {
		return nil, errNoToken
	}
	if inv.Getenv("GITHUB_ACTIONS") == "true" {
		actionsLog(inv).AddMask(token)
	}
	o := publishClientOptions
	o.APIURL, o.Token, o.Log = inv.Getenv("GITHUB_API_URL"), token, inv.Stderr
	c, err := github.NewClient(o)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	return c, nil
}

func actionsLog(inv *invocation) *githubactions.Action {
	return githubactions.New(githubactions.WithWriter(inv.Stdout), githubactions.WithGetenv(inv.Getenv))
}

func publishPlanNow(
	ctx context.Context,
	inv *invocation,
	c *github.Client,
	plan *github.Plan,
	o publishOptions,
) (*github.Outcome, error) {
	var out *github.Outcome
	var err error
	inActions := inv.Getenv("GITHUB_ACTIONS") == "true"
	if inActions {
		out, err = c.PublishWithFallback(ctx, plan, github.Fallback{Action: actionsLog(inv), JobSummary: o.JobSummary})
	} else {
		out, err = c.Publish(ctx, plan)
	}
	if err != nil && !inActions && github.Forbidden(err) {
		err = fmt.Errorf(
			"%w\n(creating a check run needs a GitHub App installation token: GITHUB_TOKEN in Actions is one; "+
				"a personal access token is refused with 403. See the README, \"Publishing from your machine\")",
			err,
		)
	}
	if err != nil {
		return out, withCode(exitFailure, fmt.Errorf("publish: %w", err))
	}
	fmt.Fprintln(inv.Stderr, "tender:", out.Note)
	return out, nil
}
