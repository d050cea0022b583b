package docker

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tender-grader/tender/sandbox"
)

// evaluatorSpec is a check whose workspace holds a candidate file and two evaluator files, one
// of them in a directory that also holds a file of the candidate's.
func evaluatorSpec(t *testing.T, script string) sandbox.Spec {
	spec := testSpec(t, sh(script)...)
	spec.Workspace = writeFiles(t, map[string]string{
		"pkg/mod.py":          "VALUE = 1\n",
		"pkg/tests/test_x.py": "def test_x():\n    assert True\n",
		"pkg/tests/helper.py": "HELP = 1\n",
		"conftest.py":         "# the evaluator's\n",
	})
	spec.Evaluator = []string{"conftest.py", "pkg/tests/test_x.py"}
	return spec
}

// TestEvaluatorFilesAreNotTheVerifierUsers: the evaluator's files are Tender's user's and
// read-only to the verifier user, who can neither write, replace, remove nor move them, nor the
// directories that lead to them; it can add files beside them, and it owns the candidate's
// files as it always did.
func TestEvaluatorFilesAreNotTheVerifierUsers(t *testing.T) {
	res := runDocker(t, evaluatorSpec(t, `
try() { if sh -c "$2" 2>/dev/null; then echo "ALLOWED $1"; else echo "refused $1"; fi; }
try write 'echo x >> pkg/tests/test_x.py'
try truncate ': > conftest.py'
try remove 'rm -f pkg/tests/test_x.py'
try replace 'echo x > /tmp/t && mv /tmp/t pkg/tests/test_x.py'
try rename-dir 'mv pkg/tests pkg/elsewhere'
try rename-ancestor 'mv pkg pkg2'
try chmod 'chmod 666 conftest.py'
try add-beside 'echo y > pkg/tests/new.txt && rm pkg/tests/new.txt'
try edit-candidate 'echo y >> pkg/mod.py && echo z >> pkg/tests/helper.py'
stat -c '%u %a %n' conftest.py pkg/tests/test_x.py pkg/mod.py pkg/tests pkg
grep -c assert pkg/tests/test_x.py`))
	out := res.Stdout.String()
	t.Logf("%s", out)
	for _, refused := range []string{"write", "truncate", "remove", "replace", "rename-dir", "rename-ancestor", "chmod"} {
		if !strings.Contains(out, "refused "+refused+"\n") {
			t.Errorf("the verifier user could %s an evaluator file or its directory", refused)
		}
	}
	for _, allowed := range []string{"add-beside", "edit-candidate"} {
		if !strings.Contains(out, "ALLOWED "+allowed+"\n") {
			t.Errorf("the verifier user could not %s: honest tests do", allowed)
		}
	}
	for _, line := range []string{"0 644 conftest.py", "0 644 pkg/tests/test_x.py", "65532 644 pkg/mod.py",
		"0 1777 pkg/tests", "0 1777 pkg"} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("want %q in the ownership listing", line)
		}
	}
}

// TestSetupRunsBeforeTheEvaluatorsFiles: a setup command finds no evaluator file (it cannot
// read the tests before they run), the command finds every one, and the setup's output goes
// to stderr.
func TestSetupRunsBeforeTheEvaluatorsFiles(t *testing.T) {
	spec := evaluatorSpec(t, `cat pkg/tests/test_x.py conftest.py; cat /tmp/seen`)
	spec.Setup = [][]string{{"sh", "-c", `ls pkg/tests conftest.py > /tmp/seen 2>&1; echo setup-ran`}}
	res := runDocker(t, spec)
	out, errs := res.Stdout.String(), res.Stderr.String()
	if !res.Ran() || res.ExitCode != 0 {
		t.Fatalf("setup exit %d leftover %v exit %d: %s", res.SetupExit, res.SetupLeftover, res.ExitCode, errs)
	}
	if !strings.Contains(out, "def test_x") || !strings.Contains(out, "the evaluator's") {
		t.Errorf("the command did not find the evaluator's files: %q", out)
	}
	if strings.Contains(out, "test_x.py") || !strings.Contains(out, "helper.py") || !strings.Contains(out, "conftest.py") {
		t.Errorf("the setup saw the evaluator's files, or not the candidate's: %q", out)
	}
	if !strings.Contains(errs, "setup-ran") {
		t.Errorf("the setup's output is not on stderr: %q", errs)
	}
}

