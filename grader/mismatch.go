package grader

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tender-grader/tender/report/junit"
)

// A test that must pass on the base commit and fails there with a missing name (marshmallow
// 2.x on Python 3.10+: "module 'collections' has no attribute 'Mapping'") most often runs on a
// Python the project's version never supported. validate says so in the instance's line, where
// the cause would otherwise be only in the log.

var (
	reMissingName = regexp.MustCompile(
		`(?m)^(?:E\s+)?((?:[A-Za-z_][\w.]*)?(?:Error|Exception)\b[^\n]*?` +
			`(?:has no attribute '[^'\n]*'|cannot import name '[^'\n]*')[^\n]*)$`)
	rePythonDir = regexp.MustCompile(`/python(3\.\d+)/`)
)

// missingName finds the first line of the texts (a runner's output) that says a name is
// missing ("has no attribute", "cannot import name"), and the Python version a path in the
// texts names ("/usr/lib/python3.11/..."), "" for either when there is none.
func missingName(texts ...string) (line, python string) {
	for _, t := range texts {
		if m := reMissingName.FindStringSubmatch(t); m != nil && line == "" {
			line = strings.TrimSpace(m[1])
		}
		if m := rePythonDir.FindStringSubmatch(t); m != nil && python == "" {
			python = m[1]
		}
	}
	return line, python
}

// mismatchHint is what validate says about a missing-name error on the base commit. With
// quote false (hidden assets were in the workspace, and the runner's words could quote them)
// the error itself is left to the log.
func mismatchHint(line, python string, quote bool) string {
	who := "the log"
	if python != "" {
		who = "Python " + python
	}
	switch {
	case line == "":
		return ""
	case !quote:
		return fmt.Sprintf("likely a Python-version mismatch (%s names a missing attribute or import; see the log)", who)
	}
	return fmt.Sprintf("likely a Python-version mismatch (%s says %s)", who, line)
}

// mismatchWords name the likely cause, with the Python version when the output named one.
func mismatchWords(python string) string {
	if python == "" {
		return "likely a Python-version mismatch"
	}
	return "likely a Python-version mismatch (the environment runs Python " + python + ")"
}

// failureMessages are the report's messages of the required tests that failed or errored.
func failureMessages(rep *junit.Report, ids []string) map[string]string {
	if rep == nil {
		return nil
	}
	out := map[string]string{}
	for _, c := range rep.Cases {
		if (c.Status == junit.Failed || c.Status == junit.Errored) && c.Message != "" && slices.Contains(ids, c.ID) {
			out[c.ID] = c.Message
		}
	}
	return out
}

// missingIn is the first missing-name error among the failure messages of the tests named.
func missingIn(failures map[string]string, ids []string) string {
	for _, id := range ids {
		if line, _ := missingName(failures[id]); line != "" {
			return line
		}
	}
	return ""
}
