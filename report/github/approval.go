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

// CheckApproval asks the API for the environment reviews of workflow run runID and returns
// the approval for environment, or an error wrapping ErrNotApproved when there is none, when
// any review for it was rejected, or when environment is empty. go-github v62 has no method
// for this endpoint, so it goes through NewRequest.
func (c *Client) CheckApproval(ctx context.Context, owner, repo string, runID int64, environment string) (*Approval, error) {
	if environment == "" {
		return nil, fmt.Errorf("%w: no approval environment is configured", ErrNotApproved)
	}
	if runID <= 0 {
		return nil, fmt.Errorf("%w: no workflow run id (GITHUB_RUN_ID) to look up", ErrNotApproved)
	}
	var reviews []review
	path := fmt.Sprintf("repos/%s/%s/actions/runs/%d/approvals", owner, repo, runID)
	if err := c.do(ctx, "reading the approvals of run "+fmt.Sprint(runID), "GET", path, nil, &reviews); err != nil {
		return nil, err
	}
	return decideApproval(reviews, environment)
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
		return nil, fmt.Errorf("%w: no approved review for environment %q on this run (%d review(s) for other environments)",
			ErrNotApproved, environment, len(reviews))
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
