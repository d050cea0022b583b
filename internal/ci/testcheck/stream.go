package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), with the build events of Go 1.24.
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // build-output and build-fail events
	FailedBuild string // a package's fail event, when its test binary did not build
}

// pkg is what one package's tests came to.
type pkg struct {
	path                    string
	result                  string // pass, fail, skip (no test files); "" while it runs
	passed, failed, skipped int
	line                    string              // the go command's own line: "ok  \tpath\t1.2s"
	output                  []string            // lines outside any test, kept in case it fails
	running                 map[string][]string // output of each test still running
	failures, skips         []string            // their names, in the order they ended
	passes                  []string            // the go command's "--- PASS: Name (1.2s)" lines
	shown                   []string            // output of the tests that failed or skipped
	build                   string              // the test binary that did not build
}

// stream is the whole run: packages in the order they started, and build output by binary.
type stream struct {
	pkgs   map[string]*pkg
	order  []string
	builds map[string][]string
}

// maxShown bounds the output shown of one failed or skipped test: its last lines.
const maxShown = 150

// read consumes the stream and writes each package's block to w as soon as the package ends.
// Lines that are not JSON (the go command's own messages) are passed through as they are.
func read(r io.Reader, w io.Writer) (*stream, error) {
	s := &stream{pkgs: map[string]*pkg{}, builds: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		if p := s.apply(e); p != nil {
			p.print(w, s.builds[p.build])
		}
	}
	return s, sc.Err()
}

// apply records one event and returns the package it ended, if it ended one.
func (s *stream) apply(e event) *pkg {
	switch {
	case e.Action == "build-output":
		s.builds[e.ImportPath] = append(s.builds[e.ImportPath], strings.TrimSuffix(e.Output, "\n"))
		return nil
	case e.Package == "":
		return nil
	}
	p := s.pkgs[e.Package]
	if p == nil {
		p = &pkg{path: e.Package, running: map[string][]string{}}
		s.pkgs[e.Package] = p
		s.order = append(s.order, e.Package)
	}
	if e.Test != "" {
		p.testEvent(e)
		return nil
	}
	switch e.Action {
	case "output":
		p.output = append(p.output, strings.TrimSuffix(e.Output, "\n"))
		if isSummary(e.Output, e.Package) {
			p.line = strings.TrimSuffix(e.Output, "\n")
		}
	case "pass", "fail", "skip":
		p.result, p.build = e.Action, e.FailedBuild
		return p
	}
	return nil
}

func (p *pkg) testEvent(e event) {
	switch e.Action {
	case "output":
		line := strings.TrimSuffix(e.Output, "\n")
		switch {
		case strings.HasPrefix(strings.TrimLeft(line, " "), "--- PASS: "):
			p.passes = append(p.passes, line)
		case !isProgress(line):
			p.running[e.Test] = append(p.running[e.Test], line)
		}
		return
	case "pass":
		p.passed++
	case "fail":
		p.failed++
		p.failures = append(p.failures, e.Test)
		p.show(e.Test)
	case "skip":
		p.skipped++
		p.skips = append(p.skips, e.Test)
		p.show(e.Test)
	default: // run, pause, cont, bench
		return
	}
	delete(p.running, e.Test)
}

// show keeps the last maxShown lines of a test's output, to print with its package.
func (p *pkg) show(test string) {
	out := p.running[test]
	if cut := len(out) - maxShown; cut > 0 {
		p.shown = append(p.shown, fmt.Sprintf("    (%d earlier lines of %s cut)", cut, test))
		out = out[cut:]
	}
	p.shown = append(p.shown, out...)
}

// isSummary reports whether a line is the go command's last word on the package: "ok  \t",
// "FAIL\t" or "?   \t" and the path.
func isSummary(line, path string) bool {
	for _, word := range []string{"ok  \t", "FAIL\t", "?   \t"} {
		if strings.HasPrefix(line, word+path) {
			return true
		}
	}
	return false
}

// isProgress reports whether a line is one of the -v progress lines that -json turns on.
func isProgress(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}
