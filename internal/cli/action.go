package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/github"
)

// actionInputs are the inputs of action.yml, read from INPUT_* by go-githubactions.
type actionInputs struct {
	Command, Suite, Concurrency, Shard, Token, Environment, SigningKey, FailOn string
	PublicKey, Out, SHA, CheckName, Annotations, Reruns                        string
	Repos, Bundles                                                             []string
	Publish, JobSummary                                                        bool
	HeadSHA                                                                    string // sha, else from the event

	Durations string // a bundle whose durations balance the shards

	Feedback feedbackInputs // baseline, comment, pr, fail-on-empty (action_feedback.go)

	Mirror, Keyring, ImageCache string // how missing verifier images are made (action_image.go)
}

// secretNames are variables a grade never sees: the verifier's environment is an allowlist
// already, and this keeps a suite's pass_env from naming them too.
var secretNames = map[string]bool{
	"GITHUB_TOKEN": true, "INPUT_TOKEN": true, "INPUT_SIGNING-KEY": true, "INPUT_SIGNING_KEY": true,
	"ACTIONS_RUNTIME_TOKEN": true, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": true, "ACTIONS_ID_TOKEN_REQUEST_URL": true,
}

// runAction is the GitHub Action entry: inputs to a command, then outputs, the job summary
// and the exit fail-on asks for.
func runAction(ctx context.Context, inv *invocation) error {
	a := githubactions.New(githubactions.WithWriter(inv.Stdout), githubactions.WithGetenv(inv.Getenv))
	if err := checkInputLines(inv.Environ); err != nil {
		a.Errorf("%v", err)
		return err
	}
	in, err := readActionInputs(a)
	if err != nil {
		a.Errorf("%v", err)
		return err
	}
	maskSecrets(a, in)
	if err := in.fromEvent(a); err != nil {
		a.Errorf("%v", err)
		return err
	}
	in.Feedback.warn(a, in.Command)
	args, bundleDir := in.args()
	// grade writes a log group per pair itself; groups do not nest.
	if in.Command != "grade" {
		a.Group("tender " + strings.Join(args, " "))
	}
	published, cmdErr := dispatchAction(ctx, in.subInvocation(inv), in.Command, args)
	if in.Command != "grade" {
		a.EndGroup()
	}
	if err := setImageKey(a, inv, in); err != nil {
		return err
	}
	if code := exitCode(ctx, cmdErr); cmdErr != nil && code != exitMismatch {
		a.Errorf("tender %s failed: %v", in.Command, cmdErr)
		return cmdErr
	}
	if in.Command == "image" {
		return nil // no bundle: image-key is its output
	}
	res, err := actionResults(bundleDir)
	if err != nil {
		a.Errorf("%v", err)
		return withCode(exitFailure, err)
	}
	if err := in.Feedback.compare(&res, in.PublicKey); err != nil {
		a.Errorf("%v", err)
		return err
	}
	if err := actionReport(a, inv, in, bundleDir, res, published); err != nil {
		return err
	}
	if err := in.Feedback.failOn(a, in.FailOn, res); err != nil {
		return err
	}
	return failOn(in.FailOn, res, cmdErr)
}