// TestSetupLeavesNothingRunning: whatever a setup command starts (a double fork, a new session)
// is killed before the evaluator's files are written; the canary it would write once they are
// never appears, and the command runs.
func TestSetupLeavesNothingRunning(t *testing.T) {
	spec := evaluatorSpec(t, `sleep 3; ls /tmp; cat /tmp/canary 2>/dev/null && echo CANARY-WRITTEN; echo done`)
	spec.Setup = [][]string{{"sh", "-c", `
(setsid sh -c 'while [ ! -f conftest.py ]; do sleep 0.05; done; echo planted > /tmp/canary' </dev/null >/dev/null 2>&1 &)
(sh -c 'sleep 0.2; while :; do echo > /tmp/alive; sleep 0.05; done' </dev/null >/dev/null 2>&1 &)
echo started`}}
	res := runDocker(t, spec)
	out := res.Stdout.String()
	if !res.Ran() || !strings.Contains(out, "done") {
		t.Fatalf("setup exit %d leftover %v: %q %q", res.SetupExit, res.SetupLeftover, out, res.Stderr.String())
	}
	if strings.Contains(out, "CANARY-WRITTEN") {
		t.Fatal("a process the setup started lived on and wrote the canary once the evaluator's files were there")
	}
}

// TestSetupFailureStopsTheCheck: the first failing setup command ends the check with its exit
// code; the command never runs.
func TestSetupFailureStopsTheCheck(t *testing.T) {
	spec := evaluatorSpec(t, `echo COMMAND-RAN`)
	spec.Setup = [][]string{{"sh", "-c", "exit 7"}, {"sh", "-c", "echo SECOND-RAN >&2"}}
	res := runDocker(t, spec)
	if res.SetupExit != 7 || res.Ran() || strings.Contains(res.Stdout.String(), "COMMAND-RAN") ||
		strings.Contains(res.Stderr.String(), "SECOND-RAN") {
		t.Fatalf("setup exit %d, stdout %q, stderr %q", res.SetupExit, res.Stdout.String(), res.Stderr.String())
	}
	if !strings.Contains(res.Stderr.String(), "tender: setup command 1 exited 7") {
		t.Errorf("stderr %q does not name the failed setup command", res.Stderr.String())
	}
}

// TestSetupLinkAtAnEvaluatorPath: a setup command that puts a symlink where an evaluator file
// will be written (to have Tender's user write through it) gets it replaced by the file; the
// link's target is never written.
func TestSetupLinkAtAnEvaluatorPath(t *testing.T) {
	spec := evaluatorSpec(t, `ls -l conftest.py; cat conftest.py; cat /tmp/target`)
	spec.Setup = [][]string{{"sh", "-c", `echo original > /tmp/target; ln -s /tmp/target conftest.py`}}
	res := runDocker(t, spec)
	out := res.Stdout.String()
	if !res.Ran() || strings.Contains(out, "->") || !strings.Contains(out, "the evaluator's") ||
		!strings.Contains(out, "original") {
		t.Fatalf("want conftest.py a regular file and /tmp/target untouched: %q %q", out, res.Stderr.String())
	}
}

