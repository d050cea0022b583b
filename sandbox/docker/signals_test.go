package docker

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

func TestPropertySIGINTLeavesNoContainer(t *testing.T) {
	runID := testRunID(t)
	h := startHelper(t, runID)
	waitForContainer(t, runID, time.Minute)
	if err := h.signalAndWait(t, os.Interrupt); err != nil {
		t.Errorf("interrupted helper exited with %v, want a clean exit after its cleanup", err)
	}
	assertRunGone(t, runID)
}

func TestPropertySIGKILLedRunSweptAtNextStart(t *testing.T) {
	runID := testRunID(t)
	h := startHelper(t, runID)
	waitForContainer(t, runID, time.Minute)
	names, err := engine.Containers(context.Background(), runID)
	if err != nil || len(names) != 1 {
		t.Fatalf("want one container of the helper's run, got %v (%v)", names, err)
	}

	// While the helper lives, a sweep must leave its container alone.
	removed, err := engine.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(removed, names[0]) {
		t.Fatalf("sweep removed %s of a live run", names[0])
	}

	_ = h.signalAndWait(t, syscall.SIGKILL)
	left, _ := engine.Containers(context.Background(), runID)
	if !slices.Equal(left, names) {
		t.Fatalf("after SIGKILL want the leftover %v still there (nothing could clean up), got %v", names, left)
	}

	// The next start sweeps it, as `tender gc` does.
	next, err := New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close(context.Background())
	removed, err = next.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(removed, names[0]) {
		t.Errorf("sweep removed %v, want it to include %s", removed, names[0])
	}
	assertRunGone(t, runID)
}

// TestSweepLeavesOtherHostsAlone: a container made on another host, or in another pid
// namespace of this host (a CI job's container, whose pid 1 is not this namespace's init), has
// an owner this process cannot check; the sweep leaves it alone.
func TestSweepLeavesOtherHostsAlone(t *testing.T) {
	runID := testRunID(t)
	others := []owner{
		{Host: "some-other-host", Boot: engine.self.Boot, Pid: 1, Start: "1"},
		{Host: engine.self.Host, Boot: engine.self.Boot, Pid: 1, Start: "1", PidNS: "pid:[1]"},
	}
	ctx := context.Background()
	for i, other := range others {
		created, err := engine.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Config: &container.Config{
				Image: sandbox.ImagePytest, Entrypoint: []string{"true"},
				Labels: other.labels(runID, fmt.Sprint("foreign", i), "other-session"),
			},
			HostConfig: &container.HostConfig{NetworkMode: "none"},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = engine.forceRemove(ctx, created.ID) })
	}
	removed, err := engine.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	left, _ := engine.Containers(ctx, runID)
	if len(left) != len(others) {
		t.Errorf("sweep removed a container of another host or pid namespace (removed %v, %d left)", removed, len(left))
	}
}

func TestSweepVolumesOfDeadRunsOnly(t *testing.T) {
	ctx := context.Background()
	me := engine.self
	deadOwner := owner{Host: me.Host, Boot: me.Boot, Pid: 1 << 22, Start: "1"}
	runID := testRunID(t)
	created, err := engine.cli.VolumeCreate(ctx,
		client.VolumeCreateOptions{Name: runID + "-dead", Labels: deadOwner.labels(runID, "v", "dead-session")})
	if err != nil {
		t.Fatal(err)
	}
	deadVol := created.Volume
	created, err = engine.cli.VolumeCreate(ctx,
		client.VolumeCreateOptions{Name: runID + "-live", Labels: me.labels(runID, "v", engine.session)})
	if err != nil {
		t.Fatal(err)
	}
	liveVol := created.Volume
	t.Cleanup(func() {
		_, _ = engine.cli.VolumeRemove(ctx, deadVol.Name, client.VolumeRemoveOptions{Force: true})
		_, _ = engine.cli.VolumeRemove(ctx, liveVol.Name, client.VolumeRemoveOptions{Force: true})
	})
	removed, err := engine.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(removed, "volume/"+deadVol.Name) || slices.Contains(removed, "volume/"+liveVol.Name) {
		t.Errorf("sweep removed %v; want %s and not %s", removed, deadVol.Name, liveVol.Name)
	}
	if _, err := engine.cli.VolumeInspect(ctx, liveVol.Name, client.VolumeInspectOptions{}); err != nil {
		t.Errorf("live run's volume is gone: %v", err)
	}
}

func TestCloseRemovesEveryContainerItStarted(t *testing.T) {
	// Two backends share a run ID; closing one removes its own containers, even ones its
	// Run never saw finish, and leaves the other's alone. Close works on a cancelled context.
	ctx := context.Background()
	runID := testRunID(t)
	t.Cleanup(func() { removeRun(runID) })
	mine, err := New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	create := func(d *Backend, name string) {
		t.Helper()
		_, err := engine.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Config: &container.Config{
				Image: sandbox.ImagePytest, Entrypoint: []string{"true"}, Labels: d.self.labels(runID, name, d.session),
			},
			HostConfig: &container.HostConfig{NetworkMode: "none"}, Name: containerName(name),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		create(mine, fmt.Sprint("close-mine-", i))
	}
	create(engine, "close-other")
	if left, _ := engine.Containers(ctx, runID); len(left) != 3 {
		t.Fatalf("want 3 containers, got %v", left)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := mine.Close(cancelled); err != nil {
		t.Fatal(err)
	}
	left, err := engine.Containers(ctx, runID)
	if err != nil || len(left) != 1 || !strings.HasPrefix(left[0], "tender-close-other-") {
		t.Errorf("after Close, want only the other backend's container, got %v (%v)", left, err)
	}
}
