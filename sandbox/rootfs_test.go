package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLockBuildSerialisesOneRecipe(t *testing.T) {
	// A recipe of its own, so the test never holds the lock of a real image build.
	r := Recipe{
		Name:     "tender-verifier/lock-test",
		Suite:    "bookworm",
		Variant:  "minbase",
		Packages: []string{testRunID(t)},
	}
	other := r
	other.Packages = append(other.Packages, "another")
	for _, x := range []Recipe{r, other} {
		t.Cleanup(func() { os.Remove(filepath.Join(buildLockDir, "tender-image-"+x.Digest()[:16]+".lock")) })
	}
	ctx := t.Context()
	unlock, err := LockBuild(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := LockBuild(short, r); !errors.Is(err, ErrImageBuild) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second LockBuild while the first is held = %v, want it to wait and give up with its context", err)
	}
	unlockOther, err := LockBuild(short, other)
	if err != nil {
		t.Fatalf("another recipe waited on this one's lock: %v", err)
	}
	unlockOther()
	got := make(chan error, 1)
	go func() {
		u, err := LockBuild(ctx, r)
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(100 * time.Millisecond)
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting LockBuild did not get the lock after it was released")
	}
}
