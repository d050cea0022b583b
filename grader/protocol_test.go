package grader

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/sandbox"
)

// checkProtocol is what a verifier is told about one check: the tests it must report, and
// the sentinels the bootstrap plants among them (here the fake plays the bootstrap).
type checkProtocol struct {
	Nonce     string
	Required  []string   // required test IDs, in the order the grader gave them
	Sentinels []sentinel // the sentinels "planted" for this check
}

type sentinel struct {
	pyboot.Sentinel
	MustPass bool // true for a twin (its original passes in an honest reply); false for a mutant
}

// readProtocol is the ONE place in the tests that knows how the grader tells a verifier which
// tests to run. The fake backend and every test built on it go through it, so when the
// protocol changes, update this function (and control below) and nothing else.
//
// Today (grader/pyboot): for the pytest runner the command is the bootstrap, and the test IDs
// travel as the JSON pyboot.Config on the command's standard input, never on the command
// line. Inside a real verifier the bootstrap plants the sentinels in the test modules and
// reports them on stdout; the fake plants, in the module of the first required test, one
// twin of that test and one mutant.
//
// It returns an error, never panics or calls t.Fatal: it runs on the grader's goroutines.
func readProtocol(spec sandbox.Spec) (checkProtocol, error) {
	var cfg pyboot.Config
	if err := json.Unmarshal(spec.Stdin, &cfg); err != nil || cfg.Nonce == "" || len(cfg.IDs) == 0 {
		return checkProtocol{}, fmt.Errorf("%s: want the bootstrap's JSON configuration on stdin, got %q (%v); "+
			"if the grader's protocol changed, update readProtocol", spec.Name, spec.Stdin, err)
	}
	for _, a := range spec.Command {
		if slices.Contains(cfg.IDs, a) {
			return checkProtocol{}, fmt.Errorf("%s: the required ID %s is on the command line", spec.Name, a)
		}
	}
	file, _, _ := strings.Cut(cfg.IDs[0], "::")
	return checkProtocol{Nonce: cfg.Nonce, Required: cfg.IDs, Sentinels: []sentinel{
		{Sentinel: pyboot.Sentinel{ID: file + "::test_twin_of_first", Kind: pyboot.Twin, Of: cfg.IDs[0]}, MustPass: true},
		{Sentinel: pyboot.Sentinel{ID: file + "::test_mutant_of_first", Kind: pyboot.Mutant}},
	}}, nil
}

// controlOpts are the ways a fake run's control lines can differ from an honest bootstrap's.
type controlOpts struct {
	noPlan, noEnd bool
	endExit       *int     // nil: the verifier's exit code
	endDigest     *string  // nil: the digest of the report returned
	sawPassed     []string // nil: the test process saw pass what the report says passed
	hits          []pyboot.Hit
}

// control writes the bootstrap's control lines for a run that exited with exit and left
// report behind; passed are the tests the report says passed.
func (p checkProtocol) control(exit int, report []byte, passed []string, o controlOpts) string {
	if o.noPlan {
		return ""
	}
	line := func(kind string, v any) string {
		b, _ := json.Marshal(v)
		return "TENDER-CONTROL " + p.Nonce + " " + kind + " " + string(b) + "\n"
	}
	var sents []pyboot.Sentinel
	for _, s := range p.Sentinels {
		sents = append(sents, s.Sentinel)
	}
	out := line("plan", pyboot.Plan{V: 1, Sentinels: sents})
	for _, h := range o.hits {
		out += line("hit", h)
	}
	if o.noEnd {
		return out
	}
	if o.sawPassed != nil {
		passed = o.sawPassed
	}
	end := pyboot.End{Exit: exit, StreamEnded: true, Outcomes: len(p.Required) + len(p.Sentinels), PassedSHA256: passedDigest(passed)}
	if report != nil {
		sum := sha256.Sum256(report)
		end.JUnitSHA256 = hex.EncodeToString(sum[:])
	}
	if o.endExit != nil {
		end.Exit = *o.endExit
	}
	if o.endDigest != nil {
		end.JUnitSHA256 = *o.endDigest
	}
	return out + line("end", end)
}

// passedDigest is what the bootstrap's parent sends of the passed tests (see pyboot.End).
func passedDigest(ids []string) string {
	var keys []string
	for _, id := range ids {
		sum := sha256.Sum256([]byte(id))
		keys = append(keys, hex.EncodeToString(sum[:])[:16])
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	sum := sha256.Sum256([]byte(strings.Join(keys, "\n")))
	return hex.EncodeToString(sum[:])
}
