package cli

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// attackControls are the pairs of fixtures/attacks that carry no attack and must come out
// resolved (fixtures/gen's controlPairs).
var attackControls = map[string]bool{"r2-pkgtests-gold": true}

// candidateVisible are the bundle files a candidate may read (they are published): no hidden
// content and no canary may ever appear in them.
var candidateVisible = []string{"results.json", "results.jsonl", "summary.md", "swebench-summary.json", "tender-results.xml"}

// TestGradeAttacks grades the whole attack suite in real verifiers: every expect is met,
// nothing but the control pair is resolved, and no canary appears (fixtures/README.md,
// "Canaries"): no /tmp/tender-canary-* file, nothing under the grader's temporary
// directory named for a canary, no connection to the loopback canary port, and no hidden
// marker or canary line in what a candidate may read.
func TestGradeAttacks(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the grader's workspaces, so that an escaped write lands where it is seen
	before := canaryFiles(t)
	heard := listenCanary(t)

	results, out := gradeOK(t, repoRoot+"/fixtures/attacks", "--concurrency", "2")

	for _, r := range results {
		if r.ExpectMet == nil || !*r.ExpectMet {
			t.Errorf("%s: %s, expect %s: %+v", r.ID, r.Verdict, r.Expect, r.Reasons)
		}
		if (r.Verdict == report.Resolved) != attackControls[r.ID] {
			t.Errorf("%s: %s; only the control pairs %v may be resolved, and they must be", r.ID, r.Verdict, attackControls)
		}
	}
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
		t.Error("control: r2-hidden-leak's operator logs never show the hidden marker, so the leak attack proves nothing")
	}
}
