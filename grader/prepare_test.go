package grader

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/junit"
	"github.com/tender-grader/tender/sandbox"
)

// preparing is the fake backend with Prepare (sandbox.Preparer). It logs each check's
// prepare, run and release; the Run of a pair's target check waits until the pair's
// regression check has been prepared, so a pipeline that does not prepare ahead fails.
type preparing struct {
	*fakeBackend
	mu     sync.Mutex
	events []string
	ahead  map[string]chan struct{} // "pair/regression" -> closed once it is prepared
	panics string                   // the check whose Prepare panics
}

var _ sandbox.Preparer = (*preparing)(nil)

func (p *preparing) log(ev string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, ev)
}

func (p *preparing) Prepare(_ context.Context, spec sandbox.Spec) (sandbox.Prepared, error) {
	p.log("prepare " + spec.Name)
	if ch, ok := p.ahead[spec.Name]; ok {
		close(ch)
	}
	if spec.Name == p.panics {
		panic("preparing " + spec.Name)
	}
	return &fakePrepared{p: p, spec: spec}, nil
}

type fakePrepared struct {
	p    *preparing
	spec sandbox.Spec
}

func (c *fakePrepared) Run(ctx context.Context) (*sandbox.Result, error) {
	name := c.spec.Name
	c.p.log("run " + name)
	if ch, ok := c.p.ahead[strings.TrimSuffix(name, "/target")+"/regression"]; ok && strings.HasSuffix(name, "/target") {
		select {
		case <-ch:
		case <-time.After(time.Minute): // a failure only: a pipeline that prepares ahead never waits here
			c.p.t.Errorf("%s ran, and its regression check was not prepared within a minute", name)
		}
	}
	defer c.p.log("ran " + name)
	return c.p.fakeBackend.Run(ctx, c.spec)
}

func (c *fakePrepared) Release() { c.p.log("release " + c.spec.Name) }

// TestNextCheckIsPreparedDuringTheCurrent: the regression check's verifier is prepared while
// the target check runs, runs only after it, and is released once, run or not. When the
// target check ends the pair (a forged report), the prepared regression check never runs.
func TestNextCheckIsPreparedDuringTheCurrent(t *testing.T) {
	t.Parallel()
	rows := []struct {
		id         string
		target     verifier
		regression verifier
		verdict    report.Verdict
	}{
		{"gold", reply(), reply(), report.Resolved},
		{"target-fails", reply(failing()), reply(), report.Unresolved},
		{"forged", reply(sentinelsReported(true, junit.Failed)), nil, report.IntegrityViolation},
	}
	var pairs []testPair
	verifiers := map[string]verifier{}
	ahead := map[string]chan struct{}{}
	for _, r := range rows {
		pairs = append(pairs, demoTestPair(t, r.id))
		verifiers[r.id+"/target"] = r.target
		if r.regression != nil {
			verifiers[r.id+"/regression"] = r.regression
		}
		ahead[r.id+"/regression"] = make(chan struct{})
	}
	s := writeTestSuite(t, pairs...)
	be := &preparing{fakeBackend: newFakeBackend(t, verifiers), ahead: ahead}
	results, err := Grade(context.Background(), s, testOptions(t, be))
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	for i, r := range rows {
		if results[i].Verdict != r.verdict {
			t.Errorf("%s: verdict %s, want %s (%+v)", r.id, results[i].Verdict, r.verdict, results[i].Reasons)
		}
		var evs []string
		for _, ev := range be.events {
			if strings.HasSuffix(ev, " "+r.id+"/target") || strings.HasSuffix(ev, " "+r.id+"/regression") {
				evs = append(evs, strings.Replace(ev, r.id+"/", "", 1))
			}
		}
		at := func(ev string) int { return slices.Index(evs, ev) }
		for _, c := range []string{"target", "regression"} {
			if n := count(evs, "prepare "+c); n != 1 || count(evs, "release "+c) != 1 {
				t.Errorf("%s: %s prepared %d times and released %d times, want once each: %v", r.id, c, n,
					count(evs, "release "+c), evs)
			}
		}
		if at("prepare regression") > at("ran target") {
			t.Errorf("%s: the regression check was prepared after the target check ran: %v", r.id, evs)
		}
		ran := at("run regression") >= 0
		if want := r.regression != nil; ran != want {
			t.Errorf("%s: the regression check ran: %v, want %v: %v", r.id, ran, want, evs)
		}
		if ran && at("run regression") < at("ran target") {
			t.Errorf("%s: the regression check ran before the target check ended: %v", r.id, evs)
		}
		if at("release target") < at("ran target") {
			t.Errorf("%s: the target check was released before it ran: %v", r.id, evs)
		}
	}
}

func count(evs []string, ev string) int {
	n := 0
	for _, e := range evs {
		if e == ev {
			n++
		}
	}
	return n
}

// TestPanicWhileReadyingAhead: a panic while the next check is made ready, in a goroutine of
// its own, is the pair's internal_panic, as a panic on the pair's goroutine is; the process
// and the other pairs go on.
func TestPanicWhileReadyingAhead(t *testing.T) {
	t.Parallel()
	verifiers := map[string]verifier{"panics/target": reply(), "gold/target": reply(), "gold/regression": reply()}
	ahead := map[string]chan struct{}{"panics/regression": make(chan struct{}), "gold/regression": make(chan struct{})}
	s := writeTestSuite(t, demoTestPair(t, "panics"), demoTestPair(t, "gold"))
	be := &preparing{fakeBackend: newFakeBackend(t, verifiers), ahead: ahead, panics: "panics/regression"}
	opts := testOptions(t, be)
	opts.LogDir = t.TempDir()
	results, err := Grade(context.Background(), s, opts)
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	if r := results[0]; r.Verdict != report.Error || len(r.Reasons) != 1 || r.Reasons[0].Code != report.CodeInternalPanic {
		t.Errorf("panics: %s %+v, want error internal_panic", r.Verdict, r.Reasons)
	}
	log, err := os.ReadFile(filepath.Join(opts.LogDir, report.PairDir("panics"), "panic.log"))
	if err != nil || !strings.Contains(string(log), "preparing panics/regression") ||
		!strings.Contains(string(log), "readyAhead") {
		t.Errorf("panic.log does not hold the panic and the stack of the goroutine it happened in (%v):\n%s", err, log)
	}
	if results[1].Verdict != report.Resolved {
		t.Errorf("gold: %s %+v, want resolved", results[1].Verdict, results[1].Reasons)
	}
	if n := count(be.events, "release panics/target"); n != 1 {
		t.Errorf("the target check of the pair that panicked was released %d times, want once: %v", n, be.events)
	}
}
