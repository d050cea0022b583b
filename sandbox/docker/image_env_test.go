package docker

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tender-grader/tender/sandbox"
)

// TestEnsurePinned: an image named by its ID, or by NAME@<its ID> (a locally built image has
// no repository digest), is found without a pull; an ID this machine does not have is a clear
// error that says what to do.
func TestEnsurePinned(t *testing.T) {
	ctx := context.Background()
	for _, ref := range []string{testImageID, sandbox.ImagePytest + "@" + testImageID} {
		id, err := engine.EnsurePinned(ctx, ref, nil)
		if err != nil || id != testImageID {
			t.Errorf("EnsurePinned(%s) = %s, %v; want %s", ref, id, err, testImageID)
		}
	}
	_, err := engine.EnsurePinned(ctx, "sha256:"+strings.Repeat("0", 64), nil)
	if !errors.Is(err, ErrImageMissing) || !strings.Contains(err.Error(), "not on this machine") {
		t.Errorf("a missing ID: %v; want ErrImageMissing saying it is not on this machine", err)
	}
	if _, err := engine.EnsurePinned(ctx, sandbox.ImagePytest+":latest", nil); !errors.Is(err, ErrImageMissing) {
		t.Errorf("an unpinned name: %v; want it refused", err)
	}
}

// TestEnsureDockerfileFrom: a build gets the image it builds on as TENDER_FROM and carries it
// as a label; the same recipe on the same base is not built again, and on another base it is.
func TestEnsureDockerfileFrom(t *testing.T) {
	ctx := context.Background()
	goID, err := engine.ImageID(ctx, sandbox.ImageGo)
	if err != nil || goID == "" {
		t.Fatalf("the go image: %q, %v", goID, err)
	}
	ref := "tender-test/from:" + randomHex(6)
	t.Cleanup(func() { removeTestImage(ref) })
	b := DockerfileBuild{Ref: ref, Digest: randomHex(32), Dockerfile: "Dockerfile", From: testImageID,
		ContextDir: writeFiles(t, map[string]string{"Dockerfile": "ARG TENDER_FROM\nFROM ${TENDER_FROM}\n" +
			"LABEL tender.test=from\n"})}
	first, err := engine.EnsureDockerfile(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	again, err := engine.EnsureDockerfile(ctx, b, &progress)
	if err != nil || again != first || progress.Len() != 0 {
		t.Errorf("the same recipe and base: %s, %v, %q; want %s without a build", again, err, progress.String(), first)
	}
	b.From = goID
	other, err := engine.EnsureDockerfile(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := engine.cli.ImageInspect(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if other == first || in.Config.Labels[LabelFrom] != goID || in.Config.Labels["tender.test"] != "from" {
		t.Errorf("on another base: image %s (was %s), labels %v; want a new build from %s", other, first,
			in.Config.Labels, goID)
	}
}

// TestEnsureDockerfileFailedStep: a failed build's error names the step and carries the
// lines that step printed, the cause included, not only the engine's exit code.
func TestEnsureDockerfileFailedStep(t *testing.T) {
	ref := "tender-test/failed:" + randomHex(6)
	t.Cleanup(func() { removeTestImage(ref) })
	b := DockerfileBuild{Ref: ref, Digest: randomHex(32), Dockerfile: "Dockerfile",
		ContextDir: writeFiles(t, map[string]string{"Dockerfile": "FROM " + testImageID + "\nRUN echo earlier step\n" +
			"RUN echo 'dpkg: x depends on perl-base (>= 5.36.0-8)' >&2; echo 'perl-base is 5.36.0-7'; exit 3\n"})}
	_, err := engine.EnsureDockerfile(context.Background(), b, nil)
	var se *StepError
	if !errors.Is(err, sandbox.ErrImageBuild) || !errors.As(err, &se) {
		t.Fatalf("build: %v; want ErrImageBuild with a StepError", err)
	}
	for _, want := range []string{"Step 3/5 : RUN echo 'dpkg:", "returned a non-zero code: 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// The step's stderr and stdout lines, each, in whichever order the engine interleaved them.
	_, lines, _ := strings.Cut(err.Error(), "output line(s): ")
	got := strings.Split(lines, " | ")
	slices.Sort(got)
	if want := []string{"dpkg: x depends on perl-base (>= 5.36.0-8)", "perl-base is 5.36.0-7"}; !slices.Equal(got, want) {
		t.Errorf("error %q: the step's lines %q, want %q", err, got, want)
	}
	if strings.Contains(err.Error(), "earlier step") {
		t.Errorf("error %q holds another step's output", err)
	}
}

// TestFindPinned: a prebuilt instance image is found on the engine by NAME@<its ID>, and one
// that is not there is refused, saying how to load it, with nothing pulled (no image can be
// pulled here, so a pull attempt would show as a pull error, not as this message).
func TestFindPinned(t *testing.T) {
	ctx := context.Background()
	var progress strings.Builder
	id, err := engine.FindPinned(ctx, sandbox.ImagePytest+"@"+testImageID, &progress)
	if err != nil || id != testImageID {
		t.Errorf("FindPinned = %s, %v; want %s", id, err, testImageID)
	}
	missing := "tender-test/sweb.eval.x86_64.acme__calc-1@sha256:" + strings.Repeat("1", 64)
	_, err = engine.FindPinned(ctx, missing, &progress)
	if !errors.Is(err, ErrImageMissing) || !strings.Contains(err.Error(), "load it first (docker load)") ||
		strings.Contains(progress.String(), "pulling") {
		t.Errorf("a missing instance image: %v (progress %q); want ErrImageMissing saying to load it, and no pull",
			err, progress.String())
	}
}
