package pyboot

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/tender-grader/tender/internal/hostpython"
	"github.com/tender-grader/tender/report/junit"
)

// These tests run the bootstrap's Python on the host's python3 with pytest (see hostpython): the
// suite of pytests/ over its pure half, and the control lines it writes, read back here by Read.
// They need no verifier and no Docker engine.

// TestBootSource: the verifier's source is every file of boot/, in bootOrder, and nothing else:
// the host tests of pytests/ are not in it.
func TestBootSource(t *testing.T) {
	root, err := fs.ReadDir(bootFiles, ".")
	if err != nil || len(root) != 1 || root[0].Name() != "boot" {
		t.Fatalf("embedded: %v, %v; want boot/ alone", root, err)
	}
	entries, err := fs.ReadDir(bootFiles, "boot")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(bootOrder)), names); diff != "" {
		t.Fatalf("boot/ holds files bootOrder does not join, or the other way round (-bootOrder +boot/):\n%s", diff)
	}
	at := 0
	for _, name := range bootOrder {
		data, _ := bootFiles.ReadFile("boot/" + name)
		i := strings.Index(bootstrap[at:], string(data))
		if i < 0 {
			t.Fatalf("boot/%s is not in the source after the files before it", name)
		}
		at += i + len(data)
	}
	if at != len(bootstrap) || !strings.HasSuffix(bootstrap, "\nmain()\n") || Command()[4] != bootstrap {
		t.Errorf("the source must end with start.py's main() and be the command's -c argument")
	}
	if !strings.HasPrefix(bootstrap, "# Tender's pytest bootstrap.") {
		t.Errorf("the source must begin with main.py's header, which says what runs first")
	}
}

// TestBootstrapHostTests runs pytests/ on the host: sentinel derivation on real test modules, the
// literal, negation and return-guard rules, names, line shifts, the control lines and the
// child's stream, and the checks that hold the joined source together.
func TestBootstrapHostTests(t *testing.T) {
	py := hostpython.Find(t)
	dir := t.TempDir()
	src, report := filepath.Join(dir, "bootstrap.py"), filepath.Join(dir, "junit.xml")
	if err := os.WriteFile(src, []byte(bootstrap), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.DevNull,
		"--rootdir", "pytests", "--basetemp", filepath.Join(dir, "tmp"), "--junitxml", report, "pytests")
	cmd.Env = hostEnv(dir, "TENDER_BOOTSTRAP="+src)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%s -m pytest grader/pyboot/pytests: %v\n%s", py, err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := junit.Parse(data, junit.Options{Runner: junit.RunnerPytest})
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]bool{}
	for _, c := range rep.Cases {
		if c.Status != junit.Passed {
			t.Errorf("%s: %s (no host test may skip)", c.ID, c.Status)
		}
		funcs[strings.SplitN(c.ID, "[", 2)[0]] = true
	}
	// A floor, so that a suite that collects next to nothing cannot pass.
	if len(rep.Cases) < 300 || len(funcs) < 40 {
		t.Errorf("%d cases of %d tests ran; want at least 300 of 40", len(rep.Cases), len(funcs))
	}
	t.Logf("%d host tests (%d cases with their parameters) passed in %s", len(funcs), len(rep.Cases),
		took.Round(time.Millisecond))
}

func hostEnv(home string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LC_ALL=C.UTF-8",
		"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", "PYTHONDONTWRITEBYTECODE=1"}, extra...)
}

// emitControl runs boot/'s own code on the host as the parent and the child use it: the
// sentinels of ids planted in ws with a seeded rng, then the plan line, the hits and outcomes a
// real Tripwires sends through a pipe, the end line a Relay makes of them, and an error line under
// a second nonce.
const emitControl = `
import json, os, random, sys
sys.path.insert(0, sys.argv[1])
import control, sentinels, tripwires

ws, nonce, ids, seed = sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5])
outcomes = json.loads(sys.argv[6])
out = sys.stdout.buffer
emit = lambda kind, obj: out.write(control.control_line(nonce, kind, obj))
cfg = {"workspace": ws, "ids": ids, "twins": 2, "mutants": 3, "near": 6, "negated": 3}
plan = sentinels.make_sentinels(cfg, random.Random(seed))
emit("plan", plan["public"])
r, w = os.pipe()
go = {"tender": os.path.join(ws, ".tender"), "junit": os.path.join(ws, "junit.xml"), "watch": plan["files"],
      "workspace": ws}
wire = tripwires.Tripwires(w, go)
wire.send("write", "report")
wire.send("note:gc", "walked every object of the interpreter")

class Report:
    def __init__(self, nodeid, when, passed):
        self.nodeid, self.when, self.passed = nodeid, when, passed

for nodeid, passed in outcomes:
    for when in ("setup", "call", "teardown"):
        wire.outcome(Report(nodeid, when, passed or when != "call"))
os.close(w)
relay = control.Relay(emit)
relay.run(r)
end, code = relay.end(1 << 8, "feed", True)
emit("end", end)
out.write(control.control_line(nonce + "e", "error", {"stage": "plan", "type": "KeyError"}))
`

