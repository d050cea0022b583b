package grader

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/internal/scratch"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/sandbox"
)

// The baseline of an instance is pytest's collection of the base commit with the test patch
// (and the hidden assets, so the environment is the checks' own) and no candidate code. It
// answers two questions no candidate can influence: what a truncated test ID names, and
// whether the environment can collect the tests at all. It runs once per instance in a run
// (key: repository, base commit, test patch, assets, environment) and every pair of the
// instance gets a copy in its bundle directory.
type baseline struct {
	Key        string   `json:"key"`
	ImageID    string   `json:"image_id,omitempty"`
	Exit       int      `json:"exit"` // pytest's status for --collect-only; -1 when it never reported
	Collected  []string `json:"collected"`
	Absent     []string `json:"absent,omitempty"` // test files the required IDs name that the tree lacks
	FirstError string   `json:"first_error,omitempty"`
	WallMillis int64    `json:"wall_ms"`
}

// broken: the tests cannot be collected without any candidate code.
func (b *baseline) broken() bool { return b.Exit != 0 }

// collectScript runs pytest --collect-only with the settings of Tender's bootstrap (its own
// -c, rootdir, importlib mode, no plugin autoload, its plugins and ini options, and sys.path as
// the checks have it, appended after pytest is imported: the test files' base directories
// (testDirs), the suite's python_path, the workspace) and reports the collected node IDs on a
// nonce-tagged stdout line.
const collectScript = `import json, os, sys
ctrl = os.dup(1)
os.dup2(2, 1)
cfg = json.loads(sys.stdin.read())
ws = os.environ["TENDER_WORKSPACE"]
try:
    drop_project_copy(cfg["project_copy"])
except RuntimeError as e:
    os.write(ctrl, ("TENDER-COLLECT %s %s\n" % (cfg["nonce"], json.dumps({"exit": 3, "ids": [], "errors": ["E   %s" % e]}))).encode())
    os._exit(0)
import pytest
for k in list(os.environ):
    if (k.startswith("PYTEST_") or k.startswith("PYTHON")) and k not in ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTHONDONTWRITEBYTECODE"):
        del os.environ[k]
for p in [os.path.join(ws, p) for p in cfg["test_dirs"] + cfg["python_path"]] + [ws]:
    if p not in sys.path:
        sys.path.append(p)
class Collector:
    def __init__(self):
        self.ids, self.errors = [], []
    def pytest_collection_finish(self, session):
        self.ids = [i.nodeid for i in session.items]
    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(str(report.longrepr))
c = Collector()
os.chdir(ws)
args = ["-c", os.devnull, "--rootdir", ws, "-o", "addopts=", "-p", "no:cacheprovider", "--import-mode=importlib",
        "--collect-only", "-q", "--color=no"]
for p in cfg["plugins"]:
    args += ["-p", p]
args += cfg["pytest_options"]
try:
    code = int(pytest.main(args + cfg["paths"], plugins=[c]))
except BaseException as e:
    code, c.errors = 3, c.errors + ["E   %s: %s" % (type(e).__name__, e)]
os.write(ctrl, ("TENDER-COLLECT %s %s\n" % (cfg["nonce"], json.dumps({"exit": code, "ids": c.ids, "errors": c.errors[:5]}))).encode())
os._exit(0)
`

// collectSource is collectScript with the bootstrap's drop_project_copy before it, so the
// collection imports the workspace's code where the checks do.
var collectSource = pyboot.ProjectCopySource() + "\n\n" + collectScript

// baselineRuns holds the baselines of the runs in this process, by run ID and key: the cache
// lives as long as the run, and nothing from a candidate takes part in its key.
var baselineRuns = struct {
	sync.Mutex
	m map[string]*baselineOnce
}{m: map[string]*baselineOnce{}}

// baselineOnce runs one baseline at a time; a failure to run it is not kept, so the next
// pair of the instance tries again.
type baselineOnce struct {
	mu  sync.Mutex
	b   *baseline
	log []byte
}

// baselineKey is everything the collection depends on.
func (pl *pipeline) baselineKey() string {
	v := pl.verifier()
	key := []any{pl.pair.Repository, pl.executed, pl.pair.Digests.TestPatch, pl.pair.Digests.Assets,
		v.Image, v.PythonPath, v.Setup, v.Env, v.PassEnv, v.Plugins, v.Ini, collectPaths(pl.pair)}
	if v.Python != "" || v.ProjectCopy != "" { // only then: the keys of other suites stay as they were
		key = append(key, v.Python, v.ProjectCopy)
	}
	doc, _ := json.Marshal(key)
	return sha(doc)
}

