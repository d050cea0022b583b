package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/internal/clitest"
)

// TestImportRefusesBadRecords: malformed SWE-bench input is refused with exit 2.
func TestImportRefusesBadRecords(t *testing.T) {
	work := t.TempDir()
	tests := []struct{ name, line, want string }{
		{
			"short commit",
			`{"instance_id":"a__b-1","repo":"a/b","base_commit":"abc","patch":"","FAIL_TO_PASS":["t::x"]}`,
			"base_commit",
		},
		{"bad test list", `{"instance_id":"a__b-1","repo":"a/b","base_commit":"` + clitest.DemoBase +
			`","patch":"","FAIL_TO_PASS":"not json"}`, "JSON list"},
		{"empty FAIL_TO_PASS", `{"instance_id":"a__b-1","repo":"a/b","base_commit":"` + clitest.DemoBase +
			`","patch":"","FAIL_TO_PASS":"[]"}`, "FAIL_TO_PASS is empty"},
		{"path-like id", `{"instance_id":"../x","repo":"a/b","base_commit":"` + clitest.DemoBase +
			`","patch":"","FAIL_TO_PASS":["t::x"]}`, "instance_id"},
		{"no clone for repo", `{"instance_id":"a__b-1","repo":"a/b","base_commit":"` + clitest.DemoBase +
			`","patch":"","FAIL_TO_PASS":["t::x"]}`, "--repo a__b=PATH"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := filepath.Join(work, "i"+string(rune('0'+i))+".jsonl")
			if err := os.WriteFile(in, []byte(tt.line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := runTender(
				t,
				"import",
				"swebench",
				"--instances",
				in,
				"--out",
				filepath.Join(work, "o"+string(rune('0'+i))),
			)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 mentioning %q", code, errOut, tt.want)
			}
		})
	}
}
