package github

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/github/githubtest"
)

const bundleDigest = "5d41402abc4b2a76b9719d911017c592ae0d9ae5c4a7d3ec9d8b5f1e0a1b2c3d"

func idemPlan(n int) *Plan {
	return BuildPlan(
		resultsWith(n, report.Unresolved),
		PlanInput{Target: target, ExternalID: bundleDigest, Now: testNow},
	)
}

// runSummary is what a test asserts of the model's runs: one line per run.
func runSummary(runs []githubtest.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, strings.Join([]string{r.Name, r.ExternalID[:12], r.Status, r.Conclusion,
			"annotations=" + itoa(r.Annotations)}, " "))
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCreateAnswered5xxAfterCreatingReusesTheRun(t *testing.T) {
	f := newFake(t)
	cr := f.model(2, 1, 4, 0) // look-up, create (502 after creating), look-up again, 3 batches + final
	cr.Fail("create", 1, githubtest.Fault{Status: 502, Applied: true})
	var log bytes.Buffer
	out, err := f.client(t, nil, &log).Publish(context.Background(), idemPlan(120))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"tender: demo (shard 2/3) 5d41402abc4b completed failure annotations=120"}
	if d := cmp.Diff(want, runSummary(cr.Runs())); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}
	if !out.Reused || out.CheckRunID != 1 {
		t.Errorf("outcome %+v: want run 1, found again after the 502", out)
	}
	t.Logf("runs: %v\nlog:\n%s%s", runSummary(cr.Runs()), log.String(), out.Note)
}

func TestSlowCreateTimedOutReusesTheRun(t *testing.T) {
	f := newFake(t)
	cr := f.model(2, 1, 2, 0)
	cr.Fail("create", 1, githubtest.Fault{Delay: 2 * time.Second, Applied: true}) // done, answered too late
	var log bytes.Buffer
	out, err := f.clientWith(t, ClientOptions{Timeout: 200 * time.Millisecond}, nil, &log).
		Publish(context.Background(), idemPlan(30))
	if err != nil {
		t.Fatal(err)
	}
	if runs := cr.Runs(); len(runs) != 1 || runs[0].Conclusion != "failure" || runs[0].Annotations != 30 ||
		!out.Reused {
		t.Errorf("runs %v, outcome %+v: want one completed run, reused", runSummary(runs), out)
	}
	t.Logf("runs: %v\nlog:\n%s", runSummary(cr.Runs()), log.String())
}

func TestCreateRefusedBeforeCreatingIsSentAgain(t *testing.T) {
	f := newFake(t)
	cr := f.model(2, 2, 2, 0)
	cr.Fail("create", 1, githubtest.Fault{Status: 503})
	if _, err := f.client(t, nil, nil).Publish(context.Background(), idemPlan(1)); err != nil {
		t.Fatal(err)
	}
	if runs := cr.Runs(); len(runs) != 1 || runs[0].Conclusion != "failure" {
		t.Errorf("runs %v", runSummary(runs))
	}
}

// TestPatchFailureCompletesTheRunNeutralAndARerunFinishesIt fails the second annotation batch
// with a 422: the run is completed as neutral with a note, not left in progress; publishing
// the same bundle again finds it, appends only the missing annotations and completes it.
func TestPatchFailureCompletesTheRunNeutralAndARerunFinishesIt(t *testing.T) {
	f := newFake(t)
	cr := f.model(2, 1, 3+3, 0) // first: batch 1, batch 2 (fails), neutral; rerun: batches 2, 3, final
	cr.Fail("update", 2, githubtest.Fault{Status: 422})
	c := f.client(t, nil, nil)
	out, err := c.Publish(context.Background(), idemPlan(120))
	if err == nil || !strings.Contains(err.Error(), "completed as neutral") || out.Abandoned != "neutral" {
		t.Fatalf("error %v, outcome %+v: want the failure, and the run completed as neutral", err, out)
	}
	run := cr.Runs()[0]
	if run.Status != "completed" || run.Conclusion != "neutral" || run.Annotations != 50 ||
		!strings.Contains(run.Summary, "again for the same bundle") {
		t.Errorf("after the failure: %v, summary %.120q", runSummary(cr.Runs()), run.Summary)
	}
	t.Logf("after the failure: %v\nerror: %v", runSummary(cr.Runs()), err)
	out, err = c.Publish(context.Background(), idemPlan(120))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"tender: demo (shard 2/3) 5d41402abc4b completed failure annotations=120"}
	if d := cmp.Diff(want, runSummary(cr.Runs())); d != "" || !out.Reused {
		t.Errorf("after the rerun (-want +got):\n%s\noutcome %+v", d, out)
	}
	t.Logf("after the rerun: %v; %s", runSummary(cr.Runs()), out.Note)
}

