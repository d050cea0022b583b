package pool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tender-grader/tender/sandbox"
)

// fake is an engine that runs checks by calling run, and answers pings until it is dead.
type fake struct {
	name   string
	dead   atomic.Bool
	runs   atomic.Int32
	run    func(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error)
	closed atomic.Bool
	images map[string]string // ref → ID
	mu     sync.Mutex
}

func (f *fake) Name() string { return "docker" }

func (f *fake) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	f.runs.Add(1)
	if f.run != nil {
		return f.run(ctx, spec)
	}
	if f.dead.Load() {
		return nil, errors.New("connection refused")
	}
	return &sandbox.Result{ExitCode: 0, Backend: f.name}, nil
}

func (f *fake) Ping(context.Context) error {
	if f.dead.Load() {
		return errors.New("dial unix: connection refused")
	}
	return nil
}

func (f *fake) Close(context.Context) error {
	f.closed.Store(true)
	if f.dead.Load() {
		return errors.New("connection refused")
	}
	return nil
}

func (f *fake) ImageID(_ context.Context, ref string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.images[ref], nil
}

func (f *fake) SaveImage(_ context.Context, ref string, w io.Writer) error {
	id, _ := f.ImageID(context.Background(), ref)
	if id == "" {
		return fmt.Errorf("no image %s", ref)
	}
	_, err := fmt.Fprintf(w, "%s=%s", ref, id)
	return err
}

