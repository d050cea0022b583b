package docker

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// classicFailure is what the classic builder streams for a RUN step that fails: its output
// comes in chunks that split lines, with colour codes around stderr.
var classicFailure = []string{
	`{"stream":"Step 1/3 : FROM tender-verifier/pytest\n"}`,
	`{"stream":" ---\u003e 88a379baa48e\n"}`,
	`{"stream":"Step 2/3 : RUN echo fine\n"}`,
	`{"stream":"fine\n"}`,
	`{"stream":"Removing intermediate container 1ee8fdc11364\n ---\u003e 980d896fbc8a\n"}`,
	`{"stream":"Step 3/3 : RUN dpkg -i /x.deb\n"}`,
	`{"stream":" ---\u003e Running in 7e19248270c2\n"}`,
	`{"stream":"\u001b[91mdpkg: dependency problems prevent configuration of x:\n` +
		` x depends on perl-base (\u003e= 5.36.0-8); how"}`,
	`{"stream":"ever:\n  Version of perl-base on system is 5.36.0-7.\u001b[0m\n"}`,
	`{"errorDetail":{"code":1,"message":"The command '/bin/sh -c dpkg -i /x.deb' returned a non-zero code: 1"},` +
		`"error":"The command '/bin/sh -c dpkg -i /x.deb' returned a non-zero code: 1"}`,
}

// TestRelayJSONKeepsTheFailingStep: the error of a failed build names the step and carries
// the lines that step printed (not the earlier steps'), whole across chunks and without
// colour codes, and the progress writer still sees every line.
func TestRelayJSONKeepsTheFailingStep(t *testing.T) {
	var progress strings.Builder
	err := relayJSON(strings.NewReader(strings.Join(classicFailure, "\n")), &progress)
	var se *StepError
	if !errors.As(err, &se) {
		t.Fatalf("relayJSON: %v; want a *StepError", err)
	}
	want := []string{
		"dpkg: dependency problems prevent configuration of x:",
		"x depends on perl-base (>= 5.36.0-8); however:",
		"Version of perl-base on system is 5.36.0-7.",
	}
	if se.Step != "Step 3/3 : RUN dpkg -i /x.deb" || fmt.Sprint(se.Lines) != fmt.Sprint(want) {
		t.Errorf("step %q, lines %q; want step 3 and %q", se.Step, se.Lines, want)
	}
	msg := err.Error()
	for _, s := range append(want, "Step 3/3 : RUN dpkg -i /x.deb: The command", "returned a non-zero code: 1") {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q lacks %q", msg, s)
		}
	}
	if strings.Contains(msg, "fine") || strings.ContainsAny(msg, "\x1b\n") {
		t.Errorf("error %q holds another step's output, a colour code or a newline", msg)
	}
	if !strings.Contains(progress.String(), "Version of perl-base on system is 5.36.0-7.\n") {
		t.Errorf("progress lost a line:\n%s", progress.String())
	}
}

// TestRelayJSONKeepsTheLastLines: a step that prints much keeps only its last StepLines lines,
// each cut to a readable length.
func TestRelayJSONKeepsTheLastLines(t *testing.T) {
	msgs := []string{`{"stream":"Step 1/1 : RUN make\n"}`}
	for i := range 100 {
		msgs = append(msgs, fmt.Sprintf(`{"stream":"line %d %s\n"}`, i, strings.Repeat("x", i*10)))
	}
	msgs = append(msgs, `{"error":"The command returned a non-zero code: 2"}`)
	var se *StepError
	if err := relayJSON(strings.NewReader(strings.Join(msgs, "\n")), nil); !errors.As(err, &se) {
		t.Fatalf("relayJSON: %v", err)
	}
	if len(se.Lines) != StepLines || !strings.HasPrefix(se.Lines[0], "line 80 ") ||
		!strings.HasPrefix(se.Lines[StepLines-1], "line 99 ") {
		t.Fatalf("kept %d lines from %.10q to %.10q; want the last %d", len(se.Lines), se.Lines[0],
			se.Lines[len(se.Lines)-1], StepLines)
	}
	for _, l := range se.Lines {
		if len(l) > maxStepLine+3 {
			t.Errorf("a kept line of %d bytes", len(l))
		}
	}
}
