package lifecycle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// lingerPatch adds calc/_linger.py, imported by calc/__init__.py: at import in the test process
// it forks a detached process that closes every inherited descriptor (the bootstrap's outcome
// stream among them: one that holds it open is forged, judgeOutcomes), waits for the test
// process to end, then 1 s later appends to the report and creates a canary file.
const lingerPatch = `diff --git a/calc/__init__.py b/calc/__init__.py
--- a/calc/__init__.py
+++ b/calc/__init__.py
@@ -6,6 +6,8 @@ from calc.parsing import evaluate, parse_number, tokenize
 
 __version__ = "0.3.0"
 
+from calc import _linger  # noqa: E402,F401
+
 __all__ = [
     "add",
     "clamp",
diff --git a/calc/_linger.py b/calc/_linger.py
new file mode 100644
--- /dev/null
+++ b/calc/_linger.py
@@ -0,0 +1,18 @@
+import os
+import time
+
+_junit = os.environ.get("TENDER_JUNIT", "")
+_test = os.getpid()
+if _junit and not os.environ.get("CALC_LINGER") and os.fork() == 0:
+    os.environ["CALC_LINGER"] = "1"
+    os.setsid()
+    os.closerange(3, 4096)
+    while os.path.exists("/proc/%d/stat" % _test) and not open("/proc/%d/stat" % _test).read().split(") ")[-1].startswith("Z"):
+        time.sleep(0.05)
+    time.sleep(1)
+    with open(_junit, "a") as f:
+        f.write("<!-- lingered -->\n")
+    with open("/tmp/tender-canary", "w") as f:
+        f.write("x")
+    os._exit(0)
+
`

// TestTestProcessLeavesNoProcessBehind: the code under test forks a detached process that
// outlives the test process and, a second later, appends to the report and creates a canary;
// a post command looks for the canary 3 s after the tests. The bootstrap's parent kills every
// process that started after it once the test process has ended (and after it took the
// report's digest): the canary never appears, the report is the test process's own, and the
// otherwise correct fix is resolved.
func TestTestProcessLeavesNoProcessBehind(t *testing.T) {
	suite := e2e.OnlyPairs(t, e2e.RepoRoot+"/fixtures/demo", "gold-fix")
	manifest := filepath.Join(suite, "tender.yaml")
	data := clitest.ReadFile(t, manifest)
	const anchor = "  timeout: 120s\n"
	data = strings.Replace(data, anchor, anchor+"  post:\n"+canaryPost, 1)
	if err := os.WriteFile(manifest, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	patch := filepath.Join(suite, "pairs", "gold-fix", "patch.diff")
	if err := os.WriteFile(patch, []byte(clitest.ReadFile(t, patch)+lingerPatch), 0o644); err != nil {
		t.Fatal(err)
	}
	results, out := e2e.GradeOK(t, suite)
	if len(results) != 1 || results[0].Verdict != report.Resolved {
		t.Fatalf("results %+v, want gold-fix resolved", results)
	}
	noCanaryInLogs(t, filepath.Join(out, "pairs", "gold-fix", "*.log"), "a process of the test process's outlived it")
	reports, _ := filepath.Glob(filepath.Join(out, "pairs", "gold-fix", "*.xml"))
	for _, r := range reports {
		if strings.Contains(clitest.ReadFile(t, r), "lingered") {
			t.Errorf("%s was rewritten after the test process ended", r)
		}
	}
}

// canaryPost is a post command that says whether /tmp/tender-canary exists, after a wait
// longer than the planted process's: "CANARY-PRESENT" or "canary-absent".
const canaryPost = `    - ["sh", "-c", "sleep 3; if [ -e /tmp/tender-canary ]; ` +
	`then echo CANARY-PRESENT; else echo canary-absent; fi"]` + "\n"

// noCanaryInLogs fails the test for each check log matching pattern in which the canary
// appeared (why says what that means), and when no log shows the post command ran at all.
func noCanaryInLogs(t *testing.T, pattern, why string) {
	t.Helper()
	logs, _ := filepath.Glob(pattern)
	absent := 0
	for _, l := range logs {
		log := clitest.ReadFile(t, l)
		if strings.Contains(log, "CANARY-PRESENT") {
			t.Errorf("%s: %s:\n%s", l, why, log)
		}
		absent += strings.Count(log, "canary-absent")
	}
	if absent == 0 {
		t.Fatalf("no check ran its post command (logs %q)", logs)
	}
}
