package github

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckApproval(t *testing.T) {
	cases := []struct {
		name    string
		reviews []any
		env     string
		want    []string // reviewers; nil means not approved
	}{
		{"missing", []any{}, "publish", nil},
		{"rejected", []any{reviewJSON("rejected", "mallory", "publish")}, "publish", nil},
		{
			"rejected beside an approval",
			[]any{reviewJSON("approved", "alice", "publish"), reviewJSON("rejected", "bob", "publish")},
			"publish",
			nil,
		},
		{"another environment", []any{reviewJSON("approved", "alice", "staging")}, "publish", nil},
		{"no environment configured", []any{reviewJSON("approved", "alice", "publish")}, "", nil},
		{"approved", []any{reviewJSON("approved", "alice", "staging", "publish")}, "publish", []string{"alice"}},
		{"approved, case of the name", []any{reviewJSON("approved", "alice", "Publish")}, "publish", []string{"alice"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			if tc.env != "" {
				f.on("GET", "/repos/octo/grader/actions/runs/42/approvals", 1, jsonReply(200, tc.reviews))
			}
			a, err := f.client(t, nil, nil).
				CheckApproval(context.Background(), RunRef{Owner: "octo", Repo: "grader", ID: 42}, tc.env)
			if tc.want == nil {
				if !errors.Is(err, ErrNotApproved) || a != nil {
					t.Errorf("got %+v, %v; want ErrNotApproved", a, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, a.Reviewers); d != "" {
				t.Errorf("reviewers (-want +got):\n%s", d)
			}
		})
	}
}

func TestCheckApprovalAPIFailureIsNotApproval(t *testing.T) {
	f := newFake(t)
	f.on(
		"GET",
		"/repos/octo/grader/actions/runs/42/approvals",
		1,
		jsonReply(404, map[string]any{"message": "Not Found"}),
	)
	a, err := f.client(t, nil, nil).
		CheckApproval(context.Background(), RunRef{Owner: "octo", Repo: "grader", ID: 42}, "publish")
	if err == nil || a != nil {
		t.Fatalf("got %+v, %v; want an error", a, err)
	}
}

// TestCheckApprovalOnARerun: the review history of a re-run holds the reviews of every
// attempt, without saying which. Approvals of two attempts approve; a rejection of an earlier
// attempt still refuses, and the error says why and what to do.
func TestCheckApprovalOnARerun(t *testing.T) {
	cases := []struct {
		name    string
		attempt int
		reviews []any
		want    []string
		says    string
	}{
		{"first attempt approved", 1, []any{reviewJSON("approved", "alice", "publish")}, []string{"alice"}, ""},
		{
			"approved on both attempts",
			2,
			[]any{reviewJSON("approved", "alice", "publish"), reviewJSON("approved", "bob", "publish")},
			[]string{"alice", "bob"},
			"",
		},
		{
			"rejected on attempt 1, approved on attempt 2",
			2,
			[]any{reviewJSON("rejected", "bob", "publish"), reviewJSON("approved", "alice", "publish")},
			nil,
			"attempt 2 of run 42",
		},
		{
			"approved on attempt 1, nothing on attempt 3",
			3,
			[]any{reviewJSON("approved", "alice", "publish")},
			[]string{"alice"},
			"",
		},
		{
			"another environment approved on the re-run",
			2,
			[]any{reviewJSON("approved", "alice", "staging")},
			nil,
			"start a new run",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.on("GET", "/repos/octo/grader/actions/runs/42/approvals", 1, jsonReply(200, tc.reviews))
			a, err := f.client(t, nil, nil).
				CheckApproval(context.Background(), RunRef{Owner: "octo", Repo: "grader", ID: 42, Attempt: tc.attempt}, "publish")
			if tc.want == nil {
				if !errors.Is(err, ErrNotApproved) || !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("got %+v, %v; want ErrNotApproved saying %q", a, err, tc.says)
				}
				t.Logf("refused: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, a.Reviewers); d != "" {
				t.Errorf("reviewers (-want +got):\n%s", d)
			}
		})
	}
}
