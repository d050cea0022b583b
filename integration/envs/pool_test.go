package envs

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// TestPoolOverTwoEngines grades gold pairs on the host engine alone, then over a pool of the
// host engine and a second dockerd started for the test (its own socket, data root and
// containerd; it starts with no image, so the pool copies the verifier image to it), then
// again with the second engine SIGKILLed while it runs checks. Every pair must be resolved and
// recorded once each time, and no container may be left on either engine. The pool's runs
// also pass its hardening probe on both engines. TENDER_POOL_PAIRS (6) and
// TENDER_POOL_CONCURRENCY (2) size it; the figures of docs/architecture.md came from 24 and 4.
func TestPoolOverTwoEngines(t *testing.T) {
	pairs, conc := envInt(t, "TENDER_POOL_PAIRS", 6), envInt(t, "TENDER_POOL_CONCURRENCY", 2)
	bin := clitest.BuildTender(t, e2e.RepoRoot)
	kinds := make([]string, pairs)
	for i := range kinds {
		kinds[i] = "gold-fix"
	}
	suite := e2e.OrderedSuite(t, kinds...)
	host := hostEngine()
	second := startDockerd(t)
	flags := []string{"--concurrency", strconv.Itoa(conc)}

	t.Run("one engine", func(t *testing.T) {
		g := poolGrade(t, bin, suite, nil, flags...)
		g.check(t, pairs)
		t.Logf("%d gold pairs on one engine, %d at a time: %s", pairs, conc, g.wall.Round(100*time.Millisecond))
	})
	t.Run("two engines", func(t *testing.T) {
		g := poolGrade(t, bin, suite, nil, append(flags, "--engine", host, "--engine", second.host)...)
		g.check(t, pairs)
		if !strings.Contains(g.stderr, "copied from "+host+" to "+second.host) &&
			!strings.Contains(g.stderr, "copied from "+second.host+" to "+host) {
			t.Logf("no image copy: both engines had the image already")
		}
		if strings.Contains(g.stderr, "taken out") || !strings.Contains(g.stderr, "2 of 2 engine(s) ready") {
			t.Fatalf("an engine was left out (probe or preparation):\n%s", g.stderr)
		}
		shares := g.shares(t, host, second.host)
		if shares[0] == 0 || shares[1] == 0 || shares[0]+shares[1] != 2*pairs {
			t.Errorf("checks per engine %v: want both engines used and %d checks in all", shares, 2*pairs)
		}
		t.Logf("%d gold pairs over two engines, %d at a time: %s; checks per engine %v", pairs, conc,
			g.wall.Round(100*time.Millisecond), shares)
		noContainers(t, g.pid, host, second.host)
	})
	t.Run("one engine killed mid-run", func(t *testing.T) {
		g := poolGrade(t, bin, suite, func(pid int, out string) {
			// Kill it once a third of the pairs are recorded, while it runs a check.
			waitFor(t, "a third of the pairs, and a check running on the second engine", func() bool {
				if e2e.CountLines(filepath.Join(out, report.ResultsJSONL)) < pairs/3 {
					return false
				}
				return slices.ContainsFunc(psTender(t, second.host, pid), func(n string) bool {
					return !strings.Contains(n, "pool_probe")
				})
			})
			second.kill(t)
		}, append(flags, "--engine", host, "--engine", second.host)...)
		g.check(t, pairs)
		for _, want := range []string{"engine " + second.host + " is taken out of the pool (1 of 2 left)",
			"the check runs again on another engine"} {
			if !strings.Contains(g.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, g.stderr)
			}
		}
		shares := g.shares(t, host, second.host)
		if shares[0]+shares[1] != 2*pairs {
			t.Errorf("checks per engine %v: want %d results in all, each once", shares, 2*pairs)
		}
		t.Logf("%d gold pairs, the second engine SIGKILLed mid-run: %s; checks per engine %v", pairs,
			g.wall.Round(100*time.Millisecond), shares)
		second.start(t)
		left := psTender(t, second.host, g.pid)
		gcOut, err := exec.Command(bin, "gc", "--engine", second.host).CombinedOutput()
		if err != nil {
			t.Fatalf("tender gc --engine %s: %v\n%s", second.host, err, gcOut)
		}
		t.Logf("the killed engine, restarted, held %d container(s) of the run; tender gc: %s", len(left),
			strings.TrimSpace(string(gcOut)))
		noContainers(t, g.pid, host, second.host)
	})
}

func envInt(t *testing.T, name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: give a positive number", name, s)
		}
		return n
	}
	return def
}

func hostEngine() string {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return h
	}
	return "unix:///var/run/docker.sock"
}

type graded struct {
	out, stderr string
	pid         int
	wall        time.Duration
	results     []report.PairResult
}

