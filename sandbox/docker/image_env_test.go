package docker

import (
	"context"
	"errors"
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
