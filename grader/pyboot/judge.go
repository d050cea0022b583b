package pyboot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/junit"
)

// Run is what the grader knows of one pytest check besides the control lines.
type Run struct {
	Report *junit.Report // nil when the report is missing or does not parse
	JUnit  []byte        // the report as read back; nil when missing or over the cap
	Exit   int
	// Ended is false when Tender stopped the run (deadline, memory): then a missing end
	// line is explained and no report is expected.
	Ended bool
	// StdoutCut: the verifier's stdout was over its capture cap. Only the bootstrap's parent
	// writes there (the tests, setup and post commands write to stderr), a few lines, so only a
	// process that opened another's stdout (through /proc) to flood it gets it cut.
	StdoutCut bool
	// Regression: the check runs pass_to_pass tests. A twin that fails after its original
	// passed is then only noted: some projects' tests cannot run twice in one process (astroid
	// 1333's test_do_not_load_twice), and a candidate has little to gain from a regression test
	// it did not break. In the target check it is a forgery.
	Regression bool
}

// Findings is what the control lines and the report say together.
type Findings struct {
	Forged []report.Reason // the report cannot be believed: the pair is an integrity violation
	Failed []report.Reason // the check fails, and nothing shows forgery
	Notes  []report.Reason // tripwires that decide nothing
	Broken string          // the bootstrap could not run the tests: no verdict
	// BrokenCode is Broken's reason code: CodeBootstrap.
	BrokenCode report.Code
}

// Judge checks a pytest check's report against what the bootstrap saw. It is pure.
func (c Control) Judge(r Run) Findings {
	var f Findings
	switch {
	case c.Stray > 0:
		f.forged(
			"the control channel holds lines with the check's nonce that the bootstrap did not write (a second plan or end, or lines after the end)",
		)
		return f
	case r.StdoutCut:
		f.forged("the control channel was flooded past its cap by a process other than the bootstrap's parent")
		return f
	}
	if c.Error != "" {
		f.Broken, f.BrokenCode = "Tender's pytest bootstrap could not prepare the run ("+c.Error+")", report.CodeBootstrap
		return f
	}
	if c.Plan == nil || !c.Started {
		switch {
		case !r.Ended:
		case r.JUnit != nil:
			f.forged("a report exists, but Tender's bootstrap never started the tests")
		default:
			f.Broken, f.BrokenCode = "Tender's pytest bootstrap did not start; is python3 with pytest in the verifier image?", report.CodeBootstrap
		}
		return f
	}
	c.judgeEnd(r, &f)
	c.judgeHits(&f)
	if r.Report != nil {
		c.judgeOutcomes(r, &f)
		c.judgeHeld(r, &f)
		c.judgeSentinels(r.Report, r.Regression, &f)
	}
	return f
}

func (f *Findings) forged(detail string) {
	f.Forged = append(f.Forged, report.Reason{Code: report.CodeReportForged, Detail: detail})
}

// judgeEnd: the end line carries the only exit status and report digest that the code under
// test could not have written.
func (c Control) judgeEnd(r Run, f *Findings) {
	e := c.End
	if e == nil {
		// The plan was written, and Tender did not stop the run, yet the parent wrote no end
		// line: the control channel was broken from inside (the parent killed, its stdout
		// flooded). That is evidence whatever the report's state, which only races decide.
		if r.Ended {
			f.forged(
				"the bootstrap's control channel broke after its plan (no end line) while Tender did not stop the run",
			)
		}
		return
	}
	if e.Exit != r.Exit {
		f.forged(fmt.Sprintf("the verifier exited %d, but the test process ended with %d", r.Exit, e.Exit))
	}
	if r.JUnit != nil {
		sum := sha256.Sum256(r.JUnit)
		switch {
		case e.JUnitSHA256 == "":
			f.forged("a report appeared after the test process ended")
		case hex.EncodeToString(sum[:]) != e.JUnitSHA256:
			f.forged("the report was changed after the test process ended")
		}
	}
	if !r.Ended {
		return // a deadline or the memory limit ended the run; those reasons say why
	}
	if e.Exit != 0 && e.Exit != 1 {
		f.Failed = append(f.Failed, report.Reason{Code: report.CodeExitCodeMismatch, Detail: exitMeaning(e)})
	}
}

