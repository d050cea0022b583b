package grader

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/sandbox"
)

// batch is a suite of demo pairs and the results a Grade of it reported through its callbacks.
type batch struct {
	suite *suite.Suite
	fake  *fakeBackend

	mu       sync.Mutex
	sunk     []report.PairResult
	progress []progressCall
	sinkErr  map[string]error // returned by Sink for these pair ids
}

type progressCall struct {
	Done, Total int
	ID          string
}

// newBatch writes a suite with one demo pair per id, each with a target check only (these
// tests are about the batch, not the checks); verifiers are keyed by "id/target".
func newBatch(t *testing.T, ids []string, verifiers map[string]verifier) *batch {
	var pairs []testPair
	for _, id := range ids {
		p := demoTestPair(t, id)
		p.passToPass = nil
		pairs = append(pairs, p)
	}
	return &batch{suite: writeTestSuite(t, pairs...), fake: newFakeBackend(t, verifiers)}
}

func (b *batch) options(t *testing.T) Options {
	opts := testOptions(t, b.fake)
	opts.Sink = func(r report.PairResult) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.sunk = append(b.sunk, r)
		return b.sinkErr[r.ID]
	}
	opts.Progress = func(done, total int, r report.PairResult) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.progress = append(b.progress, progressCall{done, total, r.ID})
	}
	return opts
}

