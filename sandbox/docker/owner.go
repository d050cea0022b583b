package docker

import (
	"strconv"

	"github.com/tender-grader/tender/internal/scratch"
)

// owner identifies the grader process that created a container, so a later sweep can tell
// whether that process is still alive (scratch.Owner says how).
type owner scratch.Owner

// Labels carried by every container.
const (
	LabelRun   = "tender.run"
	LabelName  = "tender.name"
	LabelHost  = "tender.host"
	LabelBoot  = "tender.boot"
	LabelPid   = "tender.pid"
	LabelStart = "tender.pidstart"
	LabelPidNS = "tender.pidns" // absent on containers of older versions: judged as before
	// LabelSession is unique to one Backend value: Close removes by it.
	LabelSession = "tender.session"
	// LabelParent, on an image build helper, is the container the owning Tender process runs
	// in: once that container is not running, the helper is a leftover, whatever pid
	// namespace it was made from.
	LabelParent = "tender.parent"
)

func currentOwner() (owner, error) {
	o, err := scratch.Self()
	return owner(o), err
}

// processStart returns the start time of pid in clock ticks since boot.
func processStart(pid int) (string, error) { return scratch.ProcessStart(pid) }

func (o owner) labels(runID, name, session string) map[string]string {
	return map[string]string{
		LabelRun: runID, LabelName: name, LabelHost: o.Host, LabelBoot: o.Boot,
		LabelPid: strconv.Itoa(o.Pid), LabelStart: o.Start, LabelPidNS: o.PidNS, LabelSession: session,
	}
}

func ownerFromLabels(l map[string]string) owner {
	pid, _ := strconv.Atoi(l[LabelPid])
	return owner{Host: l[LabelHost], Boot: l[LabelBoot], Pid: pid, Start: l[LabelStart], PidNS: l[LabelPidNS]}
}

// liveness is a sweep's judgement of one container's owner.
type liveness = scratch.Liveness

const (
	alive   = scratch.Alive      // the owner is running: leave the container alone
	dead    = scratch.Dead       // the owner is gone: the container is a leftover
	foreign = scratch.Foreign    // another host made it: this process cannot judge
	otherNS = scratch.OtherPidNS // another pid namespace made it: its pid cannot be checked here
)

// judge decides from this process's point of view whether o is still running; temporary
// directories are judged by the same rule (package scratch).
func (me owner) judge(o owner) liveness { return scratch.Owner(me).Judge(scratch.Owner(o)) }
