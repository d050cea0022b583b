package cli

import (
	"strings"

	"os"
	"path/filepath"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/clitest"

	"github.com/tender-grader/tender/fixtures/bigpatch"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/report"
)

// TestOversizePatch: a 50 MB candidate patch is refused for its pair alone, never parsed or
// applied, and the rest of the batch is graded.
func TestOversizePatch(t *testing.T) {
	suite := e2e.CopyDir(t, repoRoot+"/fixtures/demo")
	f, err := os.Create(filepath.Join(suite, "pairs", "wrong-fix", "patch.diff"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bigpatch.Write(f, "calc/huge_table.py", 50<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := e2e.RunTender(t, "grade", suite, "--out", out)
	if code != cli.ExitMismatch { // wrong-fix expects unresolved
		t.Fatalf(
			"exit %d, want %d (the expect mismatch of the replaced pair)\n%s%s",
			code,
			cli.ExitMismatch,
			stdout,
			stderr,
		)
	}
	results, err := report.ReadResults(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		switch {
		case r.ID == "wrong-fix":
			if r.Verdict != report.IntegrityViolation || len(r.Reasons) == 0 ||
				r.Reasons[0].Code != "patch_too_large" ||
				len(r.Checks) != 0 {
				t.Errorf("oversize pair: %s %+v with %d checks", r.Verdict, r.Reasons, len(r.Checks))
			}
		case r.ExpectMet == nil || !*r.ExpectMet:
			t.Errorf("%s: %s, expected %s", r.ID, r.Verdict, r.Expect)
		}
	}
	if len(results) != 6 {
		t.Errorf("%d results, want 6", len(results))
	}
}

// swapPatch adds calc/_swap.py, imported by calc/__init__.py: at import in the test process it
// forks a detached process that prepares a 30 MB report of 150,000 cases next to the real one
// and renames it over pytest's report as soon as pytest has written it.
const swapPatch = `diff --git a/calc/__init__.py b/calc/__init__.py
--- a/calc/__init__.py
+++ b/calc/__init__.py
@@ -6,6 +6,8 @@ from calc.parsing import evaluate, parse_number, tokenize
 
 __version__ = "0.3.0"
 
+from calc import _swap  # noqa: E402,F401  report cache
+
 __all__ = [
     "add",
     "clamp",
diff --git a/calc/_swap.py b/calc/_swap.py
new file mode 100644
--- /dev/null
+++ b/calc/_swap.py
@@ -0,0 +1,24 @@
+"""Report cache."""
+import os
+import time
+
+_junit = os.environ.get("TENDER_JUNIT", "")
+if _junit and not os.environ.get("CALC_SWAPPED") and os.fork() == 0:
+    os.environ["CALC_SWAPPED"] = "1"
+    os.setsid()
+    cases = "".join('<testcase classname="tests.test_formatting" name="test_%d_%s" time="0.001"/>\n' % (i, "x" * 130)
+                    for i in range(150000))
+    tmp = os.path.join(os.path.dirname(_junit), ".swap")
+    with open(tmp, "w") as f:
+        f.write('<?xml version="1.0"?>\n<testsuites><testsuite name="pytest" tests="150000" errors="0" '
+                'failures="0" skipped="0">\n' + cases + "</testsuite></testsuites>\n")
+    for _ in range(6000):
+        try:
+            with open(_junit) as f:
+                if "</testsuites>" in f.read():
+                    break
+        except OSError:
+            pass
+        time.sleep(0.01)
+    os.rename(tmp, _junit)
+    os._exit(0)
`

// TestOversizeReportBundleIsBounded: two pairs whose report is swapped for a 30 MB one of
// 150,000 cases. The report is refused (or the swap is caught), and the bundle keeps a bounded
// share of each pair: a refused report's first MiB, at most 4 MiB a pair, with the report's
// original size and digest in the results. The whole bundle stays under 10 MB.
func TestOversizeReportBundleIsBounded(t *testing.T) {
	suite := e2e.OnlyPairs(t, repoRoot+"/fixtures/demo", "wrong-fix")
	manifest := filepath.Join(suite, "tender.yaml")
	data := clitest.ReadFile(t, manifest)
	block := data[strings.Index(data, "  - id: wrong-fix"):]
	var add strings.Builder
	for _, id := range []string{"swap-a", "swap-b"} {
		add.WriteString(
			"\n" + strings.NewReplacer("id: wrong-fix", "id: "+id, "pairs/wrong-fix/patch.diff", "pairs/swap/patch.diff").
				Replace(block),
		)
	}
	if err := os.MkdirAll(filepath.Join(suite, "pairs", "swap"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(suite, "pairs", "swap", "patch.diff"), []byte(swapPatch), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, []byte(data[:strings.Index(data, "  - id: wrong-fix")]+add.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, _ := e2e.RunTender(t, "grade", suite, "--out", out, "--concurrency", "1")
	results, err := report.ReadResults(filepath.Join(out, "results.jsonl"))
	if err != nil || len(results) != 2 {
		t.Fatalf("%d results (%v)\n%s%s", len(results), err, stdout, stderr)
	}
	for _, r := range results {
		if r.Verdict == report.Resolved {
			t.Errorf("%s resolved with a swapped report", r.ID)
		}
		if len(r.Checks) == 0 {
			t.Errorf("%s: no check ran: %s %+v", r.ID, r.Verdict, r.Reasons)
		}
		truncated := false
		for _, c := range r.Checks {
			if c.JUnitTruncated {
				truncated = true
				if c.JUnitBytes < 30e6 || len(c.JUnitSHA256) != 64 {
					t.Errorf(
						"%s/%s: truncated report recorded as %d bytes, digest %q",
						r.ID,
						c.Name,
						c.JUnitBytes,
						c.JUnitSHA256,
					)
				}
			}
		}
		t.Logf("%s: %s %v; report truncated in the bundle: %v", r.ID, r.Verdict, r.Reasons, truncated)
	}
	var total int64
	perPair := map[string]int64{}
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, _ := d.Info()
			total += fi.Size()
			if rel, _ := filepath.Rel(filepath.Join(out, "pairs"), p); !strings.HasPrefix(rel, "..") {
				perPair[strings.Split(rel, string(filepath.Separator))[0]] += fi.Size()
			}
		}
		return nil
	})
	t.Logf("bundle: %d bytes (%.2f MB); per pair %v", total, float64(total)/1e6, perPair)
	if total >= 10e6 {
		t.Errorf("the bundle of two hostile pairs is %d bytes, want under 10 MB", total)
	}
	for id, n := range perPair {
		if n > 4<<20+1<<10 {
			t.Errorf("pair %s takes %d bytes of the bundle, want at most 4 MiB", id, n)
		}
	}
}
