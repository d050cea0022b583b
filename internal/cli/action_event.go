package cli

import (
	"fmt"
	"strings"
)

// eventTarget is the commit an event points the check run at, and the pull request when the
// event names one.
type eventTarget struct {
	SHA  string
	PR   int
	From string // where SHA came from, for the log
}

// targetFromEvent reads the event payload. On pull_request and pull_request_target the check
// belongs on the pull request's head, not the merge commit GITHUB_SHA names. Under
// workflow_run, GITHUB_SHA is the default branch's head: the commit is the head of the run
// that triggered it (for a pull request from a fork, pull_requests is empty, and that head is
// the fork's commit). A workflow_run triggered by pull_request_target has the base branch as
// its head, so it names no commit unless pull_requests does: the sha input must.
func targetFromEvent(name string, event map[string]any) (eventTarget, error) {
	if pr, ok := event["pull_request"].(map[string]any); ok {
		return eventTarget{
			SHA:  hexAt(pr, "head", "sha"),
			PR:   intAt(pr, "number"),
			From: name + ": the pull request's head",
		}, nil
	}
	wr, ok := event["workflow_run"].(map[string]any)
	if name != "workflow_run" || !ok {
		return eventTarget{}, nil
	}
	trigger, _ := wr["event"].(string)
	t := eventTarget{
		SHA:  hexAt(wr, "head_sha"),
		From: fmt.Sprintf("workflow_run: the head of run %d (%s)", intAt(wr, "id"), trigger),
	}
	if prs, _ := wr["pull_requests"].([]any); len(prs) > 0 {
		pr, _ := prs[0].(map[string]any)
		t.PR = intAt(pr, "number")
		if sha := hexAt(pr, "head", "sha"); sha != "" {
			t.SHA, t.From = sha, fmt.Sprintf("workflow_run: the head of pull request #%d", t.PR)
		}
		return t, nil
	}
	if trigger == "pull_request_target" {
		return eventTarget{}, fmt.Errorf(
			"the workflow_run was triggered by pull_request_target, whose head_sha is the base branch, and names no pull request: pass the pull request's head commit in the sha input",
		)
	}
	if fork := strAt(wr, "head_repository", "full_name"); strings.HasPrefix(trigger, "pull_request") && fork != "" {
		t.From += ", a pull request from " + fork
	}
	return t, nil
}

func at(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func strAt(m map[string]any, keys ...string) string {
	s, _ := at(m, keys...).(string)
	return s
}

func hexAt(m map[string]any, keys ...string) string {
	if s := strAt(m, keys...); isHexSHA(s) {
		return s
	}
	return ""
}

func intAt(m map[string]any, keys ...string) int {
	f, _ := at(m, keys...).(float64)
	return int(f)
}
