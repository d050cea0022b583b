package cli

import (
	"context"
	"strings"
	"syscall"
	"testing"

	"github.com/tender-grader/tender/internal/clitest"
)

// TestActionInputsStayOnTheirLine: a line break in an input the Action uses on one line is
// refused (exit 2) before anything echoes it, so no input can put a workflow command at the
// start of a log line; and a FIFO as the event file is refused, not read forever.
func TestActionInputsStayOnTheirLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inputs map[string]string
		fifo   bool
		want   string
	}{
		{"suite", map[string]string{"suite": "fixtures/demo\n::error::injected"}, false, "input suite: holds a line break"},
		{"out", map[string]string{"suite": "x", "out": "o\r::error::injected"}, false, "input out: holds a line break"},
		{"bare CR in a multi-line input", map[string]string{"suite": "x", "repos": "calc=a\r::error::injected"}, false, "input repos: holds a carriage return"},
		{"event file is a FIFO", map[string]string{"suite": "x"}, true, "GITHUB_EVENT_PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clitest.NewRunner(t, Main, "http://127.0.0.1:1", tc.inputs, map[string]any{})
			if tc.fifo {
				fifo := r.Workdir + "/event.fifo"
				clitest.Must(t, syscall.Mkfifo(fifo, 0o644))
				r.Env["GITHUB_EVENT_PATH"] = fifo
			}
			// Main, not run: its last word, the error line on stderr, is in the log too.
			var stdout, stderr strings.Builder
			code := Main(context.Background(), "dev", nil, r.Environ(), strings.NewReader(""), &stdout, &stderr)
			log := stdout.String() + "\n" + stderr.String()
			if code != exitUsage || !strings.Contains(log, tc.want) {
				t.Errorf("exit %d, want %d naming %q\n%s", code, exitUsage, tc.want, log)
			}
			for _, l := range strings.Split(log, "\n") {
				if strings.HasPrefix(strings.TrimLeft(l, "\r"), "::error::injected") {
					t.Errorf("an input reached the log as a workflow command: %q", l)
				}
			}
		})
	}
}
