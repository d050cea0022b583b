package docker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"testing"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// A helper is this test binary re-executed as a small grader: it runs one `sleep infinity`
// check, so the parent can interrupt or kill it mid-run.
const (
	helperRoleEnv  = "TENDER_SANDBOX_TEST_HELPER"
	helperRunIDEnv = "TENDER_SANDBOX_TEST_RUNID"
)

func runHelper(role string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	d, err := New(ctx)
	if err != nil {
		fmt.Println("helper:", err)
		return 1
	}
	defer d.Close(ctx)
	d.Log = os.Stdout
	ws, err := os.MkdirTemp("", "tender-helper-")
	if err != nil {
		fmt.Println("helper:", err)
		return 1
	}
	defer os.RemoveAll(ws)
	spec := sandbox.Spec{
		RunID: os.Getenv(helperRunIDEnv), Name: "helper/" + role, Image: sandbox.ImagePytest,
		Workspace: ws, Command: []string{"sleep", "infinity"},
		Limits: sandbox.Limits{Timeout: 5 * time.Minute, Memory: 64 << 20, Pids: 32, DiskBytes: 1 << 20},
	}
	_, err = d.Run(ctx, spec)
	fmt.Println("helper: Run returned:", err)
	if ctx.Err() != nil {
		return 0 // interrupted, as the parent intended
	}
	return 1
}

// helper is a running helper process.
type helper struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

func startHelper(t *testing.T, runID string) *helper {
	t.Helper()
	h := &helper{cmd: exec.Command(os.Args[0], "-test.run=^$")}
	h.cmd.Env = append(os.Environ(), helperRoleEnv+"=hold", helperRunIDEnv+"="+runID)
	h.cmd.Stdout, h.cmd.Stderr = &h.out, &h.out
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.cmd.Process.Kill()
		_ = h.cmd.Wait()
		removeRun(runID)
	})
	return h
}

func (h *helper) signalAndWait(t *testing.T, sig os.Signal) error {
	t.Helper()
	if err := h.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case err := <-done:
		t.Logf("helper output after %v:\n%s", sig, h.out.String())
		return err
	case <-time.After(time.Minute):
		t.Fatalf("helper did not exit within a minute of %v", sig)
		return nil
	}
}
