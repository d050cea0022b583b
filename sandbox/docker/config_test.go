package docker

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/moby/moby/api/types/container"

	"github.com/tender-grader/tender/sandbox"
)

func TestHostConfigHardening(t *testing.T) {
	lim := sandbox.Limits{Timeout: 1, CPUs: 1.5, Memory: 300 << 20, Pids: 77, DiskBytes: 5 << 20, OutputBytes: 1}
	hc := hostConfig(lim)
	open := "rw,exec,nosuid,nodev,size=5242880,uid=0,gid=0,mode=1777"
	tmp := "rw,exec,nosuid,nodev,size=5242880,uid=65532,gid=65532,mode=0755"
	pids := int64(77)
	yes := true
	want := &container.HostConfig{
		NetworkMode: "none", CapDrop: []string{"ALL"}, CapAdd: []string{"CHOWN", "FOWNER"},
		SecurityOpt: []string{"no-new-privileges"}, ReadonlyRootfs: true, Init: &yes, IpcMode: "private",
		Tmpfs: map[string]string{"/workspace": open, "/tender": open, "/tmp": tmp},
		Resources: container.Resources{
			Memory:     300 << 20,
			MemorySwap: 300 << 20,
			NanoCPUs:   1_500_000_000,
			PidsLimit:  &pids,
		},
		ShmSize:   5 << 20,
		LogConfig: container.LogConfig{Type: "none"},
	}
	if diff := cmp.Diff(want, hc); diff != "" {
		t.Errorf("host config (-want +got):\n%s", diff)
	}
	cfg := containerConfig(
		sandbox.Spec{RunID: "r", Name: "n", Image: "i"},
		owner{Host: "h", Boot: "b", Pid: 9, Start: "5"},
		"s",
	)
	// The main process is Tender's own (root): it unpacks the trees and owns the evaluator's
	// files; every command of the check runs as the verifier user in an exec that names it.
	if cfg.User != tenderUser || !cfg.NetworkDisabled || cfg.Labels[LabelRun] != "r" ||
		cfg.Labels[LabelPid] != "9" ||
		cfg.Labels[LabelSession] != "s" {
		t.Errorf("container config: %+v", cfg)
	}
}

var containerNameOK = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]+$`)

func TestContainerName(t *testing.T) {
	for _, in := range []string{"pair-1/target", "../../etc", "", "ünïcode name!", string(make([]byte, 300))} {
		got := containerName(in)
		if !containerNameOK.MatchString(got) || len(got) > 90 {
			t.Errorf("containerName(%q) = %q", in, got)
		}
	}
}

func TestParseProbe(t *testing.T) {
	v1 := "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n==\nmax 17\n==\n" +
		"Filesystem 1024-blocks Used Available Capacity Mounted on\n" +
		"tmpfs 8192 8192 0 100% /workspace\ntmpfs 8192 4 8188 1% /tender\n==\n134217728\n"
	v2 := "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n==\nmax 0\n==\ntmpfs 1048576 10 1048566 1% /workspace\n==\n"
	tests := []struct {
		name string
		in   string
		want probeResult
	}{
		{"cgroup v1, full disk", v1, probeResult{oomKills: 2, pidsMax: 17, diskFull: true, peak: 128 << 20}},
		{"cgroup v2", v2, probeResult{oomKills: 1}},
		{"nothing readable", "==\n==\n", probeResult{}},
		{"garbage", "oom_kill x\nmax\n", probeResult{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseProbe(tt.in), cmp.AllowUnexported(probeResult{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOwnerJudge(t *testing.T) {
	me, err := currentOwner()
	if err != nil {
		t.Fatal(err)
	}
	parent := os.Getppid()
	parentStart, _ := processStart(parent)
	tests := []struct {
		name string
		o    owner
		want liveness
	}{
		{"this process", me, alive},
		{"a live parent", owner{Host: me.Host, Boot: me.Boot, Pid: parent, Start: parentStart}, alive},
		{
			"pid reused by another process",
			owner{Host: me.Host, Boot: me.Boot, Pid: parent, Start: parentStart + "0"},
			dead,
		},
		{"no such pid", owner{Host: me.Host, Boot: me.Boot, Pid: 1 << 22, Start: "1"}, dead},
		{"before a reboot", owner{Host: me.Host, Boot: "old-boot", Pid: me.Pid, Start: me.Start}, dead},
		{"no pid label", owner{Host: me.Host, Boot: me.Boot}, dead},
		{"another host", owner{Host: "elsewhere", Boot: me.Boot, Pid: me.Pid, Start: me.Start}, foreign},
		// pid 1 of a CI job's container is not this namespace's init: leave its containers alone.
		{"another pid namespace", owner{Host: me.Host, Boot: me.Boot, Pid: 1, Start: "1", PidNS: "pid:[1]"}, otherNS},
		{"a label from before pid namespaces", owner{Host: me.Host, Boot: me.Boot, Pid: 1 << 22, Start: "1"}, dead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := me.judge(tt.o); got != tt.want {
				t.Errorf("judge(%+v) = %d, want %d", tt.o, got, tt.want)
			}
		})
	}
	if got := ownerFromLabels(me.labels("r", "n", "s")); got != me {
		t.Errorf("labels round trip: %+v != %+v", got, me)
	}
	if _, err := strconv.Atoi(me.Start); err != nil {
		t.Errorf("start time %q is not a number", me.Start)
	}
}
