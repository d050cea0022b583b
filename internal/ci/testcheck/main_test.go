package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The streams in testdata were recorded from `go test -json -count=1` over a throwaway module,
// example.test/rec: pure (4 tests, 2 of them subtests), nofiles (no test files), skipper (a
// t.Skip), failer (a failing subtest), broken (a test that does not compile), and three
// end-to-end packages: e2e/up (passes), e2e/down (its TestMain prints a FAIL line and exits
// 1, as integration/'s do without an engine) and e2e/idle (its TestMain returns without
// running a test).
const e2e = "example.test/rec/e2e/..."

func TestRecordedStreams(t *testing.T) {
	for _, tc := range []struct {
		file     string
		cut      int      // lines cut from the end of the stream
		code     int      // exit code
		problems []string // the FAIL lines on stderr, each in part, in order
		stdout   []string // lines on stdout, each in part
	}{
		{file: "green.jsonl", stdout: []string{
			"--- PASS: TestAdd (", "--- PASS: TestTable/one (", "ok  \texample.test/rec/pure\t", "\n    4 passed, 0 failed, 0 skipped\n",
			"?   \texample.test/rec/nofiles\t[no test files]",
			"5 passed, 0 failed, 0 skipped in 3 packages (1 without test files)"}},
		{file: "skip.jsonl", code: 1,
			problems: []string{"example.test/rec/skipper: 1 test(s) skipped: TestNeedsEngine; no test may skip"},
			stdout: []string{"skip_test.go:8: no Docker engine", "--- SKIP: TestNeedsEngine",
				"1 passed, 0 failed, 1 skipped"}},
		{file: "fail.jsonl", code: 1,
			problems: []string{"example.test/rec/failer: 2 test(s) failed: TestVerdicts/wrong-fix, TestVerdicts"},
			stdout: []string{"fail_test.go:10: verdict resolved, want unresolved", "--- FAIL: TestVerdicts/wrong-fix",
				"FAIL\texample.test/rec/failer\t", "2 passed, 2 failed, 0 skipped"}},
		{file: "engine-down.jsonl", code: 1,
			problems: []string{"example.test/rec/e2e/down: failed outside its tests (TestMain, a panic or the timeout): " +
				"FAIL: e2e/down: these end-to-end tests need a running Docker engine"},
			stdout: []string{"FAIL: e2e/down: these end-to-end tests need a running Docker engine: cannot connect",
				"FAIL\texample.test/rec/e2e/down\t"}},
		{file: "idle.jsonl", code: 1, problems: []string{"example.test/rec/e2e/idle: an end-to-end package ran no test"},
			stdout: []string{"ok  \texample.test/rec/e2e/idle\t", "0 passed, 0 failed, 0 skipped"}},
		{file: "no-e2e.jsonl", code: 1,
			problems: []string{
				"no package of -e2e example.test/rec/e2e/... is in the stream: the end-to-end tests did not run"}},
		{file: "build-failed.jsonl", code: 1,
			problems: []string{"example.test/rec/broken: the test binary did not build"},
			stdout: []string{`broken_test.go:6:14: cannot use "not a number"`,
				"FAIL\texample.test/rec/broken [build failed]"}},
		{file: "green.jsonl", cut: 3, code: 1,
			problems: []string{"example.test/rec/e2e/up: started and never finished"}},
	} {
		t.Run(strings.TrimSuffix(tc.file, ".jsonl")+map[bool]string{true: ", cut"}[tc.cut > 0], func(t *testing.T) {
			stream := recorded(t, tc.file, tc.cut)
			var stdout, stderr strings.Builder
			code := run([]string{"-e2e", e2e}, strings.NewReader(stream), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, &stdout, &stderr)
			}
			got := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if stderr.Len() == 0 {
				got = nil
			}
			if len(got) != len(tc.problems) {
				t.Fatalf("%d FAIL line(s), want %d %q:\n%s", len(got), len(tc.problems), tc.problems, &stderr)
			}
			for i, want := range tc.problems {
				if !strings.HasPrefix(got[i], "testcheck: FAIL: "+want) {
					t.Errorf("FAIL line %d is %q, want it to start %q", i+1, got[i], "testcheck: FAIL: "+want)
				}
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, &stdout)
				}
			}
		})
	}
}

// TestOnlyTheE2EPackagesMustRunTests: a package outside -e2e may run no test (a main package
// with only an example, say); one inside may not.
func TestOnlyTheE2EPackagesMustRunTests(t *testing.T) {
	stream := recorded(t, "idle.jsonl", 0)
	var stdout, stderr strings.Builder
	if code := run([]string{"-e2e", "example.test/rec/e2e/up"}, strings.NewReader(stream), &stdout, &stderr); code != 0 {
		t.Errorf("exit %d with e2e/idle outside -e2e, want 0:\n%s", code, &stderr)
	}
}

// TestNotJSONPassesThrough: what the go command writes that is not an event (a download
// note, a plain build error from an older go) is shown, and decides nothing.
func TestNotJSONPassesThrough(t *testing.T) {
	stream := "go: downloading example.test/dep v1.0.0\n" + recorded(t, "green.jsonl", 0)
	var stdout, stderr strings.Builder
	if code := run([]string{"-e2e", e2e}, strings.NewReader(stream), &stdout, &stderr); code != 0 {
		t.Errorf("exit %d, want 0:\n%s", code, &stderr)
	}
	if !strings.HasPrefix(stdout.String(), "go: downloading example.test/dep v1.0.0\n") {
		t.Errorf("stdout does not start with the line that is not JSON:\n%s", &stdout)
	}
}

func TestEmptyStreamFails(t *testing.T) {
	var stdout, stderr strings.Builder
	code := run(nil, strings.NewReader(""), &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "holds no package") {
		t.Errorf("exit %d, want 1 and a FAIL line saying the stream holds no package:\n%s", code, &stderr)
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-e2e", "./integration/..."}, {"-e2e", ""}, {"results.json"}, {"-v"}} {
		var stdout, stderr strings.Builder
		if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, want 2 with a message:\n%s", args, code, &stderr)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"m/integration/...", "m/integration", true},
		{"m/integration/...", "m/integration/cli", true},
		{"m/integration/...", "m/integrationx", false},
		{"m/sandbox/docker", "m/sandbox/docker", true},
		{"m/sandbox/docker", "m/sandbox/docker/sub", false},
	} {
		if got := match(tc.pattern, tc.path); got != tc.want {
			t.Errorf("match(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

// recorded reads a stream of testdata without its last cut lines.
func recorded(t *testing.T, name string, cut int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	if cut >= len(lines) {
		t.Fatalf("%s has %d lines; cannot cut %d", name, len(lines), cut)
	}
	return strings.Join(lines[:len(lines)-cut], "")
}