// poolGrade runs the real binary; during, when set, runs while the grade does.
func poolGrade(t *testing.T, bin, suite string, during func(pid int, out string), flags ...string) graded {
	t.Helper()
	g := graded{out: filepath.Join(t.TempDir(), "out")}
	cmd := exec.Command(bin, append([]string{"grade", suite, "--out", g.out}, flags...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	clitest.Must(t, cmd.Start())
	if during != nil {
		during(cmd.Process.Pid, g.out)
	}
	err := cmd.Wait()
	g.pid = cmd.Process.Pid
	g.wall, g.stderr = time.Since(start), stderr.String()
	if err != nil {
		t.Fatalf("grade: %v\n%s", err, g.stderr)
	}
	results, err := report.ReadResults(filepath.Join(g.out, report.ResultsJSONL))
	clitest.Must(t, err)
	g.results = results
	return g
}

// check: every pair recorded once, resolved, and the bundle verifies.
func (g graded) check(t *testing.T, pairs int) {
	t.Helper()
	seen := map[string]int{}
	for _, r := range g.results {
		seen[r.ID]++
		if r.Verdict != report.Resolved {
			t.Errorf("%s: %s %v, want resolved", r.ID, r.Verdict, r.Reasons)
		}
	}
	if len(g.results) != pairs || len(seen) != pairs {
		t.Errorf("%d records of %d pairs, want each of %d once: %v", len(g.results), len(seen), pairs, seen)
	}
	if _, stderr, code := e2e.RunTender(t, "verify", g.out); code != cli.ExitOK {
		t.Errorf("the bundle does not verify:\n%s", stderr)
	}
}

var shareRE = regexp.MustCompile(`checks per engine: (.*)`)

// shares reads the pool's last line: how many checks each engine gave a result for.
func (g graded) shares(t *testing.T, hosts ...string) []int {
	t.Helper()
	m := shareRE.FindStringSubmatch(g.stderr)
	if m == nil {
		t.Fatalf("no share line:\n%s", g.stderr)
	}
	n := make([]int, len(hosts))
	for _, part := range strings.Split(m[1], "; ") {
		for i, h := range hosts {
			if rest, ok := strings.CutPrefix(part, h+" "); ok {
				n[i], _ = strconv.Atoi(strings.Fields(rest)[0])
			}
		}
	}
	return n
}

// dockerd is a second engine on this machine: its own socket, data root, exec root (so its own
// containerd) and no bridge.
type dockerd struct {
	dir, host string
	extra     []string // more dockerd flags
	cmd       *exec.Cmd
	log       *os.File
}

func startDockerd(t *testing.T, extra ...string) *dockerd {
	t.Helper()
	dir, err := os.MkdirTemp("", "pooltest-dockerd-")
	clitest.Must(t, err)
	d := &dockerd{dir: dir, host: "unix://" + filepath.Join(dir, "sock"), extra: extra}
	clitest.Must(t, os.WriteFile(filepath.Join(dir, "daemon.json"), []byte("{}\n"), 0o644))
	d.start(t)
	t.Cleanup(func() {
		d.stop(t)
		// dockerd bind-mounts its data root onto itself (private propagation).
		err := syscall.Unmount(filepath.Join(dir, "data"), syscall.MNT_DETACH)
		if err != nil && !errors.Is(err, syscall.EINVAL) { // EINVAL: not mounted (any more)
			t.Logf("unmounting the second engine's data root: %v", err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("removing %s: %v", dir, err)
		}
	})
	return d
}

func (d *dockerd) start(t *testing.T) {
	t.Helper()
	log, err := os.OpenFile(filepath.Join(d.dir, "log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	clitest.Must(t, err)
	d.log = log
	d.cmd = exec.Command("dockerd", "--config-file", filepath.Join(d.dir, "daemon.json"),
		"--data-root", filepath.Join(d.dir, "data"), "--exec-root", filepath.Join(d.dir, "exec"),
		"--pidfile", filepath.Join(d.dir, "pid"), "-H", d.host, "--bridge=none", "--iptables=false", "--ip-masq=false")
	d.cmd.Args = append(d.cmd.Args, d.extra...)
	d.cmd.Stdout, d.cmd.Stderr = log, log
	clitest.Must(t, d.cmd.Start())
	waitFor(t, "the second dockerd to answer", func() bool {
		return exec.Command("docker", "-H", d.host, "version").Run() == nil
	})
}

// kill SIGKILLs the daemon (its containerd follows it; the containers' shims stay).
func (d *dockerd) kill(t *testing.T) {
	t.Helper()
	clitest.Must(t, d.cmd.Process.Signal(syscall.SIGKILL))
	d.cmd.Wait()
	d.cmd = nil
	d.log.Close()
}

// stop ends the daemon the way an operator does, so it stops its containers.
func (d *dockerd) stop(t *testing.T) {
	if d.cmd == nil {
		return
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Logf("dockerd did not stop within a minute; killing it")
		d.cmd.Process.Kill()
		<-done
	}
	d.cmd = nil
	d.log.Close()
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// psTender lists the names of the Tender containers of process pid on the engine at host,
// running or not. (Other tests may share the host engine.)
func psTender(t *testing.T, host string, pid int) []string {
	t.Helper()
	out, err := exec.Command("docker", "-H", host, "ps", "-a", "--format", "{{.Names}}", "--filter",
		"label=tender.pid="+strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("docker -H %s ps: %v", host, err)
	}
	return strings.Fields(string(out))
}

func noContainers(t *testing.T, pid int, hosts ...string) {
	t.Helper()
	for _, h := range hosts {
		if left := psTender(t, h, pid); len(left) > 0 {
			t.Errorf("%d Tender container(s) left on %s: %v", len(left), h, left)
		}
	}
}