// sha is the hex SHA-256 of a key's encoding.
func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// verifier is the verifier of this pair.
func (pl *pipeline) verifier() suite.Verifier { return pl.suite.VerifierFor(pl.pair) }

// baseline returns the instance's baseline, running it on first use, and copies it into the
// pair's bundle directory.
func (pl *pipeline) baseline(ctx context.Context) (*baseline, error) {
	key := pl.baselineKey()
	baselineRuns.Lock()
	e, ok := baselineRuns.m[pl.opts.RunID+"/"+key]
	if !ok {
		e = &baselineOnce{}
		baselineRuns.m[pl.opts.RunID+"/"+key] = e
	}
	baselineRuns.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.b == nil {
		b, log, err := pl.collect(ctx, key)
		if err != nil {
			return nil, err
		}
		e.b, e.log = b, log
	}
	if err := pl.saveBaseline(e.b, e.log); err != nil {
		return nil, stop(report.CodeWorkspaceFailed, err.Error())
	}
	return e.b, nil
}

// collect runs the collection in a fresh verifier.
func (pl *pipeline) collect(ctx context.Context, key string) (*baseline, []byte, error) {
	root, err := scratch.MkdirTemp(pl.opts.WorkDir, "tender-check-")
	if err != nil {
		return nil, nil, infraStop(report.CodeWorkspaceFailed, err)
	}
	defer scratch.Remove(root)
	tree, support := filepath.Join(root, "workspace"), filepath.Join(root, "support")
	fp, err := pl.repo.repo.Materialize(ctx, pl.executed, tree)
	if err != nil {
		if errors.Is(err, gitsafe.ErrUnsafeTree) {
			return nil, nil, stop(report.CodeUnsafeTree, err.Error())
		}
		return nil, nil, infraStop(report.CodeWorkspaceFailed, err)
	}
	links := linkTable(fp)
	if err := pl.addEvaluatorFiles(ctx, tree, support, links); err != nil {
		return nil, nil, err
	}
	b := &baseline{Key: key, Exit: -1}
	var paths []string
	for _, p := range collectPaths(pl.pair) {
		if _, err := os.Stat(filepath.Join(tree, filepath.FromSlash(p))); err != nil {
			b.Absent = append(b.Absent, p)
			continue
		}
		paths = append(paths, p)
	}
	v := pl.verifier()
	nonce := make([]byte, 16)
	rand.Read(nonce)
	cfg, _ := json.Marshal(map[string]any{"nonce": hex.EncodeToString(nonce), "python_path": orEmpty(v.PythonPath),
		"test_dirs": orEmpty(testDirs(tree, slices.Concat(pl.pair.FailToPass, pl.pair.PassToPass))),
		"plugins":   orEmpty(v.Plugins), "pytest_options": orEmpty(v.PytestOptions()), "paths": orEmpty(paths),
		"project_copy": v.ProjectCopy})
	spec := sandbox.Spec{
		RunID:     pl.opts.RunID,
		Name:      pl.pair.ID + "/baseline",
		Image:     v.Image,
		Workspace: tree,
		Links:     links,
		Support:   support,
		Command:   withSurfaces(v, []string{v.Interpreter(), "-I", "-B", "-c", collectSource}),
		Stdin:     cfg,
		Env:       verifierEnv(v, pl.opts.Getenv),
		Limits: sandbox.Limits{
			Timeout:     v.Timeout,
			CPUs:        v.CPUs,
			Memory:      v.Memory,
			Pids:        v.Pids,
			DiskBytes:   v.Disk,
			OutputBytes: maxLogBytes,
		},
	}
	res, err := pl.opts.Backend.Run(ctx, spec)
	if err != nil {
		return nil, nil, stop(report.CodeVerifierFailed, "the baseline collection: "+err.Error())
	}
	if res.Killed {
		return nil, nil, stop(report.CodeVerifierKilled,
			"the baseline collection's verifier died of a signal Tender did not send; no verdict")
	}
	b.ImageID, b.WallMillis = res.ImageID, res.Wall.Milliseconds()
	stdout, stderr := res.Stdout.String(), res.Stderr.String()
	errs := readCollect(stdout, hex.EncodeToString(nonce), b)
	switch {
	case res.TimedOut:
		b.Exit, b.FirstError = -1, fmt.Sprintf("the collection did not finish within %s", v.Timeout)
	case b.Exit != 0:
		b.FirstError = firstErrorLine(append(errs, stderr))
	}
	log := fmt.Sprintf(
		"baseline collection (base commit %s with the test patch, no candidate code)\nkey: %s\nexit code: %d\npytest status: %d\nwall: %s\npaths: %s\nabsent: %s\n\n--- stdout (%d bytes) ---\n%s\n--- stderr (%d bytes) ---\n%s\n",
		pl.executed,
		key,
		res.ExitCode,
		b.Exit,
		res.Wall,
		strings.Join(paths, " "),
		strings.Join(b.Absent, " "),
		res.Stdout.Total,
		stdout,
		res.Stderr.Total,
		stderr,
	)
	return b, []byte(log), nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// readCollect reads the collector's line (the one that carries the nonce) into b, and returns
// the collection errors it reported.
func readCollect(stdout, nonce string, b *baseline) []string {
	prefix := "TENDER-COLLECT " + nonce + " "
	for _, line := range strings.Split(stdout, "\n") {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		var msg struct {
			Exit   int      `json:"exit"`
			IDs    []string `json:"ids"`
			Errors []string `json:"errors"`
		}
		if json.Unmarshal([]byte(rest), &msg) == nil {
			b.Exit, b.Collected = msg.Exit, msg.IDs
			return msg.Errors
		}
	}
	return nil
}

var (
	rePytestE   = regexp.MustCompile(`(?m)^E\s+(\S.*)$`)
	reErrorWord = regexp.MustCompile(`(?m)^(\S*(Error|Exception)\b.*)$`)
)

// firstErrorLine is the line that says why the collection failed: pytest's first "E   " line,
// or else the first line naming an error; capped.
func firstErrorLine(texts []string) string {
	for _, re := range []*regexp.Regexp{rePytestE, reErrorWord} {
		for _, t := range texts {
			if g := re.FindStringSubmatch(t); g != nil {
				return capLine(strings.TrimSpace(g[1]))
			}
		}
	}
	for _, t := range texts {
		for _, line := range strings.Split(t, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				return capLine(line)
			}
		}
	}
	return "pytest reported no cause"
}

