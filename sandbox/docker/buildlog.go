package docker

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// StepLines is how many of a failed build step's last output lines its error keeps.
const StepLines = 20

// maxStepLine caps one kept line: a progress bar or a minified file is not an error message.
const maxStepLine = 400

// StepError is the engine's error at the end of a stream, with the build step that was running
// and the last lines that step printed: the engine's own message ("returned a non-zero code:
// 1") never says why, the step's output does.
type StepError struct {
	Msg   string   // the engine's error message
	Step  string   // "Step 3/4 : RUN ..." (empty outside a Dockerfile build)
	Lines []string // the step's last output lines, at most StepLines, oldest first
}

func (e *StepError) Error() string {
	if e.Step == "" && len(e.Lines) == 0 {
		return e.Msg
	}
	var b strings.Builder
	if e.Step != "" {
		fmt.Fprintf(&b, "%s: ", e.Step)
	}
	b.WriteString(e.Msg)
	if len(e.Lines) > 0 {
		fmt.Fprintf(&b, "; the step's last %d output line(s): %s", len(e.Lines), strings.Join(e.Lines, " | "))
	}
	return b.String()
}

// stepTail follows a build's output: the step running and its last lines.
type stepTail struct {
	step    string
	lines   []string
	pending string // a line not yet ended by a newline
}

var (
	reStep = regexp.MustCompile(`^Step \d+/\d+ : `)
	// reANSI matches the colour codes the classic builder puts around a step's stderr.
	reANSI = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
	// reEngineNoise matches the builder's own lines between steps.
	reEngineNoise = regexp.MustCompile(`^(?:---> |Removing intermediate container |Successfully (?:built|tagged) )`)
)

// add takes a chunk of the stream and returns its complete lines, cleaned for printing.
func (t *stepTail) add(chunk string) []string {
	t.pending += chunk
	parts := strings.Split(t.pending, "\n")
	t.pending = parts[len(parts)-1]
	var out []string
	for _, raw := range parts[:len(parts)-1] {
		if line := cleanLine(raw); line != "" {
			t.keep(line)
			out = append(out, line)
		}
	}
	return out
}

// flush ends the pending line, if any.
func (t *stepTail) flush() []string {
	if t.pending == "" {
		return nil
	}
	return t.add("\n")
}

func (t *stepTail) keep(line string) {
	switch {
	case reStep.MatchString(line):
		t.step, t.lines = truncate(line), nil
	case reEngineNoise.MatchString(line):
	default:
		t.lines = append(t.lines, truncate(line))
		if len(t.lines) > StepLines {
			t.lines = t.lines[len(t.lines)-StepLines:]
		}
	}
}

func truncate(line string) string {
	if len(line) <= maxStepLine {
		return line
	}
	cut := maxStepLine
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + "..."
}

func cleanLine(s string) string {
	s = reANSI.ReplaceAllString(s, "")
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, s))
}

// relayJSON forwards the engine's JSON progress messages as plain lines, and returns the
// first error message in the stream as a *StepError carrying the step it ended.
func relayJSON(r io.Reader, progress io.Writer) error {
	_, err := relayBuild(r, progress)
	return err
}

// relayBuild is relayJSON that also returns the image ID a build's stream ends with.
func relayBuild(r io.Reader, progress io.Writer) (string, error) {
	progress = orDiscard(progress)
	dec := json.NewDecoder(r)
	var tail stepTail
	id := ""
	for {
		var m struct {
			Status, Progress, ID string
			Stream, Error        string
			Aux                  json.RawMessage // a build's ends {"ID": "sha256:..."}; others may differ
		}
		if err := dec.Decode(&m); err == io.EOF {
			printLines(progress, tail.flush())
			return id, nil
		} else if err != nil {
			return "", err
		}
		if m.Error != "" {
			printLines(progress, tail.flush())
			return "", &StepError{Msg: oneLine(m.Error), Step: tail.step, Lines: tail.lines}
		}
		var aux struct{ ID string }
		if json.Unmarshal(m.Aux, &aux) == nil && aux.ID != "" {
			id = aux.ID
		}
		printLines(progress, tail.add(m.Stream))
		if m.Status != "" && m.Progress == "" {
			fmt.Fprintf(progress, "engine: %s %s\n", m.ID, m.Status)
		}
	}
}

func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
