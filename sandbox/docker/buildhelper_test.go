package docker

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

// TestHelperContainer starts a helper as an image build does, and checks on the engine what it
// was given (the host network, no capability beyond helperCaps, not privileged, a tmpfs that
// allows device nodes and executables, and the labels the sweep reads), then that
// firstRunning finds a running container and its image by its short ID, as a container action
// finds its own, and nothing for an ID the engine does not know or a stopped container.
func TestHelperContainer(t *testing.T) {
	r := cacheRecipe(t)
	ctx := t.Context()
	b, err := engine.startHelper(ctx, r, liveContainer{image: testImageID})
	if err != nil {
		t.Fatal(err)
	}
	runID := "image-build-" + r.Digest()[:12]
	t.Cleanup(func() { removeRun(runID) })
	in, err := engine.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc, c := in.Container.HostConfig, in.Container.Config
	var added []string // the engine answers CAP_CHOWN for CHOWN
	for _, c := range hc.CapAdd {
		added = append(added, strings.TrimPrefix(c, "CAP_"))
	}
	slices.Sort(added)
	want := slices.Sorted(slices.Values(helperCaps))
	if hc.Privileged || string(hc.NetworkMode) != "host" || !slices.Equal(hc.CapDrop, []string{"ALL"}) ||
		!slices.Equal(added, want) || slices.Contains(added, "SYS_ADMIN") {
		t.Errorf("helper: privileged %v, network %s, cap-drop %v, cap-add %v", hc.Privileged, hc.NetworkMode,
			hc.CapDrop, hc.CapAdd)
	}
	if opts := hc.Tmpfs[helperRoot]; !strings.Contains(opts, ",exec,") || !strings.Contains(opts, ",dev,") {
		t.Errorf("tmpfs %s: %q, want exec and dev", helperRoot, opts)
	}
	if c.Labels[LabelRun] != runID || c.Labels[LabelSession] != engine.session || c.Labels[LabelPid] == "" {
		t.Errorf("labels %v: want the run, the session and the owner", c.Labels)
	}
	if c, ok := engine.firstRunning(ctx, []string{"0123456789ab", b.id[:12]}); !ok || c.image != testImageID ||
		c.id != b.id {
		t.Errorf("firstRunning(short ID) = %+v, %v; want %s in image %s", c, ok, b.id, testImageID)
	}
	if _, ok := engine.firstRunning(ctx, []string{"0123456789ab"}); ok {
		t.Error("firstRunning found a container for an ID the engine does not know")
	}
	if _, err := engine.cli.ContainerKill(ctx, b.id, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		t.Fatal(err)
	}
	w := engine.cli.ContainerWait(ctx, b.id, client.ContainerWaitOptions{})
	select {
	case <-w.Result:
	case err := <-w.Error:
		t.Fatalf("waiting for the helper to stop: %v", err)
	}
	if _, ok := engine.firstRunning(ctx, []string{b.id[:12]}); ok {
		t.Error("firstRunning took a stopped container for this process's")
	}
	engine.removeBox(ctx, b)
	assertRunGone(t, runID)
}

// TestBuildImageInFailsCleanly builds in a helper whose image has no debootstrap: one error
// that says so, no image made, and no helper left.
func TestBuildImageInFailsCleanly(t *testing.T) {
	r := cacheRecipe(t)
	runID := "image-build-" + r.Digest()[:12]
	t.Cleanup(func() { removeRun(runID) })
	var log strings.Builder
	_, err := engine.BuildImageIn(t.Context(), r, testImageID, &log)
	if !errors.Is(err, sandbox.ErrImageBuild) || !strings.Contains(err.Error(), "debootstrap") {
		t.Errorf("BuildImageIn without debootstrap = %v, want ErrImageBuild naming debootstrap\n%s", err, &log)
	}
	if !imageGone(t, r.Ref()) {
		t.Errorf("an image %s was made", r.Ref())
	}
	assertRunGone(t, runID)
}

// TestHelperOfAGoneParentIsSwept: a helper whose parent (the container Tender ran in) is gone
// is a leftover, although its owner process (this test) is alive; while the parent runs, it
// is not.
func TestHelperOfAGoneParentIsSwept(t *testing.T) {
	r := cacheRecipe(t)
	ctx := t.Context()
	runID := "image-build-" + r.Digest()[:12]
	t.Cleanup(func() { removeRun(runID) })
	parent, err := engine.startHelper(ctx, r, liveContainer{image: testImageID})
	if err != nil {
		t.Fatal(err)
	}
	child, err := engine.startHelper(ctx, r, liveContainer{id: parent.id, image: testImageID})
	if err != nil {
		t.Fatal(err)
	}
	left := func() bool {
		t.Helper()
		list, err := engine.labelled(ctx, LabelParent+"="+parent.id)
		if err != nil || len(list) != 1 || list[0].ID != child.id {
			t.Fatalf("the helper by its parent label: %v, %v", list, err)
		}
		return engine.leftover(ctx, list[0])
	}
	if left() {
		t.Error("a helper whose parent runs was judged a leftover")
	}
	engine.removeBox(ctx, parent)
	if !left() {
		t.Error("a helper whose parent is gone was not judged a leftover")
	}
	engine.removeBox(ctx, child)
	assertRunGone(t, runID)
}
