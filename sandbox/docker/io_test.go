package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/sandbox"
)

func TestDockerStreamsWorkspaceAndSupport(t *testing.T) {
	files := map[string]string{}
	for i := range 1000 {
		files[fmt.Sprintf("pkg%02d/mod%03d.py", i%20, i)] = fmt.Sprintf("VALUE = %d\n", i)
	}
	spec := testSpec(
		t,
		sh(
			`find . -type f | wc -l; cat pkg07/mod007.py; test -x run.sh && ./run.sh; cat {assets}/hidden.txt; ls -ld /tender/out /workspace | cut -c1-10`,
		)...)
	spec.Workspace = writeFiles(t, files)
	if err := os.WriteFile(filepath.Join(spec.Workspace, "run.sh"), []byte("#!/bin/sh\necho executable\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec.Support = writeFiles(t, map[string]string{"assets/hidden.txt": "hidden asset\n"})
	res := runDocker(t, spec)
	// /workspace is open to new files as /tmp is (sticky): the evaluator's files in it are root's.
	want := "1001\nVALUE = 7\nexecutable\nhidden asset\ndrwxr-xr-x\ndrwxrwxrwt\n"
	if diff := cmp.Diff(want, res.Stdout.String()); diff != "" {
		t.Errorf("inside the verifier (-want +got):\n%s\nstderr: %s", diff, res.Stderr.String())
	}
}

func TestDockerNoHostPathMounted(t *testing.T) {
	spec := testSpec(t, "cat", "/proc/self/mountinfo")
	res := runDocker(t, spec)
	info := res.Stdout.String()
	if strings.Contains(info, spec.Workspace) || strings.Contains(info, filepath.Dir(spec.Workspace)) {
		t.Errorf("the host workspace path appears in the verifier's mounts:\n%s", info)
	}
	for _, m := range []string{" /workspace ", " /tender ", " /tmp "} {
		if !strings.Contains(info, m) {
			t.Errorf("no mount at%s:\n%s", m, info)
		}
	}
	hc := hostConfig(sandbox.DefaultLimits())
	if len(hc.Binds) != 0 || len(hc.Mounts) != 0 || len(hc.VolumesFrom) != 0 {
		t.Errorf("host config mounts something: binds %v mounts %v", hc.Binds, hc.Mounts)
	}
}

func TestDockerJUnitAttacks(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		wantNil  bool
		tooLarge bool
	}{
		{"missing report", `exit 0`, true, false},
		{"fifo instead of a file", `mkfifo "$TENDER_JUNIT"`, true, false},
		{"symlink to an endless device", `ln -s /dev/zero "$TENDER_JUNIT"`, true, false},
		{"symlink to a real file", `echo '<testsuite/>' > /tmp/j.xml; ln -s /tmp/j.xml "$TENDER_JUNIT"`, true, false},
		{"report written", `echo '<testsuite/>' > "$TENDER_JUNIT"`, false, false},
		{"oversize report", `head -c 40000000 /dev/zero > "$TENDER_JUNIT"`, true, true},
		{"report in the workspace is not read", `echo '<testsuite/>' > /workspace/junit.xml`, true, false},
		{"directory instead of a file", `mkdir "$TENDER_JUNIT"`, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSpec(t, sh(tt.script)...)
			spec.Limits.DiskBytes, spec.Limits.Memory = 64<<20, 512<<20
			start := time.Now()
			res := runDocker(t, spec)
			if (res.JUnit == nil) != tt.wantNil || res.JUnitTooLarge != tt.tooLarge {
				t.Errorf(
					"JUnit %d bytes, too large %v; want nil %v, too large %v",
					len(res.JUnit),
					res.JUnitTooLarge,
					tt.wantNil,
					tt.tooLarge,
				)
			}
			if took := time.Since(start); took > 90*time.Second {
				t.Errorf("collection took %s", took)
			}
		})
	}
}

func TestDockerRefusesBadInput(t *testing.T) {
	t.Run("symlink in workspace", func(t *testing.T) {
		spec := testSpec(t, "true")
		if err := os.Symlink("/etc/passwd", filepath.Join(spec.Workspace, "link")); err != nil {
			t.Fatal(err)
		}
		_, err := engine.Run(context.Background(), spec)
		if !errors.Is(err, sandbox.ErrUnsafeTree) || !errors.Is(err, sandbox.ErrCopyIn) {
			t.Errorf("err = %v, want sandbox.ErrUnsafeTree", err)
		}
		assertRunGone(t, spec.RunID)
	})
	t.Run("missing image", func(t *testing.T) {
		spec := testSpec(t, "true")
		spec.Image = "tender-verifier/does-not-exist"
		_, err := engine.Run(context.Background(), spec)
		if !errors.Is(err, ErrImageMissing) {
			t.Errorf("err = %v, want ErrImageMissing", err)
		}
	})
	t.Run("workspace larger than the disk cap", func(t *testing.T) {
		spec := testSpec(t, "true")
		if err := os.WriteFile(filepath.Join(spec.Workspace, "big"), make([]byte, 3<<20), 0o644); err != nil {
			t.Fatal(err)
		}
		spec.Limits.DiskBytes = 1 << 20
		_, err := engine.Run(context.Background(), spec)
		if !errors.Is(err, sandbox.ErrCopyIn) {
			t.Errorf("err = %v, want sandbox.ErrCopyIn", err)
		}
		assertRunGone(t, spec.RunID)
	})
	t.Run("reserved variable", func(t *testing.T) {
		spec := testSpec(t, "true")
		spec.Env = map[string]string{"TENDER_JUNIT": "/workspace/forged.xml"}
		if _, err := engine.Run(context.Background(), spec); !errors.Is(err, sandbox.ErrBadSpec) {
			t.Errorf("err = %v, want sandbox.ErrBadSpec", err)
		}
	})
}

func TestDockerBackgroundChildDoesNotHang(t *testing.T) {
	// The command exits while a child keeps stdout open: the check ends, it is no timeout.
	spec := testSpec(t, sh(`sleep 600 & echo started; exit 4`)...)
	spec.Limits.Timeout = time.Minute
	res := runDocker(t, spec)
	if res.TimedOut || res.ExitCode != 4 {
		t.Errorf("outcome %s, want exited_4", res.Outcome())
	}
	if res.Wall > 10*time.Second {
		t.Errorf("wall %s: waited on the background child", res.Wall)
	}
}
