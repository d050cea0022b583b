package pyboot

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
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
	"github.com/tender-grader/tender/sandbox"
)

// These tests run the bootstrap's Python on the host's python3 with pytest (see hostpython): the
// suite of pytests/ over its pure half, and the control lines it writes, read back here by Read.
// They need no verifier and no Docker engine.

// TestBootSource: the bootstrap's source is the files of bootOrder and the planter's those of
// planterOrder, joined in order, and together they are every file of boot/ and nothing else: the
// host tests of pytests/ are in neither. The bootstrap ends by calling main(), the planter
// plant_main().
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
	both := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(bootOrder), planterOrder...))))
	if diff := cmp.Diff(both, names); diff != "" {
		t.Fatalf("boot/ holds files no order joins, or the other way round (-orders +boot/):\n%s", diff)
	}
	for _, src := range []struct {
		order        []string
		source, tail string
	}{{bootOrder, bootstrap, "\nmain()\n"}, {planterOrder, planter, "\nplant_main()\n"}} {
		at := 0
		for _, name := range src.order {
			data, _ := bootFiles.ReadFile("boot/" + name)
			i := strings.Index(src.source[at:], string(data))
			if i < 0 {
				t.Fatalf("boot/%s is not in the source after the files before it", name)
			}
			at += i + len(data)
		}
		if at != len(src.source) || !strings.HasSuffix(src.source, src.tail) {
			t.Errorf("a source must be its files and end with %q", src.tail)
		}
	}
	if unload(t, Command()[4]) != bootstrap || string(PlantFiles(nil, true)["plant.py"]) != planter {
		t.Errorf("the command and the plant step must carry the sources")
	}
	if !strings.HasPrefix(bootstrap, "# Tender's pytest bootstrap.") {
		t.Errorf("the source must begin with main.py's header, which says what runs first")
	}
}

// unload is the source a loader carries.
func unload(t *testing.T, loader string) string {
	t.Helper()
	_, enc, _ := strings.Cut(loader, "a2b_base64(b'")
	enc, _, _ = strings.Cut(enc, "'")
	z, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	r, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	src, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// TestCommandFitsOneArgument: Linux refuses to exec a program with an argument string longer
// than MAX_ARG_STRLEN (128 KiB: "argument list too long"). Every string of the verifier's argv,
// and the argv quoted into one sh -c string as a suite's post commands quote it, keeps half of
// that free. The loader runs on the host's python3 and reaches the bootstrap's first stage:
// with nothing on its standard input, it reports that the configuration did not parse.
func TestCommandFitsOneArgument(t *testing.T) {
	const maxArgStrlen = 32 * 4096
	for _, arg := range append(Command(), sandbox.ShellQuote(Command())) {
		if len(arg) > maxArgStrlen/2 {
			t.Errorf("an argument string of the command is %d bytes; keep it under %d", len(arg), maxArgStrlen/2)
		}
	}
	py := hostpython.Find(t)
	cmd := exec.Command(py, Command()[1:]...)
	cmd.Env = hostEnv(t.TempDir())
	cmd.Stdin = strings.NewReader("")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "TENDER-CONTROL") || !strings.Contains(string(out), `"stage":"config"`) {
		t.Errorf("the loader did not run the bootstrap to its configuration stage:\n%s", out)
	}
}

// TestBootstrapHostTests runs pytests/ on the host: sentinel derivation on real test modules, the
// literal, negation and return-guard rules, names, line shifts, the control lines and the
// child's stream, and the checks that hold the joined source together ("rules", about 13 s on an
// idle two-core machine: the loop to run while changing the bootstrap); and the same sentinels
// planted into every style of the honest corpus and run by pytest ("honest-styles", the styles
// side by side, about a minute).
func TestBootstrapHostTests(t *testing.T) {
	py := hostpython.Find(t)
	dir := t.TempDir()
	src, plant := filepath.Join(dir, "bootstrap.py"), filepath.Join(dir, "planter.py")
	if err := os.WriteFile(src, []byte(bootstrap), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plant, []byte(planter), 0o644); err != nil {
		t.Fatal(err)
	}
	const honest = "pytests/test_sentinels_honest.py"
	for _, tc := range []struct {
		name       string
		args       []string
		min, funcs int // floors, so that a run that collects next to nothing cannot pass
	}{
		{"rules", []string{"--ignore", honest, "pytests"}, 300, 40},
		{"honest-styles", []string{honest}, 50, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runHostTests(t, py, []string{"TENDER_BOOTSTRAP=" + src, "TENDER_PLANTER=" + plant}, tc.args, tc.min,
				tc.funcs)
		})
	}
}

