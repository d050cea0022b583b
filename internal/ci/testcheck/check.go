package main

import (
	"fmt"
	"io"
	"strings"
)

// print writes a package's block as `go test -v` shows it without the tests' logs: the
// "--- PASS" line of each test that passed, the output of what failed or skipped (or, for a
// package that failed outside its tests, its own output and its build errors), then the go
// command's line as it printed it, and the counts on a line of their own.
func (p *pkg) print(w io.Writer, build []string) {
	for _, l := range append(p.passes, p.shown...) {
		fmt.Fprintln(w, l)
	}
	if p.result == "fail" && p.failed == 0 {
		for _, l := range append(build, p.output...) {
			if l != p.line {
				fmt.Fprintln(w, l)
			}
		}
	}
	if p.result != "fail" {
		p.output = nil // check names a failed package by its first words
	}
	p.passes, p.shown = nil, nil
	line := p.line
	if line == "" {
		line = p.word() + "\t" + p.path
	}
	switch p.result {
	case "skip":
		fmt.Fprintln(w, line)
		return
	case "pass":
		fmt.Fprintln(w, "PASS")
	}
	fmt.Fprintf(w, "%s\n    %s\n", line, p.counts())
}

// word is the go command's word for how the package ended.
func (p *pkg) word() string {
	switch p.result {
	case "pass":
		return "ok  "
	case "skip":
		return "?   "
	}
	return "FAIL"
}

func (p *pkg) counts() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", p.passed, p.failed, p.skipped)
}

// check returns what fails the run, one line each, in the order the packages started.
func (s *stream) check(e2e []string) []string {
	var problems []string
	if len(s.order) == 0 {
		return []string{"the stream holds no package: did go test run at all?"}
	}
	for _, path := range s.order {
		problems = append(problems, s.pkgs[path].problems(isE2E(e2e, path))...)
	}
	for _, pattern := range e2e {
		if !s.has(pattern) {
			problems = append(problems,
				fmt.Sprintf("no package of -e2e %s is in the stream: the end-to-end tests did not run", pattern))
		}
	}
	return problems
}

func (p *pkg) problems(e2e bool) []string {
	var out []string
	switch {
	case p.result == "":
		out = append(out, p.path+": started and never finished (go test was killed, or the stream was cut)")
	case p.failed > 0:
		out = append(out, fmt.Sprintf("%s: %d test(s) failed: %s", p.path, p.failed, names(p.failures)))
	case p.result == "fail" && p.build != "":
		out = append(out, fmt.Sprintf("%s: the test binary did not build (%s)", p.path, p.build))
	case p.result == "fail":
		out = append(out, p.path+": failed outside its tests (TestMain, a panic or the timeout): "+p.firstWords())
	}
	if p.skipped > 0 {
		out = append(
			out,
			fmt.Sprintf("%s: %d test(s) skipped: %s; no test may skip", p.path, p.skipped, names(p.skips)),
		)
	}
	if e2e && p.result != "fail" && p.passed+p.failed+p.skipped == 0 {
		out = append(out, p.path+": an end-to-end package ran no test")
	}
	return out
}

// firstWords is the first line a failed package printed outside its tests, such as its
// TestMain's FAIL line, which print has already shown in full.
func (p *pkg) firstWords() string {
	for _, l := range p.output {
		if l != "" && l != "FAIL" && l != p.line {
			return l
		}
	}
	return "no output; see the package's block above"
}

func names(tests []string) string {
	const most = 10
	if len(tests) > most {
		return strings.Join(tests[:most], ", ") + fmt.Sprintf(" and %d more", len(tests)-most)
	}
	return strings.Join(tests, ", ")
}

func isE2E(patterns []string, path string) bool {
	for _, p := range patterns {
		if match(p, path) {
			return true
		}
	}
	return false
}

func (s *stream) has(pattern string) bool {
	for _, path := range s.order {
		if match(pattern, path) {
			return true
		}
	}
	return false
}

// totals is the last line: every test of every package.
func (s *stream) totals() string {
	var t pkg
	noFiles := 0
	for _, p := range s.pkgs {
		t.passed, t.failed, t.skipped = t.passed+p.passed, t.failed+p.failed, t.skipped+p.skipped
		if p.result == "skip" {
			noFiles++
		}
	}
	return fmt.Sprintf("%s in %d packages (%d without test files)", t.counts(), len(s.pkgs), noFiles)
}