// maxLine caps one line of Tender's output that quotes a runner.
const maxLine = 200

func capLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > maxLine {
		return string(r[:maxLine]) + "…"
	}
	return s
}

// collectPaths are the test files (or directories) the pair's required IDs name.
func collectPaths(p *suite.Pair) []string {
	var out []string
	for _, id := range slices.Concat(p.FailToPass, p.PassToPass) {
		file, _, _ := strings.Cut(id, "::")
		if file = path.Clean(file); filepath.IsLocal(file) && !slices.Contains(out, file) {
			out = append(out, file)
		}
	}
	slices.Sort(out)
	return out
}

// testDirs are the directories the checks' bootstrap puts on sys.path for the test files ids
// name, in order, workspace-relative: for each, the first directory above it that is not a
// package, as pytest's append mode would (basedir in pyboot/boot/sentinels.py; the two agree by
// TestTestDirsAgreeWithTheBootstrap). The workspace itself is not listed: it comes last anyway.
// Without them a test's `from common import x` (a sibling helper) works in the checks and fails
// in the baseline.
func testDirs(tree string, ids []string) []string {
	var out []string
	for _, id := range ids {
		file, _, _ := strings.Cut(id, "::")
		if !strings.HasSuffix(file, ".py") || !filepath.IsLocal(file) {
			continue
		}
		d := path.Dir(path.Clean(file))
		for d != "." && exists(filepath.Join(tree, filepath.FromSlash(d), "__init__.py")) {
			d = path.Dir(d)
		}
		if d != "." && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// saveBaseline writes the baseline and its log into the pair's bundle directory.
func (pl *pipeline) saveBaseline(b *baseline, log []byte) error {
	if pl.opts.LogDir == "" {
		return nil
	}
	doc, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{report.BaselineJSON(pl.pair.ID): append(doc, '\n'), report.BaselineLog(pl.pair.ID): log} {
		p := filepath.Join(pl.opts.LogDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// cause says why the environment is broken, in one line. With hidden assets in the workspace
// the runner's words could quote them, so only Tender's words are given; the log has the rest.
func (b *baseline) cause(pl *pipeline) string {
	where := ""
	if pl.opts.LogDir != "" {
		where = "; see " + report.BaselineLog(pl.pair.ID)
	}
	first := b.FirstError
	if len(pl.pair.Assets) > 0 {
		first = "the error is in the log (the workspace held hidden assets)"
	}
	hint := ""
	if line, python := missingName(b.FirstError); line != "" {
		hint = mismatchWords(python) + "; "
	}
	return fmt.Sprintf(
		"the tests cannot be collected on the base commit with the test patch alone (pytest status %d): %s%s%s",
		b.Exit,
		hint,
		first,
		where,
	)
}
