package scratch

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	helperEnv = "SCRATCH_TEST_HELPER_PARENT"
	churnEnv  = "SCRATCH_TEST_CHURN_PARENT"
)

// TestMain lets the test binary act as a grader that makes a directory and waits to be
// killed.
func TestMain(m *testing.M) {
	if parent := os.Getenv(helperEnv); parent != "" {
		dir, err := MkdirTemp(parent, "tender-check-")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(dir)
		select {}
	}
	if parent := os.Getenv(churnEnv); parent != "" {
		churn(parent)
	}
	os.Exit(m.Run())
}

// startHelper starts this test binary as a helper process (see TestMain) with env added, and
// returns it with the first line it printed.
func startHelper(t *testing.T, env string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _ := out.Read(buf)
	return cmd, strings.TrimSpace(string(buf[:n]))
}

// TestSweepAfterKill: a directory made by a process that was then killed with SIGKILL (no
// cleanup could run) is removed by the next sweep, as containers are.
func TestSweepAfterKill(t *testing.T) {
	parent := t.TempDir()
	cmd, dir := startHelper(t, helperEnv+"="+parent)
	if removed, err := Sweep(parent); err != nil || len(removed) != 0 {
		t.Fatalf("while its owner lives, Sweep removed %v (%v)", removed, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	removed, err := Sweep(parent)
	if err != nil || !slices.Equal(removed, []string{dir}) {
		t.Errorf("after SIGKILL Sweep removed %v (%v), want %s", removed, err, dir)
	}
}

// churn makes, fills and removes directories until it is killed, as a grader does with each
// pair's trees.
func churn(parent string) {
	for i := 0; ; i++ {
		dir, err := MkdirTemp(parent, "tender-churn-")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		for j := range 300 {
			sub := filepath.Join(dir, "t", strconv.Itoa(j%7))
			os.MkdirAll(sub, 0o755)
			os.WriteFile(filepath.Join(sub, strconv.Itoa(j)), []byte("x"), 0o644)
		}
		if i == 0 {
			fmt.Println("started")
		}
		if err := Remove(dir); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
	}
}

// TestSweepAfterKillAtAnyMoment kills a process that makes and removes directories at random
// moments, so that some kills land while a directory is being made and some while it is
// being removed; each time the next Sweep must leave nothing behind. (A kill while Remove
// had already deleted the owner file once left a directory no Sweep would take.)
func TestSweepAfterKillAtAnyMoment(t *testing.T) {
	parent := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	for round := range 40 {
		cmd, got := startHelper(t, churnEnv+"="+parent)
		if got != "started" {
			t.Fatalf("round %d: the churning process said %q", round, got)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(20 * time.Millisecond))))
		cmd.Process.Kill()
		cmd.Wait()
		if _, err := Sweep(parent); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if left, _ := os.ReadDir(parent); len(left) > 0 {
			t.Fatalf("round %d: after the kill and a sweep, %s is left", round, left[0].Name())
		}
	}
}

// TestSweepTakesUnfinishedDirectories: an empty directory named by MkdirTemp for a dead
// process, or one holding only an empty owner file, is what a kill leaves mid-make or
// mid-remove, and goes. An empty one named for a live process (this one, mid-make), one with
// a garbled owner file, and a user's own empty tender-demo directory (an --out directory
// before its first record) are not Sweep's to take.
func TestSweepTakesUnfinishedDirectories(t *testing.T) {
	parent := t.TempDir()
	me, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("p%ds1-", 1<<22)
	empty := filepath.Join(parent, "tender-check-"+dead+"123")
	emptyOwner := filepath.Join(parent, "tender-base-"+dead+"456")
	garbled := filepath.Join(parent, "tender-check-"+dead+"789")
	live := filepath.Join(parent, fmt.Sprintf("tender-git-p%ds%s-1", me.Pid, me.Start))
	user := filepath.Join(parent, "tender-demo")
	userNumbered := filepath.Join(parent, "tender-run-42")
	for _, d := range []string{empty, emptyOwner, garbled, live, user, userNumbered} {
		must(t, os.Mkdir(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(emptyOwner, OwnerFile), nil, 0o600))
	must(t, os.WriteFile(filepath.Join(garbled, OwnerFile), []byte("{"), 0o600))
	removed, err := Sweep(parent)
	slices.Sort(removed)
	if want := []string{emptyOwner, empty}; err != nil || !slices.Equal(removed, want) {
		t.Errorf("Sweep removed %v (%v), want %v", removed, err, want)
	}
	if _, err := os.Stat(filepath.Join(garbled, OwnerFile)); err != nil {
		t.Errorf("Sweep touched a directory it cannot judge: %v", err)
	}
	for _, d := range []string{live, user, userNumbered} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("Sweep removed %s: %v", d, err)
		}
	}
}