// TestPlantStepRunsAsTendersUser: the plant step runs as root once the evaluator's files are in
// place, before the command; what it prints becomes the command's standard input, its files
// are gone when the command runs, and a step that fails is an ErrStep (with and without setup).
func TestPlantStepRunsAsTendersUser(t *testing.T) {
	for _, tc := range []struct {
		setup [][]string
		first bool // Spec.StdinFirst
	}{{nil, false}, {[][]string{{"true"}}, false}, {nil, true}, {[][]string{{"true"}}, true}} {
		setup := tc.setup
		spec := evaluatorSpec(t, `cat; echo; id -u; ls -a /tender`)
		spec.Setup, spec.StdinFirst = setup, tc.first
		spec.Plant = &sandbox.Step{
			Command: []string{"sh", "{step}/step.sh"},
			Files: map[string][]byte{"step.sh": []byte(`id -u; cat; test -f pkg/tests/test_x.py && echo evaluator-there` +
				"\necho planted >> pkg/tests/test_x.py\n"), "stdin": []byte("from-input")},
			Stdin: func(out []byte) ([]byte, error) { return []byte("STDIN<" + string(out) + ">"), nil },
		}
		res := runDocker(t, spec)
		out := res.Stdout.String()
		if want := "STDIN<0\nfrom-inputevaluator-there\n>\n65532\n"; !strings.HasPrefix(out, want) ||
			string(res.Plant) != "0\nfrom-inputevaluator-there\n" || strings.Contains(out, sandbox.StepDir) {
			t.Errorf("setup %v: stdout %q, plant %q; want it to start %q, and no %s", setup, out, res.Plant, want,
				sandbox.StepDir)
		}
		spec = evaluatorSpec(t, `echo COMMAND-RAN`)
		spec.Setup, spec.StdinFirst = setup, tc.first
		spec.Plant = &sandbox.Step{Command: []string{"sh", "-c", "exit 4"},
			Stdin: func([]byte) ([]byte, error) { return nil, nil }}
		if _, err := engine.Run(context.Background(), spec); !errors.Is(err, sandbox.ErrStep) {
			t.Errorf("setup %v: a failing step: %v, want ErrStep", setup, err)
		}
		assertRunGone(t, spec.RunID)
		spec.Plant = &sandbox.Step{Command: []string{"true"},
			Stdin: func([]byte) ([]byte, error) { return nil, errors.New("no input made") }}
		if _, err := engine.Run(context.Background(), spec); !errors.Is(err, sandbox.ErrStep) {
			t.Errorf("setup %v: a step whose output makes no input: %v, want ErrStep", setup, err)
		}
		assertRunGone(t, spec.RunID)
	}
}

// TestStdinFirstStartsTheCommandDuringTheStep: with Spec.StdinFirst and no setup commands the
// check's command runs while the plant step does (the step waits, up to a minute, for a
// process of the verifier user, and says whether it saw one), and reads its standard input,
// the step's output, once the step is done and the workspace whole. With setup commands the
// command starts after the step, as it always did (the step looks once).
func TestStdinFirstStartsTheCommandDuringTheStep(t *testing.T) {
	const step = `tries=$1
while [ "$tries" -gt 0 ]; do
  for p in /proc/[0-9]*; do [ "$(stat -c %u "$p" 2>/dev/null)" = 65532 ] && { echo verifier-running; exit 0; }; done
  tries=$((tries - 1)); [ "$tries" -gt 0 ] && sleep 0.1
done
echo no-verifier`
	for _, tc := range []struct {
		setup      [][]string
		tries, saw string
	}{{nil, "600", "verifier-running"}, {[][]string{{"true"}}, "1", "no-verifier"}} {
		spec := evaluatorSpec(t, `cat; echo; ls pkg/tests`)
		spec.Setup, spec.StdinFirst = tc.setup, true
		spec.Plant = &sandbox.Step{
			Command: []string{"sh", "{step}/step.sh", tc.tries},
			Files:   map[string][]byte{"step.sh": []byte(step)},
			Stdin:   func(out []byte) ([]byte, error) { return []byte("STDIN<" + string(out) + ">"), nil },
		}
		res := runDocker(t, spec)
		if want := "STDIN<" + tc.saw + "\n>\nhelper.py\ntest_x.py\n"; res.Stdout.String() != want {
			t.Errorf("setup %v: stdout %q, want %q (stderr %q)", tc.setup, res.Stdout.String(), want, res.Stderr.String())
		}
	}
}