func readActionInputs(a *githubactions.Action) (actionInputs, error) {
	in := actionInputs{
		Command: orDefault(a.GetInput("command"), "grade"), Suite: a.GetInput("suite"),
		Concurrency: a.GetInput("concurrency"), Shard: a.GetInput("shard"), Token: a.GetInput("token"),
		Environment: a.GetInput("approval-environment"), SigningKey: a.GetInput("signing-key"),
		FailOn: orDefault(a.GetInput("fail-on"), "error"), PublicKey: a.GetInput("public-key"),
		Out: orDefault(a.GetInput("out"), "tender-out"), Repos: lines(a.GetInput("repos")),
		Bundles: lines(a.GetInput("bundle")), SHA: a.GetInput("sha"), CheckName: a.GetInput("check-name"),
		Annotations: a.GetInput("annotations"), Reruns: a.GetInput("reruns"), Durations: a.GetInput("durations"),
		Mirror: a.GetInput("mirror"), Keyring: a.GetInput("keyring"), ImageCache: a.GetInput("image-cache"),
	}
	var err error
	if in.Publish, err = parseBoolInput("publish", a.GetInput("publish"), false); err != nil {
		return in, err
	}
	if in.JobSummary, err = parseBoolInput("job-summary", a.GetInput("job-summary"), true); err != nil {
		return in, err
	}
	if in.Feedback, err = readFeedbackInputs(a); err != nil {
		return in, err
	}
	return in, in.validate()
}

func (in actionInputs) validate() error {
	switch in.Command {
	case "grade", "publish", "verify", "merge", "image":
	default:
		return usageError("input command: %q is not grade, publish, verify, merge or image", in.Command)
	}
	switch in.FailOn {
	case "never", "unresolved", "error", "regression":
	default:
		return usageError("input fail-on: %q is not never, unresolved, error or regression", in.FailOn)
	}
	if in.Command == "grade" && in.Suite == "" {
		return usageError("input suite: the suite directory is required for command grade")
	}
	if in.Concurrency != "" {
		if n, err := strconv.Atoi(in.Concurrency); err != nil || n < 1 {
			return usageError("input concurrency: %q is not a positive integer", in.Concurrency)
		}
	}
	if in.Reruns != "" {
		if n, err := strconv.Atoi(in.Reruns); err != nil || n < 0 || n > grader.MaxReruns {
			return usageError("input reruns: %q is not a whole number from 0 to %d", in.Reruns, grader.MaxReruns)
		}
	}
	if in.Command == "merge" && len(in.Bundles) < 2 {
		return usageError("input bundle: merge needs two or more bundle directories, one per line")
	}
	if in.SHA != "" && !isHexSHA(in.SHA) {
		return usageError("input sha: %q is not a full commit SHA (40 lower-case hex digits)", in.SHA)
	}
	if in.Annotations != "" {
		if n, err := strconv.Atoi(in.Annotations); err != nil || n < 1 {
			return usageError("input annotations: %q is not a positive integer", in.Annotations)
		}
	}
	return nil
}