// runHostTests runs the host's pytest over args and wants every case passed, and at least min
// cases of funcs test functions.
func runHostTests(t *testing.T, py string, env, args []string, min, funcs int) {
	dir := t.TempDir()
	report := filepath.Join(dir, "junit.xml")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	argv := append([]string{"-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.DevNull,
		"--rootdir", "pytests", "--basetemp", filepath.Join(dir, "tmp"), "--junitxml", report}, args...)
	cmd := exec.CommandContext(ctx, py, argv...)
	cmd.Env = hostEnv(dir, env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%s -m pytest %s: %v\n%s", py, strings.Join(args, " "), err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := junit.Parse(data, junit.Options{Runner: junit.RunnerPytest})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range rep.Cases {
		if c.Status != junit.Passed {
			t.Errorf("%s: %s (no host test may skip)", c.ID, c.Status)
		}
		seen[strings.SplitN(c.ID, "[", 2)[0]] = true
	}
	if len(rep.Cases) < min || len(seen) < funcs {
		t.Errorf("%d cases of %d tests ran; want at least %d of %d", len(rep.Cases), len(seen), min, funcs)
	}
	t.Logf("%d host tests (%d cases with their parameters) passed in %s", len(seen), len(rep.Cases),
		took.Round(time.Millisecond))
}

func hostEnv(home string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LC_ALL=C.UTF-8",
		"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", "PYTHONDONTWRITEBYTECODE=1"}, extra...)
}

// emitControl runs boot/'s own code on the host as the planter, the parent and the child use
// it: the sentinels and held sites of ids planted in ws with a seeded rng and the plan written
// as the planter writes it (first line), then the start line, the hits and outcomes a real
// Tripwires sends through a pipe, the end line a Relay makes of them, and an error line under a
// second nonce.
const emitControl = `
import json, os, random, sys
sys.path.insert(0, sys.argv[1])
import control, sentinels, tripwires

ws, nonce, ids, seed = sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5])
outcomes = json.loads(sys.argv[6])
out = sys.stdout.buffer
emit = lambda kind, obj: out.write(control.control_line(nonce, kind, obj))
cfg = {"workspace": ws, "ids": ids, "twins": 1, "negated": 1}
plan = sentinels.make_sentinels(cfg, random.Random(seed))
out.write(json.dumps(plan, sort_keys=True).encode() + b"\n")
emit("start", {"v": 2})
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
out.write(control.control_line(nonce + "e", "error", {"stage": "config", "type": "KeyError"}))
`

// hostRequired are the demo's required tests, as the grader asks for them.
var hostRequired = []string{
	"tests/test_formatting.py::test_group_digits_negative",
	"tests/test_formatting.py::test_format_number_negative_int",
	"tests/test_formatting.py::test_format_number_negative_float",
}

const hostNonce = "9e3a"

// TestBootstrapControlLines: what the planter and the bootstrap's Python write, ParsePlant and
// Read parse, and the plan's shifts map each line of the rewritten module back to the module as
// it was.
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
			first, rest, _ := strings.Cut(string(stdout), "\n")
			planted, err := ParsePlant([]byte(first))
			if err != nil || planted.Plan == nil {
				t.Fatalf("the planter's output: %v\n%s", err, first)
			}
			c := Read([]byte(rest), hostNonce)
			c.Plan = planted.Plan
			if !c.Started || c.End == nil || c.Error != "" {
				t.Fatalf("started %v end %+v error %q from:\n%s", c.Started, c.End, c.Error, rest)
			}
			checkPlan(t, c.Plan, file, before, readLines(t, filepath.Join(ws, file)))
			want := []Hit{{"write", "report"}, {"note:gc", "walked every object of the interpreter"}}
			if diff := cmp.Diff(want, c.Hits); diff != "" {
				t.Errorf("hits (-want +got):\n%s", diff)
			}
			e := c.End
			if e.Exit != 1 || e.JUnitSHA256 != "feed" || !e.StreamEnded || e.Hits != 2 || e.Outcomes != len(hostRequired) ||
				e.OutcomeDups != 0 ||
				e.PassedSHA256 != passedDigest(&rep) {
				t.Errorf("end %+v; want exit 1, 2 hits, %d outcomes, passed digest %s", e, len(hostRequired),
					passedDigest(&rep))
			}
			if got := Read([]byte(rest), hostNonce+"e").Error; got != "stage config" {
				t.Errorf("error line read as %q", got)
			}
		})
	}
}

// checkPlan: each of the demo's required tests compares with literals only, at its top level,
// so each is wholly held, and has no copy; the line of each required test is its def; and
// OriginalLine maps every line of the module to its line before, the same but for a held
// assertion, or to 0 for an inserted one.
func checkPlan(t *testing.T, p *Plan, file string, before, after []string) {
	t.Helper()
	if len(p.Sentinels) != 0 {
		t.Errorf("sentinels %+v: a wholly held test needs no copy", p.Sentinels)
	}
	for _, id := range hostRequired {
		if h := p.Held[id]; len(h.Tokens) == 0 || !h.Full {
			t.Errorf("%s: held %+v, want its assertions held, wholly", id, h)
		}
	}
	if len(p.Lines) != 3 {
		t.Errorf("lines %v: want one for each required test", p.Lines)
	}
	for id, line := range p.Lines {
		if name := strings.TrimPrefix(id, file+"::"); line < 1 || line > len(before) ||
			before[line-1] != "def "+name+"():" {
			t.Errorf("%s: line %d is not its def", id, line)
		}
	}
	var seen []int
	for i, line := range after {
		o := p.OriginalLine(file, i+1)
		if o == 0 {
			continue
		}
		held := strings.Contains(line, "assert _tender_held('") && strings.HasPrefix(strings.TrimSpace(before[o-1]), "assert ")
		if o > len(before) || before[o-1] != line && !held {
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
