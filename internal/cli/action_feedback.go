package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/sethvargo/go-githubactions"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/github"
)

// feedbackInputs are the Action's inputs for pull-request feedback: a baseline bundle to
// compare with, a comment on the pull request, and failing when nothing was graded.
type feedbackInputs struct {
	Baseline    string // a bundle directory (grade, merge, publish)
	Comment     bool   // publish: comment on the pull request too
	PR          string // publish: the pull request the comment goes to; empty: the event's
	FailOnEmpty bool   // fail when the bundle holds no pair
	EventPR     int    // the pull request the event names; 0 when none
}

func readFeedbackInputs(a *githubactions.Action) (feedbackInputs, error) {
	f := feedbackInputs{Baseline: a.GetInput("baseline"), PR: a.GetInput("pr")}
	var err error
	if f.Comment, err = parseBoolInput("comment", a.GetInput("comment"), false); err != nil {
		return f, err
	}
	if f.FailOnEmpty, err = parseBoolInput("fail-on-empty", a.GetInput("fail-on-empty"), false); err != nil {
		return f, err
	}
	if f.PR != "" {
		if n, err := strconv.Atoi(f.PR); err != nil || n < 1 {
			return f, usageError("input pr: %q is not a pull request number", f.PR)
		}
	}
	return f, nil
}

// warn says in the log what of the feedback inputs cannot be done.
func (f feedbackInputs) warn(a *githubactions.Action, command string) {
	if f.Comment && command == "publish" && f.pr() == 0 {
		a.Warningf("comment: the event names no pull request and the pr input is empty, so no comment is posted " +
			"(under workflow_run from a fork GitHub lists no pull request: pass pr)")
	}
	if f.Comment && command != "publish" {
		a.Warningf("comment: only command publish comments (behind the approval); %s posts nothing", command)
	}
}

// baselineArgs passes the baseline on, checked with the public key when there is one.
func (f feedbackInputs) baselineArgs(publicKey string) []string {
	if f.Baseline == "" {
		return nil
	}
	args := []string{"--baseline", f.Baseline}
	if publicKey != "" {
		args = append(args, "--baseline-key", publicKey)
	}
	return args
}

// publishArgs adds the baseline and the comment to publish's arguments. The comment goes to
// the pr input, else the event's pull request; with neither it is left out (the step's log
// says so).
func (f feedbackInputs) publishArgs(publicKey string) []string {
	args := f.baselineArgs(publicKey)
	if pr := f.pr(); f.Comment && pr > 0 {
		args = append(args, "--comment", "--pr", strconv.Itoa(pr))
	}
	return args
}

func (f feedbackInputs) pr() int {
	if n, err := strconv.Atoi(f.PR); err == nil && n > 0 {
		return n
	}
	return f.EventPR
}

// compare sets res's comparison from the baseline input, as publish computed it (a bundle
// graded without --baseline holds none); without the input, what the bundle holds stays.
func (f feedbackInputs) compare(res *report.Results, publicKey string) error {
	if f.Baseline == "" {
		return nil
	}
	base, err := baselineFlags{dir: f.Baseline, key: publicKey}.load()
	if err != nil {
		return err
	}
	res.Comparison = base.compare(*res)
	return nil
}

// failOn is fail-on-empty and fail-on: regression. A regression needs a baseline: without
// one nothing can regress, and the step says so and passes.
func (f feedbackInputs) failOn(a *githubactions.Action, mode string, res report.Results) error {
	if f.FailOnEmpty && len(res.Pairs) == 0 {
		err := withCode(exitFailure, fmt.Errorf("fail-on-empty: the bundle holds no pair, so nothing was graded"))
		a.Errorf("%v", err)
		return err
	}
	if mode != "regression" {
		return nil
	}
	if res.Comparison == nil {
		a.Warningf("fail-on regression: there is no baseline to compare with (the baseline input), so nothing " +
			"can have regressed; the step passes")
		return nil
	}
	if r := res.Comparison.Of(report.Regressed); len(r) > 0 {
		err := withCode(exitFailure, fmt.Errorf("fail-on regression: %d pair(s) regressed since the baseline, "+
			"first %s (%s, now %s)", len(r), r[0].ID, r[0].Before, r[0].After))
		a.Errorf("%v", err)
		return err
	}
	return nil
}

// maxJSONOutput caps the json output; past it the id lists are left out (results-file has all).
const maxJSONOutput = 64 << 10

// feedbackOutputs adds results-file, json, regressed, improved and, for publish, comment-url.
// Every value is one line: go-githubactions writes outputs with a fixed heredoc delimiter.
func feedbackOutputs(outputs map[string]string, in actionInputs, dir string, res report.Results,
	published *github.Outcome) {
	outputs["results-file"] = singleLine(filepath.Join(dir, report.ResultsJSON))
	outputs["regressed"], outputs["improved"] = "", ""
	if c := res.Comparison; c != nil {
		outputs["regressed"] = strconv.Itoa(c.Counts[report.Regressed])
		outputs["improved"] = strconv.Itoa(c.Counts[report.Improved])
	}
	if in.Command == "publish" {
		outputs["comment-url"] = ""
		if published != nil && published.Comment != nil {
			outputs["comment-url"] = singleLine(published.Comment.HTMLURL)
		}
	}
	outputs["json"] = jsonOutput(outputs, res)
}

// jsonSummary is the json output: the counts, the conclusion, the files, and what changed
// since the baseline (null without one).
type jsonSummary struct {
	Bundle      string                 `json:"bundle"`
	ResultsFile string                 `json:"results_file"`
	Total       int                    `json:"total"`
	Counts      map[report.Verdict]int `json:"counts"`
	Conclusion  string                 `json:"conclusion"`
	Comparison  *jsonComparison        `json:"comparison"`
	Truncated   bool                   `json:"truncated"` // the id lists were left out to fit
}

type jsonComparison struct {
	Counts    map[report.Change]int      `json:"counts"`
	Unchanged int                        `json:"unchanged"`
	Pairs     map[report.Change][]string `json:"pairs,omitempty"` // ids by change
}

func jsonOutput(outputs map[string]string, res report.Results) string {
	s := jsonSummary{Bundle: outputs["bundle"], ResultsFile: outputs["results-file"], Total: len(res.Pairs),
		Counts: report.Count(res.Pairs).Verdicts, Conclusion: outputs["conclusion"]}
	if c := res.Comparison; c != nil {
		s.Comparison = &jsonComparison{Counts: c.Counts, Unchanged: c.Unchanged, Pairs: map[report.Change][]string{}}
		for _, p := range c.Pairs {
			s.Comparison.Pairs[p.Change] = append(s.Comparison.Pairs[p.Change], p.ID)
		}
	}
	b, _ := json.Marshal(s) // compact: one line
	if len(b) > maxJSONOutput && s.Comparison != nil {
		s.Comparison.Pairs, s.Truncated = nil, true
		b, _ = json.Marshal(s)
	}
	return string(b)
}
