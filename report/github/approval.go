package github

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNotApproved means no verified human approval covers this publication.
var ErrNotApproved = errors.New("publishing is not approved")

// review is one entry of GET /repos/{owner}/{repo}/actions/runs/{run_id}/approvals.
type review struct {
	State        string `json:"state"`
	Comment      string `json:"comment"`
	Environments []struct {
		Name string `json:"name"`
	} `json:"environments"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
}

// Approval is a verified approval of one workflow run for one environment.
type Approval struct {
	Environment string
	Reviewers   []string
}

// RunRef names one attempt of a workflow run: GITHUB_REPOSITORY, GITHUB_RUN_ID and
// GITHUB_RUN_ATTEMPT.
type RunRef struct {
	Owner, Repo string
	ID          int64
	Attempt     int
}

// CheckApproval asks the API for the environment reviews of workflow run run and returns the
// approval for environment, or an error wrapping ErrNotApproved when there is none, when any
// review for it was rejected, or when environment is empty. go-github has no method for this
// endpoint (v93 neither), so it goes through NewRequest.
//
// The review history covers every attempt of the run and does not say which attempt a review
// was for. So on a re-run a rejection of an earlier attempt cannot be told from one of this
// attempt, and it refuses: fail closed, and start a new run instead.
func (c *Client) CheckApproval(ctx context.Context, run RunRef, environment string) (*Approval, error) {
	if environment == "" {
		return nil, fmt.Errorf("%w: no approval environment is configured", ErrNotApproved)
	}
	if run.ID <= 0 || run.Owner == "" || run.Repo == "" {
		return nil, fmt.Errorf("%w: no workflow run (GITHUB_REPOSITORY and GITHUB_RUN_ID) to look up", ErrNotApproved)
	}
	var reviews []review
	path := fmt.Sprintf("repos/%s/%s/actions/runs/%d/approvals", run.Owner, run.Repo, run.ID)
	if err := c.do(ctx, "reading the approvals of run "+fmt.Sprint(run.ID), "GET", path, nil, &reviews); err != nil {
		return nil, err
	}
	a, err := decideApproval(reviews, environment)
	if err != nil && run.Attempt > 1 {
		err = fmt.Errorf(
			"%w (this is attempt %d of run %d: the review history spans every attempt and a rejection of any of them refuses; start a new run rather than re-running a rejected one)",
			err,
			run.Attempt,
			run.ID,
		)
	}
	return a, err
}

func decideApproval(reviews []review, environment string) (*Approval, error) {
	a := &Approval{Environment: environment}
	for _, r := range reviews {
		if !r.covers(environment) {
			continue
		}
		switch r.State {
		case "approved":
			a.Reviewers = append(a.Reviewers, r.User.Login)
		default:
			return nil, fmt.Errorf("%w: %s review by %q for environment %q",
				ErrNotApproved, r.State, r.User.Login, environment)
		}
	}
	if len(a.Reviewers) == 0 {
		return nil, fmt.Errorf(
			"%w: no approved review for environment %q on this run (%d review(s) for other environments)",
			ErrNotApproved,
			environment,
			len(reviews),
		)
	}
	return a, nil
}

func (r review) covers(environment string) bool {
	for _, e := range r.Environments {
		if strings.EqualFold(e.Name, environment) {
			return true
		}
	}
	return false
}
