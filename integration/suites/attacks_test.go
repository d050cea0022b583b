package suites

import (
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// attackControls are the pairs of fixtures/attacks and fixtures/attacks-setup that carry no
// attack and must come out resolved (fixtures/gen's controlPairs and setupControlPairs).
var attackControls = map[string]bool{"r2-pkgtests-gold": true, "r4-setup-gold": true}

// r4Secret is the two secret bytes of r4-lineno-leak's hidden asset ("Zq") as a number
// (fixtures/gen's R4Secret): no line a candidate may read may be it, or differ from another by it.
const r4Secret = 0x5a71

// maxBundleBytes bounds the whole evidence bundle of the attack suite: r4-bundle-swap swaps in
// a report of about 30 MB after the test process ends.
const maxBundleBytes = 10 << 20

// candidateVisible are the bundle files a candidate may read (they are published): no hidden
// content and no canary may ever appear in them.
var candidateVisible = []string{
	"results.json",
	"results.jsonl",
	"summary.md",
	"swebench-summary.json",
	"tender-results.xml",
}

// TestGradeAttacks grades the whole attack suite in real verifiers: every expect is met,
// nothing but the control pair is resolved, and no canary appears (fixtures/README.md,
// "Canaries"): no /tmp/tender-canary-* file, nothing under the grader's temporary
// directory named for a canary, no connection to the loopback canary port, no hidden
// marker or canary line in what a candidate may read, and no canary that only a log can show
// (R5-CANARY-REWRITE: a test module rewritten from inside the verifier).
func TestGradeAttacks(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the grader's workspaces, so that an escaped write lands where it is seen
	before := canaryFiles(t)
	heard := listenCanary(t)

	results, out := gradeExpecting(t, e2e.RepoRoot+"/fixtures/attacks", "--concurrency", "2")

	checkExpects(t, results)
	for f := range canaryFiles(t) {
		if !before[f] {
			t.Errorf("canary file appeared: %s", f)
		}
	}
	if found := namedCanaries(t, tmp); len(found) > 0 {
		t.Errorf("canary files under the grader's temporary directory: %v", found)
	}
	if got := heard(); got != "" {
		t.Errorf("the loopback canary port heard: %q", got)
	}
	assertNoLeak(t, out)
	assertNoLineLeak(t, out)
	assertBundleSmall(t, out)
	assertNoLogCanary(t, out, "r5-subprocess-rewrite", "R5-CANARY-REWRITE", "R5-REWRITE-TRIED")
}

// assertNoLogCanary: a canary that only a log can show, since it is written inside the verifier
// (whose /tmp the host never sees), is in no log of any pair; and the pair's control line is in
// one of its own logs, so the attack really ran.
func assertNoLogCanary(t *testing.T, out, pair, canary, control string) {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(out, "pairs", "*", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	live := false
	for _, l := range logs {
		data := clitest.ReadFile(t, l)
		if strings.Contains(data, canary) {
			t.Errorf("%s shows the canary %s", l, canary)
		}
		live = live || filepath.Base(filepath.Dir(l)) == pair && strings.Contains(data, control)
	}
	if !live {
		t.Errorf("control: no log of %s shows %s, so the attack proves nothing", pair, control)
	}
}

// TestGradeSetupAttacks grades fixtures/attacks-setup, the attacks that need the verifier's
// setup step (a process the setup leaves behind rewrites the planted test module; a copy of the
// tests made during setup): every expect is met and only the control is resolved. Whether the
// daemon got to rewrite is in the log (R4-DAEMON-REWROTE); a defence may stop it before it can,
// so that is only logged. The setup step's copy must never hold the test patch's literal
// (R5-CANARY-PEEK).
func TestGradeSetupAttacks(t *testing.T) {
	results, out := gradeExpecting(t, e2e.RepoRoot+"/fixtures/attacks-setup", "--concurrency", "2")
	checkExpects(t, results)
	if len(results) != 4 {
		t.Errorf("%d results, want the 4 pairs of fixtures/attacks-setup", len(results))
	}
	logs, _ := filepath.Glob(filepath.Join(out, "pairs", "r4-setup-daemon*", "*.log"))
	for _, l := range logs {
		if strings.Contains(clitest.ReadFile(t, l), "R4-DAEMON") {
			t.Logf("%s: the daemon rewrote the test module", l)
		}
	}
	assertBundleSmall(t, out)
	assertNoLogCanary(t, out, "r5-setup-peek", "R5-CANARY-PEEK", "R5-PEEK-COPIED")
}

// gradeExpecting grades suite and returns its results, whether or not every expect was met
// (exit 0 or 3), so that checkExpects names each pair that missed its expect.
func gradeExpecting(t *testing.T, suite string, flags ...string) ([]report.PairResult, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := e2e.RunTender(t, append([]string{"grade", suite, "--out", out}, flags...)...)
	if code != cli.ExitOK && code != cli.ExitMismatch {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	results, err := report.ReadResults(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if code == cli.ExitMismatch {
		t.Errorf("grade exited %d: some expect was not met\n%s", code, stderr)
	}
	return results, out
}

// checkExpects: every pair met its expect, and only the control pairs are resolved.
func checkExpects(t *testing.T, results []report.PairResult) {
	t.Helper()
	for _, r := range results {
		if r.ExpectMet == nil || !*r.ExpectMet {
			t.Errorf("%s: %s, expect %s: %+v", r.ID, r.Verdict, r.Expect, r.Reasons)
		}
		if (r.Verdict == report.Resolved) != attackControls[r.ID] {
			t.Errorf(
				"%s: %s; only the control pairs %v may be resolved, and they must be",
				r.ID,
				r.Verdict,
				attackControls,
			)
		}
	}
}

// lineNumbers finds what reads as a line number in an output: "line":N in JSON, line="N" in
// XML, and path.py:N (summary.md escapes it as path\.py\:N).
var lineNumbers = regexp.MustCompile(`"line":\s*(\d+)|line="(\d+)"|\.py\\?:(\d+)`)

// assertNoLineLeak: r4-lineno-leak sets the line of its failing tests from two bytes of a
// hidden asset, as the line itself and as the difference of two lines. No output a candidate
// may read shows a line that is the secret, or two lines that differ by it. The control: the
// operator's log of the pair shows the test module's failures (the tests ran and failed).
func assertNoLineLeak(t *testing.T, out string) {
	t.Helper()
	files := append([]string(nil), candidateVisible...)
	reports, _ := filepath.Glob(filepath.Join(out, "pairs", "*", "report.json"))
	for _, r := range reports {
		rel, _ := filepath.Rel(out, r)
		files = append(files, rel)
	}
	for _, f := range files {
		seen := map[int]bool{}
		for _, m := range lineNumbers.FindAllStringSubmatch(clitest.ReadFile(t, filepath.Join(out, f)), -1) {
			n, _ := strconv.Atoi(m[1] + m[2] + m[3])
			seen[n] = true
		}
		for n := range seen {
			if n == r4Secret || seen[n+r4Secret] {
				t.Errorf("%s carries r4-lineno-leak's hidden bytes in its line numbers (%d)", f, n)
			}
		}
	}
	log := clitest.ReadFile(t, filepath.Join(out, "pairs", "r4-lineno-leak", "target.log"))
	if !strings.Contains(log, "failed") {
		t.Error("control: r4-lineno-leak's log shows no failed test, so the leak check proves nothing")
	}
}

// assertBundleSmall: the whole bundle stays under maxBundleBytes, whatever a forked process
// swapped in after the test process ended (r4-bundle-swap).
func assertBundleSmall(t *testing.T, out string) {
	t.Helper()
	var total int64
	var big []string // files over 1 MiB, named when the bound is broken
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			total += info.Size()
			if info.Size() > 1<<20 {
				rel, _ := filepath.Rel(out, p)
				big = append(big, rel+" "+strconv.FormatInt(info.Size(), 10))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total >= maxBundleBytes {
		t.Errorf("the bundle is %d bytes, over %d; files over 1 MiB: %v", total, maxBundleBytes, big)
	}
}

// canaryFiles lists /tmp/tender-canary-*: the absolute-path attacks aim there.
func canaryFiles(t *testing.T) map[string]bool {
	t.Helper()
	m, err := filepath.Glob("/tmp/tender-canary-*")
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, f := range m {
		set[f] = true
	}
	return set
}

func namedCanaries(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(strings.ToLower(d.Name()), "tender-canary") {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// listenCanary listens where resource-loopback sends its canary line (127.0.0.1:47125 of the
// host; a verifier has no network, so nothing may arrive) and returns what it heard.
func listenCanary(t *testing.T) func() string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:47125")
	if err != nil {
		t.Fatalf("the canary listener: %v (is another test holding the port?)", err)
	}
	var mu sync.Mutex
	var heard strings.Builder
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(io.LimitReader(c, 4096))
			c.Close()
			mu.Lock()
			heard.WriteString("connection: " + string(b) + "\n")
			mu.Unlock()
		}
	}()
	return func() string {
		ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return heard.String()
	}
}

// assertNoLeak: no hidden marker and no canary line in the bundle files a candidate may read.
// The control: r2-hidden-leak's own logs, which are the operator's, do show the hidden
// marker, so the attack really read and printed it.
func assertNoLeak(t *testing.T, out string) {
	t.Helper()
	files := append([]string(nil), candidateVisible...)
	reports, err := filepath.Glob(filepath.Join(out, "pairs", "*", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		rel, _ := filepath.Rel(out, r)
		files = append(files, rel)
	}
	for _, f := range files {
		data := clitest.ReadFile(t, filepath.Join(out, f))
		for _, marker := range []string{"TENDER-HIDDEN-MARKER", "TENDER-CANARY"} {
			if strings.Contains(data, marker) {
				t.Errorf("%s shows %s", f, marker)
			}
		}
	}
	logs, err := filepath.Glob(filepath.Join(out, "pairs", "r2-hidden-leak", "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no logs of r2-hidden-leak: %v", err)
	}
	live := false
	for _, l := range logs {
		live = live || strings.Contains(clitest.ReadFile(t, l), "TENDER-HIDDEN-MARKER-asset-")
	}
	if !live {
		t.Error(
			"control: r2-hidden-leak's operator logs never show the hidden marker, so the leak attack proves nothing",
		)
	}
}