func exitMeaning(e *End) string {
	if e.Signal > 0 {
		return fmt.Sprintf("the test process died of signal %d; a complete pytest run ends with 0 or 1", e.Signal)
	}
	meaning := map[int]string{2: "interrupted, or errors during collection", 3: "an internal error", 4: "a usage error", 5: "no tests collected"}[e.Exit]
	if meaning == "" {
		meaning = "not a status pytest gives"
	}
	return fmt.Sprintf("pytest exited %d (%s); a complete run ends with 0 or 1", e.Exit, meaning)
}

// judgeSentinels: a twin or a rephrased copy must pass when the test it copies passed (in the
// regression check that is only noted); a negation must not pass when the test it copies
// passed. An unguarded copy that fails after the test it copies passed fails the target check
// (the test passed by returning before it checked anything) and is noted in the regression check.
func (c Control) judgeSentinels(rep *junit.Report, regression bool, f *Findings) {
	byID := map[string][]junit.Status{}
	for _, cs := range rep.Cases {
		byID[cs.ID] = append(byID[cs.ID], cs.Status)
	}
	// copyDisagrees decides a copy that disagrees with the test it copies: a forgery in the
	// target check, a note in the regression check. It reports whether the check is decided.
	copyDisagrees := func(note, forged string) bool {
		if regression {
			f.Notes = append(f.Notes, report.Reason{Code: report.CodeTripwire, Detail: note})
			return false
		}
		f.forged(forged)
		return true
	}
	passed := func(id string) bool { st := byID[id]; return len(st) == 1 && st[0] == junit.Passed }
	unguardedSeen := map[string]bool{}
	for _, s := range c.Plan.Sentinels {
		switch s.Kind {
		case Twin, Rephrased:
			if passed(s.Of) && !passed(s.ID) &&
				copyDisagrees(
					"a regression test passed while a copy of it that must pass, run after it, did not: a test that cannot run twice in one process, or a forged result",
					"a required test passed while a copy of it that must pass did not: the test's result was forged",
				) {
				return
			}
		case Unguarded:
			// Decides no forgery: an honest test may return early because the image lacks an
			// optional dependency, and then its copy errors. A required test that passed only by
			// returning before it checked anything proves nothing, though: the check fails.
			if !passed(s.Of) || passed(s.ID) || unguardedSeen[s.Of] {
				continue
			}
			unguardedSeen[s.Of] = true
			if regression {
				f.Notes = append(
					f.Notes,
					report.Reason{
						Code:   report.CodeTripwire,
						Detail: "a regression test passed by returning early on a guard before it checked anything",
					},
				)
				continue
			}
			file, _, _ := strings.Cut(s.Of, "::")
			f.Failed = append(f.Failed, report.Reason{Code: report.CodeTestFailed, Path: file, Line: c.Plan.Lines[s.Of],
				Detail: s.Of + ": passed only by returning early on a guard before it checked anything (a copy without the guard failed)"})
		case Negated:
			neg := byID[s.ID]
			if !passed(s.Of) || len(neg) == 0 || neg[0] != junit.Passed {
				continue
			}
			if copyDisagrees(
				"a test passed, and so did a copy of it with one assertion turned around, run after it: a test that behaves differently the second time in one process, or neutered assertions",
				"a required test passed, and so did a copy of it with one assertion turned around: the test's assertions were neutered, or the report was forged",
			) {
				return
			}
		}
	}
}

// tripwire is what Tender says about one kind of hit, and whether it fails the check.
type tripwire struct {
	detail string
	fails  bool
}