// hostRequired are the demo's required tests, as the grader asks for them.
var hostRequired = []string{
	"tests/test_formatting.py::test_group_digits_negative",
	"tests/test_formatting.py::test_format_number_negative_int",
	"tests/test_formatting.py::test_format_number_negative_float",
}

const hostNonce = "9e3a"

// TestBootstrapControlLines: what the bootstrap's Python writes, Read parses, and the plan's
// shifts map each line of the rewritten module back to the module as it was.
func TestBootstrapControlLines(t *testing.T) {
	py := hostpython.Find(t)
	boot, err := filepath.Abs("boot")
	if err != nil {
		t.Fatal(err)
	}
	const file = "tests/test_formatting.py"
	for seed := range 4 {
		t.Run("seed "+strconv.Itoa(seed), func(t *testing.T) {
			ws := hostTree(t)
			before := readLines(t, filepath.Join(ws, file))
			// The second required test fails, the others pass: the report the end line must agree with.
			var outcomes [][]any
			var rep junit.Report
			for i, id := range hostRequired {
				outcomes = append(outcomes, []any{id, i != 1})
				rep.Cases = append(rep.Cases, junit.Case{ID: id, Status: junit.Passed})
				if i == 1 {
					rep.Cases[i].Status = junit.Failed
				}
			}
			ids, _ := json.Marshal(hostRequired)
			results, _ := json.Marshal(outcomes)
			cmd := exec.Command(py, "-I", "-B", "-c", emitControl, boot, ws, hostNonce, string(ids), strconv.Itoa(seed),
				string(results))
			cmd.Env = hostEnv(t.TempDir())
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdout, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			c := Read(stdout, hostNonce)
			if c.Plan == nil || c.End == nil || c.Error != "" {
				t.Fatalf("plan %+v end %+v error %q from:\n%s", c.Plan, c.End, c.Error, stdout)
			}
			checkPlan(t, c.Plan, file, before, readLines(t, filepath.Join(ws, file)))
			want := []Hit{{"write", "report"}, {"note:gc", "walked every object of the interpreter"}}
			if diff := cmp.Diff(want, c.Hits); diff != "" {
				t.Errorf("hits (-want +got):\n%s", diff)
			}
			e := c.End
			if e.Exit != 1 || e.JUnitSHA256 != "feed" || !e.StreamEnded || e.Hits != 2 || e.Outcomes != len(hostRequired) ||
				e.OutcomeDups != 0 || e.PassedSHA256 != passedDigest(&rep) {
				t.Errorf("end %+v; want exit 1, 2 hits, %d outcomes, passed digest %s", e, len(hostRequired),
					passedDigest(&rep))
			}
			for _, s := range c.Plan.Sentinels {
				if got := string(c.Redact([]byte("FAILED " + s.ID + " - x\n"))); got != "FAILED "+file+"::<sentinel> - x\n" {
					t.Errorf("Redact of %s: %q", s.ID, got)
				}
			}
			if got := Read(stdout, hostNonce+"e").Error; got != "stage plan" {
				t.Errorf("error line read as %q", got)
			}
		})
	}
}

// checkPlan: the plan names as many sentinels of each kind as asked, each defined in the module
// as it was rewritten, and OriginalLine maps every line of it to its line before, or to 0 for an
// inserted one.
func checkPlan(t *testing.T, p *Plan, file string, before, after []string) {
	t.Helper()
	kinds := map[string]int{}
	for _, s := range p.Sentinels {
		kinds[s.Kind]++
		name := strings.TrimPrefix(s.ID, file+"::")
		if !slices.Contains(after, "def "+name+"():") {
			t.Errorf("sentinel %s is not defined in %s", s.ID, file)
		}
	}
	if diff := cmp.Diff(map[string]int{Twin: Twins, Mutant: Mutants, Near: Nears, Negated: Negations}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	var seen []int
	for i, line := range after {
		o := p.OriginalLine(file, i+1)
		if o == 0 {
			continue
		}
		if o > len(before) || before[o-1] != line {
			t.Fatalf("line %d %q maps to line %d of the original", i+1, line, o)
		}
		seen = append(seen, o)
	}
	for i, o := range seen {
		if o != i+1 || len(seen) != len(before) {
			t.Fatalf("the rewritten module's lines map to %v, want 1..%d once each, in order", seen, len(before))
		}
	}
}

// hostTree writes the demo project at its base with the evaluator's test patch.
func hostTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"base", "test"} {
		ar, err := txtar.ParseFile(filepath.Join("..", "..", "fixtures", "gen", "src", name+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			path := filepath.Join(dir, f.Name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}
