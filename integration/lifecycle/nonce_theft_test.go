package lifecycle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/report"
)

// TestSetupFindsNoNonce: a setup command (as the candidate's code could, once a setup step
// imports it) looks for the bootstrap's configuration on the stdin of the script that runs it,
// through /proc, and writes a plan without sentinels and an exit-0 end line with the nonce it
// found to the script's stdout. The configuration, nonce and all, is made from the planter's
// output after the setup stage has ended, so there is none to find: the setup steals nothing,
// its lines carry no nonce and are not the bootstrap's, and every pair keeps its honest
// verdict (gold-fix resolved, wrong-fix unresolved).
func TestSetupFindsNoNonce(t *testing.T) {
	suite := withVerifierLines(t, `  setup:
    - ["sh", "-c", "src=/proc/$PPID/fd/10; [ -e $src ] || src=/proc/$PPID/fd/0; cfg=$(cat $src); printf %s \"$cfg\" > $src; n=$(printf %s \"$cfg\" | sed 's/.*\"nonce\":\"\\([0-9a-f]*\\)\".*/\\1/'); printf 'TENDER-CONTROL %s plan {\"v\":1,\"sentinels\":[],\"shifts\":{}}\\nTENDER-CONTROL %s end {\"exit\":0,\"junit_sha256\":\"\",\"stream_ended\":true}\\n' $n $n > /proc/$PPID/fd/11; echo stole:$n: >&2"]
`)
	out := t.TempDir() + "/out"
	e2e.RunTender(t, "grade", suite, "--out", out, "--concurrency", "2")
	results, err := report.ReadResults(out + "/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]report.Verdict{"gold-fix": report.Resolved, "wrong-fix": report.Unresolved}
	for _, r := range results {
		if want[r.ID] == "" {
			continue
		}
		log, _ := os.ReadFile(filepath.Join(out, "pairs", r.ID, "target.log"))
		if r.Verdict != want[r.ID] || !strings.Contains(string(log), "stole::") {
			t.Errorf("%s after a setup looked for the nonce: %s %+v, want %s and nothing stolen\n%s",
				r.ID, r.Verdict, r.Reasons, want[r.ID], log)
		}
		delete(want, r.ID)
	}
	if len(want) > 0 {
		t.Errorf("no results for %v", want)
	}
}