// tripwires is the only vocabulary a hit is shown in. Which hits fail a check was decided
// with data: none of the deciding ones fires in honest runs of the demo suite, the honest corpus
// (fixtures/honest: one real test style a pair) or a real project (the README's tripwire table
// has the counts). What honest code can do (a test that signals itself, swaps the code of a
// function it defined, runs its body in another thread) is only noted.
var tripwires = map[Hit]tripwire{
	{"write", "report"}: {
		"the code under test wrote the report file itself",
		true,
	},
	{"write", "tender"}: {
		"the code under test wrote into Tender's own directory",
		true,
	},
	{"write", "test"}: {
		"the code under test rewrote a test module during the run",
		true,
	},
	{"signal", "own process group"}: {
		"the code under test sent a fatal signal to its own process group",
		true,
	},
	{"recompile", "test module"}: {
		"the code under test compiled or ran a test module itself (an import hook that rewrites tests)",
		true,
	},
	{"patch", "test or pytest function code"}: {
		"the code under test replaced the code of a test or pytest function",
		true,
	},
	{"patch", "pytest class"}: {
		"the code under test changed a pytest class",
		true,
	},
	{"patch", "pytest or pluggy internals"}: {
		"the code under test patched pytest or pluggy",
		true,
	},
	{"patch", "unittest internals"}: {"the code under test patched unittest", true},
	{"patch", "builtins"}: {
		"the code under test replaced a builtin or a standard function",
		true,
	},
	{"loader", "test module loaded by a foreign importer"}: {
		"a test module was loaded by an importer of the code under test",
		true,
	},
	{"plugin", "a pytest plugin of the code under test"}: {
		"the code under test registered a pytest plugin",
		true,
	},
	{"note:ctypes", "loaded a C library through ctypes"}: {
		"the code under test loaded a C library through ctypes",
		false,
	},
	{"note:ctypes", "called a C function through ctypes"}: {
		"the code under test called a C function through ctypes",
		false,
	},
	{"note:gc", "walked every object of the interpreter"}: {
		"the code under test walked every object of the interpreter",
		false,
	},
	{"note:gc", "walked the referrers of an object"}: {
		"the code under test walked the referrers of an object",
		false,
	},
	{"note:frames", "read the frames of every thread"}: {
		"the code under test read the frames of every thread",
		false,
	},
	{"note:trace", "installed a trace function"}: {
		"the code under test installed a trace function",
		false,
	},
	{"note:trace", "installed a profile function"}: {
		"the code under test installed a profile function",
		false,
	},
	{"note:bypass", "a test passed without its own code running"}: {
		"a test passed without its own code running where Tender watched for it: it may have been replaced",
		false,
	},
	{"note:signal", "sent a fatal signal to the test process itself"}: {
		"the test process sent a fatal signal to itself",
		false,
	},
	{"note:patch", "replaced the code of a function"}: {
		"a test replaced the code of a function it defined",
		false,
	},
	{"patch", "standard library"}: {
		"the code under test replaced a function or method of the standard library or unittest.mock",
		true,
	},
	{"patch", "standard function in an assertion"}: {
		"an assertion called a builtin or standard function the code under test had replaced",
		true,
	},
	{"patch", "what Tender planted"}: {
		"the code under test replaced what Tender planted in a test module, or put back unittest's own equality " +
			"assertions behind Tender's",
		true,
	},
	{"note:values", "a value compared differently by its plain value"}: {
		"a value of a subclass of a builtin type compared differently from the plain value it holds: its equality lies, or is its own",
		false,
	},
}

func (c Control) judgeHits(f *Findings) {
	seen := map[string]bool{}
	for _, h := range c.Hits {
		w, ok := tripwires[h]
		if !ok {
			w = tripwire{detail: "the test process sent a tripwire message Tender does not know", fails: false}
		}
		if seen[w.detail] {
			continue
		}
		seen[w.detail] = true
		if w.fails {
			f.Forged = append(f.Forged, report.Reason{Code: report.CodeTampering, Detail: w.detail})
		} else {
			f.Notes = append(f.Notes, report.Reason{Code: report.CodeTripwire, Detail: w.detail})
		}
	}
}