func parseBoolInput(name, v string, def bool) (bool, error) {
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, usageError("input %s: %q is not true or false", name, v)
	}
	return b, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func lines(v string) []string {
	var out []string
	for _, l := range strings.Split(v, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// maskSecrets registers the token and every line of the signing key with ::add-mask:: before
// anything else is logged.
func maskSecrets(a *githubactions.Action, in actionInputs) {
	if in.Token != "" {
		a.AddMask(in.Token)
	}
	for _, l := range lines(in.SigningKey) {
		if !strings.HasPrefix(l, "-----") {
			a.AddMask(l)
		}
	}
}

// args maps the inputs to the command's arguments and names the bundle the outputs come from.
func (in actionInputs) args() ([]string, string) {
	bundleDir := in.Out
	if len(in.Bundles) > 0 && in.Command != "merge" {
		bundleDir = in.Bundles[0]
	}
	switch in.Command {
	case "grade":
		return in.gradeArgs(), bundleDir
	case "publish":
		return in.publishArgs(bundleDir), bundleDir
	case "verify":
		return withKey([]string{"verify", bundleDir}, in.PublicKey), bundleDir
	case "image":
		return in.imageArgs(), bundleDir
	}
	args := withKey([]string{"merge", "--out", in.Out}, in.PublicKey)
	args = append(args, in.Feedback.baselineArgs(in.PublicKey)...)
	return append(args, in.Bundles...), bundleDir
}

func (in actionInputs) gradeArgs() []string {
	args := []string{"grade", in.Suite, "--out", in.Out}
	if in.Concurrency != "" {
		args = append(args, "--concurrency", in.Concurrency)
	}
	if in.Shard != "" {
		args = append(args, "--shard", in.Shard)
	}
	if in.Durations != "" {
		args = append(args, "--durations", in.Durations)
	}
	if in.Reruns != "" {
		args = append(args, "--reruns", in.Reruns)
	}
	for _, r := range in.Repos {
		args = append(args, "--repo", r)
	}
	args = append(args, in.Feedback.baselineArgs(in.PublicKey)...)
	return append(args, in.imageFlagArgs()...)
}

func (in actionInputs) publishArgs(bundleDir string) []string {
	args := withKey([]string{"publish", bundleDir}, in.PublicKey)
	if in.Publish {
		args = append(args, "--publish")
	}
	if in.Environment != "" {
		args = append(args, "--approval-environment", in.Environment)
	}
	if in.Suite != "" {
		args = append(args, "--suite", in.Suite)
	}
	if in.HeadSHA != "" {
		args = append(args, "--sha", in.HeadSHA)
	}
	if in.CheckName != "" {
		args = append(args, "--check-name", in.CheckName)
	}
	if in.Annotations != "" {
		args = append(args, "--annotations", in.Annotations)
	}
	if !in.JobSummary {
		args = append(args, "--job-summary=false")
	}
	return append(args, in.Feedback.publishArgs(in.PublicKey)...)
}

func withKey(args []string, key string) []string {
	if key != "" {
		args = append(args, "--key", key)
	}
	return args
}

// subInvocation gives the command the environment it may see: the token as GITHUB_TOKEN for
// publish only, the signing key as TENDER_SIGNING_KEY for grade and merge only.
func (in actionInputs) subInvocation(inv *invocation) *invocation {
	sub := *inv
	sub.TTY = false
	sub.Getenv = func(k string) string {
		switch {
		case k == "GITHUB_TOKEN" && in.Command == "publish":
			return in.Token
		case k == "TENDER_SIGNING_KEY" && (in.Command == "grade" || in.Command == "merge"):
			return orDefault(in.SigningKey, inv.Getenv(k))
		case secretNames[k], k == "TENDER_SIGNING_KEY":
			return ""
		}
		return inv.Getenv(k)
	}
	return &sub
}

// fromEvent sets the commit a publication attaches to: the sha input, else the one the event
// names (see targetFromEvent), else GITHUB_SHA (left to publish). Only publish needs one, so
// an event that names none fails only publish.
func (in *actionInputs) fromEvent(a *githubactions.Action) error {
	if p := a.Getenv("GITHUB_EVENT_PATH"); p != "" {
		if err := checkInput("GITHUB_EVENT_PATH", p); err != nil {
			return err // a FIFO there would be read forever
		}
	}
	c, err := a.Context()
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("reading the GitHub context and event file: %w", err))
	}
	t, err := targetFromEvent(c.EventName, c.Event)
	in.Feedback.EventPR = t.PR
	if in.SHA != "" {
		in.HeadSHA = in.SHA
		if in.Command == "publish" {
			a.Infof("tender: the check run attaches to %s (the sha input)\n", in.SHA)
		}
		return nil
	}
	if err != nil && in.Command == "publish" {
		return usageError("%v", err)
	}
	in.HeadSHA = t.SHA
	if t.SHA != "" && in.Command == "publish" {
		pr := ""
		if t.PR > 0 && !strings.Contains(t.From, "#") {
			pr = fmt.Sprintf(", pull request #%d", t.PR)
		}
		a.Infof("tender: the check run attaches to %s (%s%s)\n", t.SHA, t.From, pr)
	}
	return nil
}

func isHexSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// dispatchAction runs the command; for publish it also returns what was posted, if anything.
func dispatchAction(ctx context.Context, inv *invocation, command string, args []string) (*github.Outcome, error) {
	switch command {
	case "grade":
		return nil, cmdGrade(ctx, inv, args[1:])
	case "publish":
		return runPublish(ctx, inv, args[1:])
	case "verify":
		return nil, cmdVerify(ctx, inv, args[1:])
	case "image":
		return nil, cmdImage(ctx, inv, args[1:])
	}
	return nil, cmdMerge(ctx, inv, args[1:])
}

func actionResults(dir string) (report.Results, error) {
	res, err := report.ReadResultsJSON(dir)
	if err != nil {
		return res, fmt.Errorf("reading the results of bundle %s: %w", dir, err)
	}
	return res, nil
}

// actionReport sets the outputs (all single-line: SetOutput uses a fixed heredoc delimiter)
// and appends summary.md to the job summary unless the job-summary input is false.
func actionReport(
	a *githubactions.Action,
	inv *invocation,
	in actionInputs,
	dir string,
	res report.Results,
	published *github.Outcome,
) error {
	counts := report.Count(res.Pairs).Verdicts
	outputs := map[string]string{
		"resolved": strconv.Itoa(counts[report.Resolved]), "total": strconv.Itoa(len(res.Pairs)),
		"unresolved": strconv.Itoa(counts[report.Unresolved]), "error": strconv.Itoa(counts[report.Error]),
		"integrity-violation": strconv.Itoa(counts[report.IntegrityViolation]),
		"bundle":              singleLine(dir), "conclusion": github.Conclusion(res),
	}
	if in.Command == "publish" {
		outputs["check-run-url"] = ""
		if published != nil {
			outputs["check-run-url"] = singleLine(published.HTMLURL)
		}
	}
	feedbackOutputs(outputs, in, dir, res, published)
	if err := setOutputs(a, inv, outputs); err != nil {
		return err
	}
	if in.Command == "publish" || !in.JobSummary {
		return nil // publish writes its own job summary, and only when it falls back
	}
	return addJobSummary(a, dir)
}

func singleLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

func setOutputs(a *githubactions.Action, inv *invocation, outputs map[string]string) (err error) {
	if inv.Getenv("GITHUB_OUTPUT") == "" {
		fmt.Fprintln(inv.Stderr, "tender: GITHUB_OUTPUT is not set; outputs not written")
		return nil
	}
	defer func() { // go-githubactions panics when it cannot write the file
		if r := recover(); r != nil {
			err = withCode(exitFailure, fmt.Errorf("writing the step outputs: %v", r))
		}
	}()
	for _, k := range slices.Sorted(maps.Keys(outputs)) {
		a.SetOutput(k, outputs[k])
	}
	return nil
}

// addJobSummary appends the bundle's summary.md (capped at GitHub's 1 MiB) to the job summary
// with go-githubactions.
func addJobSummary(a *githubactions.Action, dir string) (err error) {
	if a.Getenv("GITHUB_STEP_SUMMARY") == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, report.SummaryMarkdown))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { // go-githubactions panics when it cannot write the file
		if r := recover(); r != nil {
			err = withCode(exitFailure, fmt.Errorf("writing the job summary: %v", r))
		}
	}()
	a.AddStepSummary(github.Cap(string(b), github.MaxJobSummaryBytes-1, github.TruncationNote))
	return nil
}

// failOn decides the exit: never fails on no verdict; error fails on an error verdict or an
// expectation not met; unresolved fails unless every pair was resolved; regression is decided
// by feedbackInputs.failOn alone.
func failOn(mode string, res report.Results, cmdErr error) error {
	if mode == "never" || mode == "regression" {
		return nil
	}
	for _, p := range res.Pairs {
		if p.Verdict == report.Error || (mode == "unresolved" && p.Verdict != report.Resolved) {
			return withCode(exitFailure, fmt.Errorf("fail-on %s: pair %s is %s", mode, p.ID, p.Verdict))
		}
	}
	return cmdErr
}