func (b *batch) sunkIDs() []string {
	var ids []string
	for _, r := range b.sunk {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestGradeSinkAndProgress: Sink gets each finished pair once, exactly as Grade returns it;
// Progress follows with the count done.
func TestGradeSinkAndProgress(t *testing.T) {
	t.Parallel()
	verifiers := map[string]verifier{"a/target": reply(), "b/target": reply(failing()), "c/target": reply()}
	b := newBatch(t, []string{"a", "b", "c"}, verifiers)
	results, err := Grade(context.Background(), b.suite, b.options(t))
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	if got := verdicts(results); !cmp.Equal(got, []string{"a resolved", "b unresolved", "c resolved"}) {
		t.Errorf("results %v", got)
	}
	sunk := slices.SortedFunc(
		slices.Values(b.sunk),
		func(x, y report.PairResult) int { return strings.Compare(x.ID, y.ID) },
	)
	if diff := cmp.Diff(results, sunk); diff != "" {
		t.Errorf("Sink got other results than Grade returned (-returned +sunk):\n%s", diff)
	}
	var want []progressCall
	for i, id := range b.sunkIDs() {
		want = append(want, progressCall{i + 1, 3, id})
	}
	if diff := cmp.Diff(want, b.progress); diff != "" {
		t.Errorf("Progress calls (-want +got):\n%s", diff)
	}
}

// TestGradeStopsWhenItCannotRecord: a Sink error (a full disk) is the batch's error, and the
// batch stops there: no pair is graded that could not be recorded, and Progress never counts
// the pair that was not recorded. One pair at a time, so "after" is well defined; the fake
// backend fails the test if the verifier of the pair after it starts.
func TestGradeStopsWhenItCannotRecord(t *testing.T) {
	t.Parallel()
	verifiers := map[string]verifier{"a/target": reply(), "b/target": reply()}
	b := newBatch(t, []string{"a", "b", "c"}, verifiers)
	errSink := errors.New("results file: disk full")
	b.sinkErr = map[string]error{"b": errSink}
	opts := b.options(t)
	opts.Concurrency = 1
	_, err := Grade(context.Background(), b.suite, opts)
	if !errors.Is(err, errSink) || errors.Is(err, context.Canceled) {
		t.Fatalf("Grade: %v, want only the sink's error", err)
	}
	if diff := cmp.Diff([]progressCall{{1, 3, "a"}}, b.progress); diff != "" {
		t.Errorf("Progress calls (-want +got):\n%s", diff)
	}
}

// TestGradeResume: a finished pair whose input digest still matches is kept as it was, and no
// verifier starts for it; a pair whose inputs changed is graded again.
func TestGradeResume(t *testing.T) {
	t.Parallel()
	b := newBatch(t, []string{"kept", "stale"}, map[string]verifier{"stale/target": reply()})
	kept := report.PairResult{Schema: report.SchemaVersion, ID: "kept", InputDigest: b.suite.Pairs[0].InputDigest,
		Verdict: report.Unresolved, Reasons: []report.Reason{{Code: "from_the_previous_run"}}}
	stale := report.PairResult{ID: "stale", InputDigest: "digest of older inputs", Verdict: report.Unresolved}
	opts := b.options(t)
	opts.Skip = map[string]report.PairResult{"kept": kept, "stale": stale}
	results, err := Grade(context.Background(), b.suite, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kept, results[0]); diff != "" {
		t.Errorf("kept pair changed (-previous +now):\n%s", diff)
	}
	if r := results[1]; r.Verdict != report.Resolved || r.InputDigest != b.suite.Pairs[1].InputDigest {
		t.Errorf("stale pair not graded again: %s %+v, digest %s", r.Verdict, r.Reasons, r.InputDigest)
	}
	if n := len(b.fake.callsFor("kept")); n != 0 {
		t.Errorf("%d verifiers started for the kept pair", n)
	}
	if n := len(b.fake.callsFor("stale")); n != 1 {
		t.Errorf("%d verifiers started for the stale pair, want 1", n)
	}
	if diff := cmp.Diff([]progressCall{{2, 2, "stale"}}, b.progress); diff != "" {
		t.Errorf("Progress calls (-want +got):\n%s", diff)
	}
	if got := b.sunkIDs(); !cmp.Equal(got, []string{"stale"}) {
		t.Errorf("Sink got %v, want only the graded pair", got)
	}
}

// TestGradeCancel: a pair whose verifier is interrupted is not recorded (a killed verifier can
// look like a failed test), pairs finished before are, and pairs after never start.
func TestGradeCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := func(ctx context.Context, c *fakeCall) (*sandbox.Result, error) {
		cancel()
		return reply(failing())(ctx, c)
	}
	b := newBatch(t, []string{"first", "interrupted", "never"}, map[string]verifier{
		"first/target": reply(), "interrupted/target": interrupted})
	opts := b.options(t)
	opts.Concurrency = 1 // pairs start in suite order
	results, err := Grade(ctx, b.suite, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Grade: %v, want context.Canceled", err)
	}
	if got := verdicts(results); !cmp.Equal(got, []string{"first resolved", " ", " "}) {
		t.Errorf("results %q: only the pair finished before the interrupt is recorded", got)
	}
	if got := b.sunkIDs(); !cmp.Equal(got, []string{"first"}) {
		t.Errorf("Sink got %v", got)
	}
	for id, want := range map[string]int{"first": 1, "interrupted": 1, "never": 0} {
		if n := len(b.fake.callsFor(id)); n != want {
			t.Errorf("%s: %d verifiers started, want %d", id, n, want)
		}
	}
}

// TestGradeBatchErrors: errors of the batch itself, before any pair is graded.
func TestGradeBatchErrors(t *testing.T) {
	t.Parallel()
	b := newBatch(t, []string{"only"}, nil)
	empty := Shard{K: 1, N: 2}
	if len(empty.Select(b.suite.Pairs)) != 0 {
		empty.K = 2
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		edit func(*Options)
		want error // nil: any error
	}{
		{"concurrency 0", context.Background(), func(o *Options) { o.Concurrency = 0 }, nil},
		{"empty shard", context.Background(), func(o *Options) { o.Shard = empty }, ErrNoPairs},
		{"cancelled before it starts", cancelled, func(*Options) {}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := b.options(t)
			tc.edit(&opts)
			_, err := Grade(tc.ctx, b.suite, opts)
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Grade: %v, want %v", err, tc.want)
			}
			if len(b.sunk) != 0 {
				t.Errorf("Sink called for %v", b.sunkIDs())
			}
		})
	}
}

