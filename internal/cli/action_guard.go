package cli

import (
	"slices"
	"strings"
)

// multiLineInputs are the Action inputs read one line at a time; every other input is used
// on one line.
var multiLineInputs = []string{"repos", "bundle", "signing-key"}

// checkInputLines refuses an input that could start a new log line, before anything echoes
// it: a line break in a one-line input, a carriage return that does not end a line in a
// multi-line one. An input carrying "::error::..." after a line break would otherwise be read
// by the runner as a workflow command when an error message quotes it. Every INPUT_*
// variable is checked, so an input added later is covered too.
func checkInputLines(environ []string) error {
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		name, ok := strings.CutPrefix(k, "INPUT_")
		if !ok {
			continue
		}
		name = strings.ToLower(name)
		if slices.Contains(multiLineInputs, strings.ReplaceAll(name, "_", "-")) {
			if strings.Contains(strings.ReplaceAll(v, "\r\n", "\n"), "\r") {
				return usageError("input %s: holds a carriage return inside a line; give one item a line", name)
			}
			continue
		}
		if strings.ContainsAny(v, "\r\n") {
			return usageError("input %s: holds a line break; give it on one line", name)
		}
	}
	return nil
}
