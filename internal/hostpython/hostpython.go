// Package hostpython finds the host's python3 with pytest, for the tests that run pytest on the
// host: the fixture generator's model grader and the bootstrap's host tests. It is imported only
// by tests; Tender itself never runs Python on the host. A missing pytest fails the test, never
// skips it.
package hostpython

import (
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// candidates are tried in order: python3 on PATH, then Debian's, which .ci/setup gives pytest
// (apt-get install python3-pytest).
var candidates = []string{"python3", "/usr/bin/python3"}

var find = sync.OnceValues(func() (string, error) {
	var tried []string
	for _, p := range candidates {
		out, err := exec.Command(p, "-m", "pytest", "--version").CombinedOutput()
		if err == nil {
			return p, nil
		}
		tried = append(tried, p+": "+strings.TrimSpace(string(out)))
	}
	return "", errors.New("no python3 with pytest (apt-get install -y python3-pytest, or run .ci/setup): " +
		strings.Join(tried, "; "))
})

// Find returns the first interpreter of candidates that runs pytest, and fails t when none does.
func Find(t testing.TB) string {
	t.Helper()
	p, err := find()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
