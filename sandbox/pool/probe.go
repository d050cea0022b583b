package pool

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// probeScript prints, from inside a check's container, what the engine enforces: the
// process's ids, capabilities, no_new_privs and seccomp mode, the network interfaces, whether
// the root filesystem takes a write, the memory, swap and pids limits of its cgroup (v1 and v2
// paths), and the options of the writable mounts. Only shell builtins read them, so any image
// with a POSIX sh will do.
const probeScript = `while IFS= read -r l; do case "$l" in Uid:*|Gid:*|CapEff:*|CapPrm:*|CapBnd:*|NoNewPrivs:*|Seccomp:*) echo "$l";; esac; done < /proc/self/status
for i in /sys/class/net/*; do echo "iface: ${i##*/}"; done
if ( : > /tender-probe ) 2>/dev/null; then echo "rootfs: writable"; else echo "rootfs: read-only"; fi
rd() { [ -r "$2" ] && IFS= read -r v < "$2" && echo "$1: $v"; }
rd mem /sys/fs/cgroup/memory/memory.limit_in_bytes; rd mem /sys/fs/cgroup/memory.max
rd memsw /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes; rd swap /sys/fs/cgroup/memory.swap.max
rd pids /sys/fs/cgroup/pids/pids.max; rd pids /sys/fs/cgroup/pids.max
while read -r dev mnt typ opts rest; do case "$mnt" in /workspace|/tender|/tmp) echo "mount: $mnt $typ $opts";; esac; done < /proc/mounts
echo end: probe`

// probeLimits are the probe check's limits, which it then finds in its cgroup.
var probeLimits = sandbox.Limits{Timeout: time.Minute, Memory: 96 << 20, Pids: 48, DiskBytes: 1 << 20, CPUs: 0.5}

// ProbeSpec is the hardening probe as a check in image, with an empty workspace at dir.
func ProbeSpec(runID, image, dir string) sandbox.Spec {
	return sandbox.Spec{RunID: runID, Name: "pool/probe", Image: image, Workspace: dir,
		Command: []string{"sh", "-c", probeScript}, Limits: probeLimits}
}

// CheckProbe reads the probe's output and names every property the engine failed to
// enforce; nil when all hold.
func CheckProbe(res *sandbox.Result) error {
	if res.ExitCode != 0 || res.TimedOut {
		return fmt.Errorf("the probe did not run: %s, stderr %q", res.Outcome(), res.Stderr.String())
	}
	seen := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(res.Stdout.String()))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			seen[k] = append(seen[k], strings.TrimSpace(v))
		}
	}
	if len(seen["end"]) != 1 {
		return fmt.Errorf("the probe's output is incomplete: %q", res.Stdout.String())
	}
	var bad []string
	for _, c := range probeChecks {
		if why := c.check(seen); why != "" {
			bad = append(bad, c.name+": "+why)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("hardening not enforced: %s", strings.Join(bad, "; "))
	}
	return nil
}

type probeCheck struct {
	name  string
	check func(seen map[string][]string) string // "" when the property holds
}

var probeChecks = []probeCheck{
	{"user", func(s map[string][]string) string {
		uid, gid, _ := strings.Cut(sandbox.VerifierUser, ":")
		return allFields(s, "Uid", uid) + allFields(s, "Gid", gid)
	}},
	{"capabilities", func(s map[string][]string) string {
		return allFields(s, "CapEff", "0000000000000000") + allFields(s, "CapPrm", "0000000000000000") +
			allFields(s, "CapBnd", sandbox.VerifierBoundingCaps)
	}},
	{"no-new-privileges", func(s map[string][]string) string { return one(s, "NoNewPrivs", "1") }},
	{"seccomp", func(s map[string][]string) string { return one(s, "Seccomp", "2") }},
	{"network", func(s map[string][]string) string {
		if strings.Join(s["iface"], ",") != "lo" {
			return fmt.Sprintf("interfaces %q, want only lo", s["iface"])
		}
		return ""
	}},
	{"read-only root", func(s map[string][]string) string { return one(s, "rootfs", "read-only") }},
	{
		"memory limit",
		func(s map[string][]string) string { return one(s, "mem", strconv.FormatInt(probeLimits.Memory, 10)) },
	},
	{"no swap", func(s map[string][]string) string {
		if len(s["swap"]) > 0 {
			return one(s, "swap", "0")
		}
		return one(s, "memsw", strconv.FormatInt(probeLimits.Memory, 10))
	}},
	{
		"pids limit",
		func(s map[string][]string) string { return one(s, "pids", strconv.FormatInt(probeLimits.Pids, 10)) },
	},
	{"tmpfs mounts", checkMounts},
}

func one(s map[string][]string, key, want string) string {
	if v := s[key]; len(v) != 1 || v[0] != want {
		return fmt.Sprintf("%s is %q, want %q", key, v, want)
	}
	return ""
}

// allFields checks a status line of several fields (Uid: real effective saved fs).
func allFields(s map[string][]string, key, want string) string {
	v := s[key]
	if len(v) != 1 {
		return fmt.Sprintf("%s is %q, want %s", key, v, want)
	}
	for _, f := range strings.Fields(v[0]) {
		if f != want {
			return fmt.Sprintf("%s is %q, want %s", key, v[0], want)
		}
	}
	return ""
}

func checkMounts(s map[string][]string) string {
	var bad []string
	for _, want := range []string{"/workspace", "/tender", "/tmp"} {
		found := false
		for _, m := range s["mount"] {
			f := strings.Fields(m)
			if len(f) == 3 && f[0] == want {
				found = true
				opts := "," + f[2] + ","
				if f[1] != "tmpfs" || !strings.Contains(opts, ",nosuid,") || !strings.Contains(opts, ",nodev,") {
					bad = append(bad, m)
				}
			}
		}
		if !found {
			bad = append(bad, want+" not mounted")
		}
	}
	if len(bad) > 0 {
		return fmt.Sprintf("want tmpfs with nosuid,nodev: %q", bad)
	}
	return ""
}

// Probe runs the hardening probe in image on every engine in the pool, side by side, and
// takes out each engine that fails it, naming the property. It returns ErrNoEngine when none
// passes.
func (p *Pool) Probe(ctx context.Context, runID, image string) error {
	dir, err := os.MkdirTemp("", "tender-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	spec := ProbeSpec(runID, image, dir)
	var wg sync.WaitGroup
	for _, m := range p.In() {
		wg.Go(func() {
			res, err := m.Engine.Run(ctx, spec)
			if err == nil {
				err = CheckProbe(res)
			}
			if err != nil && ctx.Err() == nil {
				p.TakeOut(m.Name, "its hardening probe failed: "+oneLine(err))
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(p.In()) == 0 {
		return p.noEngine()
	}
	return nil
}