// TestGradeSpec: what a verifier is given. The workspace holds the candidate's change and the
// evaluator's tests; the command is the bootstrap and the test IDs are on its stdin only (the
// protocol check in readProtocol); the environment has no host variable; limits come from the
// suite.
func TestGradeSpec(t *testing.T) {
	t.Setenv("TENDER_TEST_SECRET", "host-token")
	look := func(c *fakeCall) {
		s := c.Spec
		if s.RunID != "grader-test" || s.Name != "p/target" || s.Image != suite.DefaultImage {
			c.errorf("spec ids: run %q name %q image %q", s.RunID, s.Name, s.Image)
		}
		want := sandbox.Limits{Timeout: suite.DefaultTimeout, CPUs: suite.DefaultCPUs, Memory: suite.DefaultMemory,
			Pids: suite.DefaultPids, DiskBytes: suite.DefaultDisk, OutputBytes: maxLogBytes}
		if diff := cmp.Diff(want, s.Limits); diff != "" {
			c.errorf("limits (-want +got):\n%s", diff)
		}
		wantEnv := map[string]string{"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
		if diff := cmp.Diff(wantEnv, s.Env); diff != "" {
			c.errorf("environment (-want +got):\n%s", diff)
		}
		for file, text := range map[string]string{
			filepath.Join(s.Workspace, "calc", "formatting.py"):       "return sign + sep.join(groups)",
			filepath.Join(s.Workspace, "tests", "test_formatting.py"): "def test_group_digits_negative",
		} {
			if data, err := os.ReadFile(file); err != nil || !strings.Contains(string(data), text) {
				c.errorf("%s does not contain %q (%v)", file, text, err)
			}
		}
	}
	b := newBatch(t, []string{"p"}, map[string]verifier{"p/target": inspecting(look, reply())})
	opts := b.options(t)
	opts.Getenv = os.Getenv
	if _, err := Grade(context.Background(), b.suite, opts); err != nil {
		t.Fatal(err)
	}
}

// TestGradeSavesRedactedLogs: each check's log and raw report are saved under LogDir and named
// in the check record; the sentinels' names are redacted from the log, which a candidate may
// read, but not from the raw report, which is evidence for the operator.
func TestGradeSavesRedactedLogs(t *testing.T) {
	t.Parallel()
	b := newBatch(t, []string{"p"}, map[string]verifier{"p/target": reply(failing())})
	opts := b.options(t)
	opts.LogDir = t.TempDir()
	results, err := Grade(context.Background(), b.suite, opts)
	if err != nil {
		t.Fatal(err)
	}
	chk := results[0].Checks[0]
	if chk.LogFile != "pairs/p/target.log" || chk.JUnitFile != "pairs/p/target.junit.xml" {
		t.Fatalf("log files %q %q", chk.LogFile, chk.JUnitFile)
	}
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(opts.LogDir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	log, raw := read(chk.LogFile), read(chk.JUnitFile)
	proto := b.fake.callsFor("p")[0].Proto
	if !strings.Contains(log, "FAILED "+proto.Required[0]) {
		t.Errorf("log lost the required test's failure:\n%s", log)
	}
	for _, s := range proto.Sentinels {
		_, name, _ := strings.Cut(s.ID, "::")
		if strings.Contains(log, name) || strings.Contains(log, "TENDER-CONTROL") {
			t.Errorf("log names sentinel %s, or holds a control line:\n%s", s.ID, log)
		}
		if !strings.Contains(raw, name) {
			t.Errorf("raw report lost sentinel %s", s.ID)
		}
	}
}

func verdicts(results []report.PairResult) []string {
	var out []string
	for _, r := range results {
		out = append(out, r.ID+" "+string(r.Verdict))
	}
	return out
}