// TestMkdirTempNamesItsMaker: the name carries the maker, so that an empty leftover can be
// judged without an owner file.
func TestMkdirTempNamesItsMaker(t *testing.T) {
	me, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := MkdirTemp(t.TempDir(), "tender-check-")
	if err != nil {
		t.Fatal(err)
	}
	o, named := nameOwner(filepath.Base(dir), me)
	if !named || o.Pid != me.Pid || o.Start != me.Start || me.Judge(o) != Alive {
		t.Errorf("%s names %+v (named %v), want this process", filepath.Base(dir), o, named)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSweepJudges: only leftovers of dead processes on this host go, mounts inside them first;
// nothing else is touched.
func TestSweepJudges(t *testing.T) {
	parent := t.TempDir()
	me, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	dead := Owner{Host: me.Host, Boot: me.Boot, Pid: 1 << 22, Start: "1"}
	mkdir := func(name string, o *Owner) string {
		dir := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if o != nil {
			if err := writeOwner(dir, *o); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	deadDir := mkdir("tender-check-dead", &dead)
	rebooted := mkdir("tender-base-rebooted", &Owner{Host: me.Host, Boot: "another-boot", Pid: me.Pid, Start: me.Start})
	mounted := mkdir("tender-rootfs-mounted", &dead)
	proc := filepath.Join(mounted, "rootfs", "proc")
	os.MkdirAll(proc, 0o755)
	if err := syscall.Mount("proc", proc, "proc", 0, ""); err != nil {
		t.Fatalf("mount proc (the test needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(proc, syscall.MNT_DETACH) })
	live := mkdir("tender-git-live", &me)
	foreign := mkdir("tender-check-foreign", &Owner{Host: "elsewhere", Boot: me.Boot, Pid: 1, Start: "1"})
	// A run in another pid namespace (a container on this host): its pid 1 is not ours.
	otherNS := mkdir("tender-check-otherns", ptr(otherNamespaceOwner(t, me)))
	// A record from before namespaces were recorded is judged as it always was.
	oldDead := mkdir("tender-check-olddead", &Owner{Host: me.Host, Boot: me.Boot, Pid: 1 << 22, Start: "1"})
	unowned := mkdir("tender-check-unowned", nil)
	notOurs := mkdir("other-dead", &dead)
	target := mkdir("elsewhere-dead", &dead)
	if err := os.Symlink(target, filepath.Join(parent, "tender-link")); err != nil {
		t.Fatal(err)
	}

	if got := OtherNamespace(parent); !slices.Equal(got, []string{otherNS}) {
		t.Errorf("OtherNamespace = %v, want [%s]", got, otherNS)
	}
	removed, err := Sweep(parent)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{deadDir, rebooted, mounted, oldDead}; !slices.Equal(
		removed,
		slices.Sorted(slices.Values(want)),
	) {
		t.Errorf("Sweep removed %v, want %v", removed, want)
	}
	for _, d := range []string{live, foreign, otherNS, unowned, notOurs, target} {
		if _, err := os.Stat(filepath.Join(d, "sub")); err != nil {
			t.Errorf("Sweep touched %s: %v", d, err)
		}
	}
	if m := mountsUnder(mounted); len(m) > 0 {
		t.Errorf("still mounted: %v", m)
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Errorf("the host's /proc suffered: %v", err)
	}
}

func TestMkdirTempNeedsThePrefix(t *testing.T) {
	if _, err := MkdirTemp(t.TempDir(), "check-"); err == nil {
		t.Error("MkdirTemp made a directory Sweep would never look at")
	}
}

func ptr[T any](v T) *T { return &v }

// otherNamespaceOwner is the owner record a process in a new pid namespace writes for itself:
// pid 1 there, with its own start time. In this namespace pid 1 is init, with another start
// time, so judging the record by pid would call a live run dead.
func otherNamespaceOwner(t *testing.T, me Owner) Owner {
	t.Helper()
	out, err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "sh", "-c",
		`echo $$; readlink /proc/self/ns/pid; cut -d" " -f22 /proc/$$/stat`).Output()
	if err != nil {
		t.Fatalf("unshare a pid namespace (the test needs root): %v", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 3 || f[0] != "1" || f[1] == me.PidNS {
		t.Fatalf("unshare printed %q; want pid 1 in a new namespace", out)
	}
	return Owner{Host: me.Host, Boot: me.Boot, Pid: 1, Start: f[2], PidNS: f[1]}
}

func TestJudgePidNamespace(t *testing.T) {
	me, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(me.PidNS, "pid:[") {
		t.Fatalf("Self().PidNS = %q, want the target of /proc/self/ns/pid", me.PidNS)
	}
	other := otherNamespaceOwner(t, me)
	old := other
	old.PidNS = "" // written before the field existed
	gone := Owner{Host: me.Host, Boot: me.Boot, Pid: 1 << 22, Start: "1", PidNS: me.PidNS}
	for _, tt := range []struct {
		name string
		o    Owner
		want Liveness
	}{
		{"this process", me, Alive},
		{"another pid namespace", other, OtherPidNS},
		{"another pid namespace, before a reboot", Owner{Host: me.Host, Boot: "old", Pid: 1, PidNS: other.PidNS}, Dead},
		{"an old record without a namespace", old, Dead},
		{"a gone pid in this namespace", gone, Dead},
	} {
		if got := me.Judge(tt.o); got != tt.want {
			t.Errorf("%s: Judge = %d, want %d", tt.name, got, tt.want)
		}
	}
}