// judgeOutcomes compares the report with what the test process saw as each test ended: the
// tests the report says passed must be exactly those pytest reported passed, phase by phase.
// A report edited inside the test process (pytest's own report writer fed other results)
// differs here even when it is written by pytest and its digest holds.
func (c Control) judgeOutcomes(r Run, f *Findings) {
	e := c.End
	if e == nil || !r.Ended {
		return
	}
	if !e.StreamEnded {
		f.forged("a process the test process forked kept the outcome stream open after the test process ended")
		return
	}
	if e.OutcomeDups > 0 {
		f.forged("the test process sent two outcomes for one test")
		return
	}
	// A collection error is in the report but is no test's outcome: only a passed test counts.
	if e.Outcomes == 0 &&
		slices.ContainsFunc(r.Report.Cases, func(c junit.Case) bool { return c.Status == junit.Passed }) {
		f.forged("the report says tests passed, but the test process sent no outcome for any")
		return
	}
	if passedDigest(r.Report) != e.PassedSHA256 {
		f.forged("the tests the report says passed are not the ones the test process saw pass")
	}
}

// passedDigest is the digest the bootstrap's parent makes of the passed tests, made from the
// report.
func passedDigest(rep *junit.Report) string {
	seen := map[string]bool{}
	for _, c := range rep.Cases {
		if c.Status == junit.Passed {
			seen[TestKey(c.ID)] = true
		}
	}
	keys := slices.Sorted(maps.Keys(seen))
	sum := sha256.Sum256([]byte(strings.Join(keys, "\n")))
	return hex.EncodeToString(sum[:])
}

// judgeHeld reads the parent's own record of the held comparisons against the report. A
// value that claimed to equal a foreign object (asker.py) lied about its equality: forged. A test the report says
// passed, while one of its held assertions did not hold as it ran, was not passed: the report
// was forged (a held assertion raises when it does not hold, and nothing honest catches what a
// top-level assertion raises). A required test of the target check the report says passed,
// while one of its held assertions was never asked as it ran, passed without checking what it
// checks: it fails. Anywhere else a held site never asked is noted.
func (c Control) judgeHeld(r Run, f *Findings) {
	if c.End == nil || c.Plan == nil {
		return
	}
	rec := map[[2]string]HeldRecord{}
	evaluated := false
	for _, h := range c.End.Held {
		rec[[2]string{h.Token, h.Key}] = h
		evaluated = evaluated || h.Evaluated > 0
		if h.Lies > 0 {
			f.forged("a value the code under test returned claimed to equal a value it cannot equal (the held literal " +
				"with an object of a class Tender made in it, or a str, bytes or number literal and a decoy of it too, " +
				"which no honest equality accepts): it lies about its equality")
			return
		}
	}
	if evaluated {
		f.Notes = append(f.Notes, report.Reason{Code: report.CodeTripwire, Detail: "a held comparison was decided " +
			"by the test's value's own equality: Tender could not compare a value of its type with the literal itself (a value " +
			"that also claims decoys of a container literal has a looser equality, which is only noted)"})
	}
	required := map[string]bool{}
	for id := range c.Plan.Lines {
		required[id] = true
	}
	passed := map[string]bool{}
	for _, cs := range r.Report.Cases {
		if cs.Status == junit.Passed {
			passed[cs.ID] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.Plan.Held)) {
		if !passed[id] {
			continue
		}
		key := TestKey(id)
		for _, tok := range c.Plan.Held[id].Tokens {
			h, asked := rec[[2]string{tok, key}]
			switch {
			case asked && h.Mismatched > 0:
				f.forged(fmt.Sprintf("the report says %s passed, but one of its assertions did not hold in Tender's own "+
					"comparison as it ran", id))
				return
			case !asked && required[id] && !r.Regression:
				file, _, _ := strings.Cut(id, "::")
				f.Failed = append(f.Failed, report.Reason{Code: report.CodeTestFailed, Path: file, Line: c.Plan.Lines[id],
					Detail: id + ": reported passed, but one of its assertions never ran (Tender holds its expected value " +
						"and was never asked)"})
			case !asked:
				f.Notes = append(f.Notes, report.Reason{Code: report.CodeTripwire,
					Detail: "a test passed while one of its held assertions never ran"})
			}
			if !asked {
				break
			}
		}
	}
}

// TestKey is the key the bootstrap gives a test's outcomes and held asks: the first 16 hex
// digits of the sha256 of its node ID.
func TestKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])[:16]
}
