package grader

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/sandbox"
)

// TestChecksGetPluginsAndIni: every check's bootstrap configuration carries the pair's plugins
// and its ini options as -o KEY=VALUE, in key order; the candidate's files play no part.
func TestChecksGetPluginsAndIni(t *testing.T) {
	p := demoTestPair(t, "p")
	s := writeTestSuite(t, p)
	s.Verifier.Plugins = []string{"pytest_asyncio.plugin", "pytest_timeout"}
	s.Verifier.Ini = map[string]string{"timeout": "15", "asyncio_mode": "auto"}
	var mu sync.Mutex
	got := map[string]pyboot.Config{}
	capture := func(name string) verifier {
		return func(ctx context.Context, c *fakeCall) (*sandbox.Result, error) {
			cfg := c.Proto.Config
			mu.Lock()
			got[name] = cfg
			mu.Unlock()
			return reply()(ctx, c)
		}
	}
	fake := newFakeBackend(t, map[string]verifier{"p/target": capture("target"), "p/regression": capture("regression")})
	if _, err := Grade(context.Background(), s, testOptions(t, fake)); err != nil {
		t.Fatal(err)
	}
	wantOpts := []string{"-o", "asyncio_mode=auto", "-o", "timeout=15"}
	for _, name := range []string{"target", "regression"} {
		cfg := got[name]
		if diff := cmp.Diff(s.Verifier.Plugins, cfg.Plugins); diff != "" {
			t.Errorf("%s plugins (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(wantOpts, cfg.PytestOptions); diff != "" {
			t.Errorf("%s pytest_options (-want +got):\n%s", name, diff)
		}
	}
}

// TestBootstrapAppendsPytestOptions: the bootstrap's pytest_args (boot/main.py, run by the
// host's python3) puts the configuration's pytest_options after every option of Tender's own,
// so none of Tender's -o settings comes after them, and the suite's keys cannot be read as
// anything but -o pairs.
func TestBootstrapAppendsPytestOptions(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the bootstrap's pytest_args: ", err)
	}
	cfg, _ := json.Marshal(map[string]any{"workspace": "/w", "junit": "/j", "plugins": []string{"pytest_mock"},
		"pytest_options": []string{"-o", "asyncio_mode=auto"}})
	script := `import json, sys
ns = {}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), ns)
print(json.dumps(ns["pytest_args"](json.loads(sys.argv[2]))))
`
	out, err := exec.Command(py, "-I", "-c", script, filepath.Join("pyboot", "boot", "main.py"), string(cfg)).Output()
	if err != nil {
		t.Fatalf("pytest_args: %v", err)
	}
	var args []string
	if err := json.Unmarshal(out, &args); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	// pytest-mock's traceback monkeypatch is off (Tender's own -o, after -p pytest_mock): it rewraps
	// the standard library's mock assertions after the tripwires' snapshot.
	want := []string{"-p", "pytest_mock", "-o", "mock_traceback_monkeypatch=false", "-o", "asyncio_mode=auto"}
	if n := len(args); n < len(want) || !slices.Equal(args[n-len(want):], want) ||
		slices.Index(args, "asyncio_mode=auto") != n-1 {
		t.Errorf("pytest_args %q: want Tender's options, then -p pytest_mock and its setting, then -o "+
			"asyncio_mode=auto last", args)
	}
	if !slices.Contains(args, "addopts=") || !slices.Contains(args, "/dev/null") {
		t.Errorf("pytest_args %q lost Tender's own settings", args)
	}
}
