package pool

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// goodProbe is the probe's output on the development engine (cgroup v1).
const goodProbe = `Uid:	65532	65532	65532	65532
Gid:	65532	65532	65532	65532
CapPrm:	0000000000000000
CapEff:	0000000000000000
CapBnd:	0000000000000009
NoNewPrivs:	1
Seccomp:	2
iface: lo
rootfs: read-only
mem: 100663296
memsw: 100663296
pids: 48
mount: /tender tmpfs rw,nosuid,nodev,relatime,size=1024k,mode=755,uid=65532,gid=65532
mount: /tmp tmpfs rw,nosuid,nodev,relatime,size=1024k,mode=755,uid=65532,gid=65532
mount: /workspace tmpfs rw,nosuid,nodev,relatime,size=1024k,mode=755,uid=65532,gid=65532
end: probe
`

func probeResult(out string) *sandbox.Result {
	w := sandbox.NewCapWriter(1 << 20)
	w.Write([]byte(out))
	return &sandbox.Result{Stdout: w.Capture()}
}

func TestCheckProbe(t *testing.T) {
	if err := CheckProbe(probeResult(goodProbe)); err != nil {
		t.Fatalf("the development engine's probe fails: %v", err)
	}
	v2 := strings.NewReplacer("memsw: 100663296", "swap: 0").Replace(goodProbe)
	if err := CheckProbe(probeResult(v2)); err != nil {
		t.Errorf("a cgroup v2 probe fails: %v", err)
	}
	// Each row is an engine that dropped one property.
	for _, row := range []struct{ name, from, to, want string }{
		{"root user", "Uid:	65532	65532	65532	65532", "Uid:	0	0	0	0", "user:"},
		{"userns root", "Gid:	65532	65532	65532	65532", "Gid:	65532	0	65532	65532", "user:"},
		{"capabilities kept", "CapEff:	0000000000000000", "CapEff:	00000000a80425fb", "capabilities:"},
		{"bounding set kept", "CapBnd:	0000000000000009", "CapBnd:	000001ffffffffff", "capabilities:"},
		{"privileges", "NoNewPrivs:	1", "NoNewPrivs:	0", "no-new-privileges:"},
		{"seccomp off", "Seccomp:	2", "Seccomp:	0", "seccomp:"},
		{"a network", "iface: lo\n", "iface: eth0\niface: lo\n", "network:"},
		{"writable root", "rootfs: read-only", "rootfs: writable", "read-only root:"},
		{"no memory limit", "mem: 100663296", "mem: 9223372036854771712", "memory limit:"},
		{"swap", "memsw: 100663296", "memsw: 201326592", "no swap:"},
		{"no pids limit", "pids: 48", "pids: max", "pids limit:"},
		{"suid tmpfs", "/tmp tmpfs rw,nosuid,nodev,", "/tmp tmpfs rw,nodev,", "tmpfs mounts:"},
		{"workspace on disk", "mount: /workspace tmpfs rw,nosuid,nodev,relatime,size=1024k,mode=755,uid=65532,gid=65532\n", "", "tmpfs mounts:"},
		{"cut short", "end: probe\n", "", "incomplete"},
	} {
		t.Run(row.name, func(t *testing.T) {
			out := strings.Replace(goodProbe, row.from, row.to, 1)
			if out == goodProbe {
				t.Fatalf("row does not change the output")
			}
			err := CheckProbe(probeResult(out))
			if err == nil || !strings.Contains(err.Error(), row.want) {
				t.Errorf("error %v, want one naming %q", err, row.want)
			}
		})
	}
}

func TestProbeTakesOutAWeakEngine(t *testing.T) {
	good := &fake{name: "good", run: func(context.Context, sandbox.Spec) (*sandbox.Result, error) {
		return probeResult(goodProbe), nil
	}}
	weak := &fake{name: "weak", run: func(context.Context, sandbox.Spec) (*sandbox.Result, error) {
		return probeResult(strings.Replace(goodProbe, "rootfs: read-only", "rootfs: writable", 1)), nil
	}}
	p, log := newPool(t, good, weak)
	if err := p.Probe(context.Background(), "r", "img"); err != nil {
		t.Fatal(err)
	}
	if in := p.In(); len(in) != 1 || in[0].Name != "good" {
		t.Errorf("in the pool: %v, want good only", in)
	}
	if !strings.Contains(
		log.String(),
		"engine weak is taken out of the pool (1 of 2 left): its hardening probe failed: hardening not enforced: read-only root",
	) {
		t.Errorf("no clear line for the weak engine:\n%s", log)
	}
}

func sleep() { time.Sleep(time.Millisecond) }
