package scratch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Owner identifies a process across pid reuse and reboots: the pid alone means nothing on
// another host or after a reboot, and pids are reused; the start time (in clock ticks since
// boot, from /proc/<pid>/stat) pins the pid to one process. A pid is a number in one pid
// namespace: a record made in another (another container, a CI job's container on the same
// host and boot) cannot be checked against this process's /proc, so PidNS names the
// namespace (the target of /proc/self/ns/pid, "pid:[4026531836]"). Records written before it
// existed have none and are judged as before.
type Owner struct {
	Host  string `json:"host"`
	Boot  string `json:"boot"`
	Pid   int    `json:"pid"`
	Start string `json:"start"`
	PidNS string `json:"pidns,omitempty"`
}

// Liveness is a judgement of an Owner from this process's point of view.
type Liveness int

const (
	Alive      Liveness = iota // the owner is running: leave its things alone
	Dead                       // the owner is gone: its things are leftovers
	Foreign                    // another host made it: this process cannot judge
	OtherPidNS                 // another pid namespace made it: its pid means nothing here; leave it alone
)

var self struct {
	once sync.Once
	o    Owner
	err  error
}

// Self is this process.
func Self() (Owner, error) {
	self.once.Do(func() { self.o, self.err = identify(os.Getpid()) })
	return self.o, self.err
}

func identify(pid int) (Owner, error) {
	host, err := os.Hostname()
	if err != nil {
		return Owner{}, fmt.Errorf("scratch: hostname: %w", err)
	}
	boot, err := BootID()
	if err != nil {
		return Owner{}, err
	}
	start, err := ProcessStart(pid)
	if err != nil {
		return Owner{}, fmt.Errorf("scratch: start time of %d: %w", pid, err)
	}
	ns, err := PidNamespace(pid)
	if err != nil {
		return Owner{}, err
	}
	return Owner{Host: host, Boot: boot, Pid: pid, Start: start, PidNS: ns}, nil
}

// PidNamespace names the pid namespace of pid, as /proc/<pid>/ns/pid links to it.
func PidNamespace(pid int) (string, error) {
	ns, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		return "", fmt.Errorf("scratch: pid namespace of %d: %w", pid, err)
	}
	return ns, nil
}

// BootID names this boot of the machine.
func BootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("scratch: boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// ProcessStart returns field 22 of /proc/<pid>/stat, the start time in clock ticks.
func ProcessStart(pid int) (string, error) {
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

// Judge decides from me's point of view whether o is still running.
func (me Owner) Judge(o Owner) Liveness {
	switch {
	case o.Host != me.Host:
		return Foreign
	case o.Boot != me.Boot:
		return Dead // the machine rebooted since: its processes are gone
	case o.PidNS != "" && me.PidNS != "" && o.PidNS != me.PidNS:
		return OtherPidNS
	case o.Pid <= 0:
		return Dead
	}
	start, err := ProcessStart(o.Pid)
	if err != nil || start != o.Start {
		return Dead
	}
	return Alive
}