func (f *fake) LoadImage(_ context.Context, r io.Reader) error {
	if f.dead.Load() {
		return errors.New("connection refused")
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ref, id, _ := strings.Cut(string(b), "=")
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.images == nil {
		f.images = map[string]string{}
	}
	f.images[ref] = id
	return nil
}

func newPool(t *testing.T, fakes ...*fake) (*Pool, *bytes.Buffer) {
	t.Helper()
	var ms []Member
	for _, f := range fakes {
		ms = append(ms, Member{Name: f.name, Engine: f})
	}
	p, err := New(ms)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	p.Log = &syncWriter{w: &log}
	return p, &log
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func spec(name string) sandbox.Spec {
	return sandbox.Spec{Name: name, RunID: "r", Workspace: "/nowhere", Command: []string{"true"}}
}

// blocking makes engines whose checks wait for release, so the test sees where each went.
func blocking(names ...string) ([]*fake, chan struct{}) {
	release := make(chan struct{})
	var fs []*fake
	for _, n := range names {
		f := &fake{name: n}
		f.run = func(ctx context.Context, s sandbox.Spec) (*sandbox.Result, error) {
			<-release
			if f.dead.Load() {
				return nil, errors.New("engine went away")
			}
			return &sandbox.Result{Backend: f.name}, nil
		}
		fs = append(fs, f)
	}
	return fs, release
}

func TestLeastBusyEngineTakesEachCheck(t *testing.T) {
	fs, release := blocking("a", "b", "c")
	p, _ := newPool(t, fs...)
	var wg sync.WaitGroup
	for i := range 9 {
		wg.Go(func() {
			if _, err := p.Run(context.Background(), spec(fmt.Sprint("c", i))); err != nil {
				t.Error(err)
			}
		})
	}
	waitRuns(t, fs, 9)
	for _, f := range fs {
		if n := f.runs.Load(); n != 3 {
			t.Errorf("engine %s holds %d of 9 concurrent checks, want 3", f.name, n)
		}
	}
	close(release)
	wg.Wait()
	for _, s := range p.Shares() {
		if s.Checks != 3 || s.Out != "" {
			t.Errorf("share %+v, want 3 checks and in", s)
		}
	}
}

func waitRuns(t *testing.T, fs []*fake, n int32) {
	t.Helper()
	for range 2000 {
		var sum int32
		for _, f := range fs {
			sum += f.runs.Load()
		}
		if sum >= n {
			return
		}
		sleep()
	}
	t.Fatalf("the checks did not all start")
}

func TestLostEngineChecksMoveOnceAndAreRecordedOnce(t *testing.T) {
	fs, release := blocking("a", "b")
	p, log := newPool(t, fs...)
	var wg sync.WaitGroup
	results := make([]*sandbox.Result, 6)
	errs := make([]error, 6)
	for i := range 6 {
		wg.Go(func() { results[i], errs[i] = p.Run(context.Background(), spec(fmt.Sprint("c", i))) })
	}
	waitRuns(t, fs, 6)
	fs[1].dead.Store(true) // b dies with its three checks in flight
	close(release)
	wg.Wait()
	for i := range 6 {
		if errs[i] != nil || results[i] == nil || results[i].Backend != "a" {
			t.Errorf("check %d: result %+v, error %v; want one result from a", i, results[i], errs[i])
		}
	}
	if a, b := fs[0].runs.Load(), fs[1].runs.Load(); a != 6 || b != 3 {
		t.Errorf("runs: a %d, b %d; want a 6 (3 of its own, 3 moved), b 3", a, b)
	}
	sh := p.Shares()
	if sh[0].Checks != 6 || sh[1].Checks != 0 || sh[1].Out == "" {
		t.Errorf("shares %+v, want a 6, b 0 and out", sh)
	}
	if n := strings.Count(log.String(), "engine b is taken out of the pool (1 of 2 left)"); n != 1 {
		t.Errorf("want one line taking b out, got %d in:\n%s", n, log)
	}
	if _, err := p.Run(context.Background(), spec("after")); err != nil || fs[1].runs.Load() != 3 {
		t.Errorf("a check after b was lost went to b (runs %d) or failed: %v", fs[1].runs.Load(), err)
	}
}

func TestCheckErrorOnLiveEngineStaysTheChecks(t *testing.T) {
	boom := errors.New("create container: name conflict")
	a := &fake{name: "a", run: func(context.Context, sandbox.Spec) (*sandbox.Result, error) { return nil, boom }}
	b := &fake{name: "b"}
	p, _ := newPool(t, a, b)
	if _, err := p.Run(context.Background(), spec("x")); !errors.Is(err, boom) {
		t.Fatalf("error %v, want the check's own", err)
	}
	if b.runs.Load() != 0 || len(p.In()) != 2 {
		t.Errorf("an engine that still answers was taken out, or its check ran again (b ran %d)", b.runs.Load())
	}
}

func TestKilledContainer(t *testing.T) {
	for _, engineDead := range []bool{false, true} {
		t.Run(fmt.Sprint("engine dead ", engineDead), func(t *testing.T) {
			a := &fake{name: "a"}
			a.run = func(context.Context, sandbox.Spec) (*sandbox.Result, error) {
				a.dead.Store(engineDead)
				return &sandbox.Result{Killed: true, ExitCode: 137}, nil
			}
			b := &fake{name: "b"}
			p, _ := newPool(t, a, b)
			res, err := p.Run(context.Background(), spec("x"))
			if err != nil {
				t.Fatal(err)
			}
			if engineDead != (res.Backend == "b") || engineDead == res.Killed {
				t.Errorf("result %+v: a killed container on a %s engine must %s", res,
					map[bool]string{true: "dead", false: "live"}[engineDead],
					map[bool]string{true: "move to b", false: "stay the check's (verifier_killed)"}[engineDead])
			}
		})
	}
}

func TestEveryEngineLost(t *testing.T) {
	a, b := &fake{name: "a"}, &fake{name: "b"}
	a.dead.Store(true)
	b.dead.Store(true)
	p, _ := newPool(t, a, b)
	_, err := p.Run(context.Background(), spec("x"))
	if !errors.Is(err, ErrNoEngine) || !strings.Contains(err.Error(), "a: ") || !strings.Contains(err.Error(), "b: ") {
		t.Fatalf("error %v, want ErrNoEngine naming both engines", err)
	}
	if a.runs.Load()+b.runs.Load() != 2 {
		t.Errorf("want one attempt per engine, got a %d b %d", a.runs.Load(), b.runs.Load())
	}
}

func TestCancelledCheckIsNotMoved(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &fake{name: "a"}
	a.run = func(context.Context, sandbox.Spec) (*sandbox.Result, error) {
		a.dead.Store(true)
		cancel()
		return nil, context.Canceled
	}
	b := &fake{name: "b"}
	p, _ := newPool(t, a, b)
	if _, err := p.Run(ctx, spec("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want the cancellation", err)
	}
	if b.runs.Load() != 0 || len(p.In()) != 2 {
		t.Errorf("a cancelled check moved (b ran %d) or took an engine out", b.runs.Load())
	}
}

func TestCloseClosesEveryEngineAndSaysTheShares(t *testing.T) {
	a, b := &fake{name: "a"}, &fake{name: "b"}
	p, log := newPool(t, a, b)
	for range 3 {
		if _, err := p.Run(context.Background(), spec("x")); err != nil {
			t.Fatal(err)
		}
	}
	b.dead.Store(true)
	p.TakeOut("b", "test")
	if err := p.Close(context.Background()); err != nil {
		t.Errorf("closing a pool whose lost engine cannot be cleaned: %v, want a line only", err)
	}
	if !a.closed.Load() || !b.closed.Load() {
		t.Error("an engine was not closed")
	}
	for _, want := range []string{"checks per engine: a 2 (67%); b 1 (33%), taken out", "tender gc --engine b"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestNewRefusesNoEngineAndDuplicates(t *testing.T) {
	if _, err := New(nil); !errors.Is(err, ErrNoEngine) {
		t.Errorf("New(nil): %v", err)
	}
	a := &fake{name: "a"}
	if _, err := New([]Member{{"a", a}, {"a", a}}); err == nil {
		t.Error("the same engine twice was accepted")
	}
}
