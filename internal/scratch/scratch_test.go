package scratch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

const helperEnv = "SCRATCH_TEST_HELPER_PARENT"

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
	os.Exit(m.Run())
}

// TestSweepAfterKill: a directory made by a process that was then killed with SIGKILL (no
// cleanup could run) is removed by the next sweep, as containers are.
func TestSweepAfterKill(t *testing.T) {
	parent := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _ := out.Read(buf)
	dir := strings.TrimSpace(string(buf[:n]))
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
	unowned := mkdir("tender-check-unowned", nil)
	notOurs := mkdir("other-dead", &dead)
	target := mkdir("elsewhere-dead", &dead)
	if err := os.Symlink(target, filepath.Join(parent, "tender-link")); err != nil {
		t.Fatal(err)
	}

	removed, err := Sweep(parent)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{deadDir, rebooted, mounted}; !slices.Equal(removed, slices.Sorted(slices.Values(want))) {
		t.Errorf("Sweep removed %v, want %v", removed, want)
	}
	for _, d := range []string{live, foreign, unowned, notOurs, target} {
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