// TestBatchAppliedButAnswerLostIsNotSentTwice: annotations append, so a batch GitHub took but
// answered 502 must not be sent again.
func TestBatchAppliedButAnswerLostIsNotSentTwice(t *testing.T) {
	f := newFake(t)
	cr := f.model(1, 1, 3, 1) // batch 1 (applied, 502), batch 2, final; one read before the retry
	cr.Fail("update", 1, githubtest.Fault{Status: 502, Applied: true})
	if _, err := f.client(t, nil, nil).Publish(context.Background(), idemPlan(60)); err != nil {
		t.Fatal(err)
	}
	if runs := cr.Runs(); len(runs) != 1 || runs[0].Annotations != 60 || runs[0].Conclusion != "failure" {
		t.Errorf("runs %v: want 60 annotations, none twice", runSummary(runs))
	}
}

func TestCancelledPublishCompletesTheRunCancelled(t *testing.T) {
	f := newFake(t)
	cr := f.model(1, 1, 2, 0) // batch 1 hangs until cancelled; then the completion as cancelled
	cr.Fail("update", 1, githubtest.Fault{Delay: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	out, err := f.client(t, nil, nil).Publish(ctx, idemPlan(10))
	if err == nil || out == nil || out.Abandoned != "cancelled" {
		t.Fatalf("error %v, outcome %+v: want the run completed as cancelled", err, out)
	}
	if runs := cr.Runs(); runs[0].Conclusion != "cancelled" || runs[0].Status != "completed" {
		t.Errorf("runs %v", runSummary(runs))
	}
}

func TestRerunOfAFinishedPublicationUpdatesTheSameRun(t *testing.T) {
	f := newFake(t)
	cr := f.model(1, 0, 0, 0)
	plan := idemPlan(20)
	cr.Add(
		githubtest.Run{
			Name:       plan.Name,
			HeadSHA:    target.HeadSHA,
			ExternalID: "another bundle",
			Status:     "completed",
			Conclusion: "success",
		},
	)
	f.on("PATCH", cr.UpdatePath(2), 1, cr.Update)
	cr.Add(
		githubtest.Run{
			Name:        plan.Name,
			HeadSHA:     target.HeadSHA,
			ExternalID:  bundleDigest,
			Status:      "completed",
			Conclusion:  "failure",
			Annotations: 20,
		},
	)
	out, err := f.client(t, nil, nil).Publish(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if runs := cr.Runs(); len(runs) != 2 || runs[1].Annotations != 20 || out.CheckRunID != 2 || !out.Reused {
		t.Errorf("runs %v, outcome %+v: want run 2 completed again with its 20 annotations", runSummary(runs), out)
	}
}

func TestAnotherBundleGetsItsOwnRun(t *testing.T) {
	f := newFake(t)
	cr := githubtest.NewCheckRuns("octo", "grader")
	plan := idemPlan(1)
	cr.Add(
		githubtest.Run{
			Name:       plan.Name,
			HeadSHA:    target.HeadSHA,
			ExternalID: "an older bundle",
			Status:     "completed",
			Conclusion: "success",
		},
	)
	f.on("GET", cr.ListPath(target.HeadSHA), 1, cr.List)
	f.on("POST", cr.CreatePath(), 1, cr.Create)
	f.on("PATCH", cr.UpdatePath(2), 2, cr.Update)
	out, err := f.client(t, nil, nil).Publish(context.Background(), plan)
	if err != nil || out.Reused || out.CheckRunID != 2 {
		t.Fatalf("outcome %+v, %v: want a new run 2", out, err)
	}
}
