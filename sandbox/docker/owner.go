package docker

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// owner identifies the grader process that created a container, so a later sweep can tell
// whether that process is still alive. The pid alone is not enough: pids are reused, and a
// pid means nothing on another host or after a reboot. The process start time (in clock
// ticks since boot, from /proc/<pid>/stat) pins the pid to one process.
type owner struct {
	Host  string
	Boot  string
	Pid   int
	Start string
}

// Labels carried by every container.
const (
	LabelRun   = "tender.run"
	LabelName  = "tender.name"
	LabelHost  = "tender.host"
	LabelBoot  = "tender.boot"
	LabelPid   = "tender.pid"
	LabelStart = "tender.pidstart"
	// LabelSession is unique to one Backend value: Close removes by it.
	LabelSession = "tender.session"
)

func currentOwner() (owner, error) {
	host, err := os.Hostname()
	if err != nil {
		return owner{}, fmt.Errorf("sandbox: hostname: %w", err)
	}
	boot, err := bootID()
	if err != nil {
		return owner{}, err
	}
	start, err := processStart(os.Getpid())
	if err != nil {
		return owner{}, fmt.Errorf("sandbox: own start time: %w", err)
	}
	return owner{Host: host, Boot: boot, Pid: os.Getpid(), Start: start}, nil
}

func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("sandbox: boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// processStart returns field 22 of /proc/<pid>/stat, the start time in clock ticks.
func processStart(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	// The command name (field 2) is in parentheses and may contain spaces: skip past it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", errors.New("malformed /proc stat")
	}
	fields := strings.Fields(string(b[i+1:]))
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return "", errors.New("short /proc stat")
	}
	return fields[19], nil
}

func (o owner) labels(runID, name, session string) map[string]string {
	return map[string]string{
		LabelRun: runID, LabelName: name, LabelHost: o.Host, LabelBoot: o.Boot,
		LabelPid: strconv.Itoa(o.Pid), LabelStart: o.Start, LabelSession: session,
	}
}

func ownerFromLabels(l map[string]string) owner {
	pid, _ := strconv.Atoi(l[LabelPid])
	return owner{Host: l[LabelHost], Boot: l[LabelBoot], Pid: pid, Start: l[LabelStart]}
}

// liveness is a sweep's judgement of one container's owner.
type liveness int

const (
	alive   liveness = iota // the owner is running: leave the container alone
	dead                    // the owner is gone: the container is a leftover
	foreign                 // another host made it: this process cannot judge
)

// judge decides from this process's point of view whether o is still running.
func (me owner) judge(o owner) liveness {
	switch {
	case o.Host != me.Host:
		return foreign
	case o.Boot != me.Boot:
		return dead // the machine rebooted since: its processes are gone
	case o.Pid <= 0:
		return dead
	}
	start, err := processStart(o.Pid)
	if err != nil || start != o.Start {
		return dead
	}
	return alive
}
