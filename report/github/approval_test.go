package github

import (
	"context"
	"errors"
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
		{"rejected beside an approval", []any{reviewJSON("approved", "alice", "publish"), reviewJSON("rejected", "bob", "publish")}, "publish", nil},
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
			a, err := f.client(t, nil, nil).CheckApproval(context.Background(), "octo", "grader", 42, tc.env)
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
	f.on("GET", "/repos/octo/grader/actions/runs/42/approvals", 1, jsonReply(404, map[string]any{"message": "Not Found"}))
	a, err := f.client(t, nil, nil).CheckApproval(context.Background(), "octo", "grader", 42, "publish")
	if err == nil || a != nil {
		t.Fatalf("got %+v, %v; want an error", a, err)
	}
}
