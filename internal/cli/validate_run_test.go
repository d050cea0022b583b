package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateRun checks the demo suite's instances in real verifiers, and catches an
// instance whose fail_to_pass names a test that already passes on the base commit.
func TestValidateRun(t *testing.T) {
	out, errOut, code := runTender(t, "validate", "--run", repoRoot+"/fixtures/demo")
	if code != exitOK {
		t.Fatalf("validate --run fixtures/demo: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "ok      gold-fix") || !strings.Contains(out, "all 6 instance(s) are sound") {
		t.Errorf("stdout:\n%s", out)
	}

	broken := copyDir(t, repoRoot+"/fixtures/demo")
	manifest := filepath.Join(broken, "tender.yaml")
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	// gold-fix is the first pair: give its fail_to_pass a test that passes on the base.
	const first = `      - "tests/test_formatting.py::test_group_digits_negative"`
	if !strings.Contains(string(data), first) {
		t.Fatalf("the demo suite no longer lists %s", first)
	}
	data = []byte(strings.Replace(string(data), first, first+"\n      - \"tests/test_arithmetic.py::test_mean\"", 1))
	if err := os.WriteFile(manifest, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runTender(t, "validate", "--run", broken)
	if code != exitFailure {
		t.Fatalf("broken suite: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errOut)
	}
	want := "BROKEN  gold-fix: on the base commit tests/test_arithmetic.py::test_mean is passed; a fail_to_pass test must fail there"
	if !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	if !strings.Contains(out, "ok      wrong-fix") {
		t.Errorf("the other instance should still be sound:\n%s", out)
	}
}
