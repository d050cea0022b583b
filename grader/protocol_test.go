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
// the sentinels the planter plants among them (here the fake plays the planter).
type checkProtocol struct {
	Nonce     string
	Config    pyboot.Config // the bootstrap's configuration, as the grader made it from the plan
	Required  []string      // required test IDs, in the order the grader gave them
	Sentinels []sentinel    // the sentinels "planted" for this check
}

type sentinel struct {
	pyboot.Sentinel
	MustPass bool // true for a twin (its original passes in an honest reply); false for a negation
}

// readProtocol is the ONE place in the tests that knows how the grader tells a verifier which
// tests to run. The fake backend and every test built on it go through it, so when the
// protocol changes, update this function (and control below) and nothing else.
//
// Today (grader/pyboot): for the pytest runner the spec has a plant step, the planter, whose
// input (its "stdin" file) holds the required IDs; inside a real verifier it plants the
// sentinels and held sites in the test modules and writes the plan, from which the grader makes
// the bootstrap's JSON pyboot.Config (the step's Stdin), which the command reads on its standard
// input: the IDs are never on the command line. The fake plants, in the module of the first
// required test, one twin of that test and one negation (none when the input asks for no copies).
//
// It returns an error, never panics or calls t.Fatal: it runs on the grader's goroutines.
func readProtocol(spec sandbox.Spec) (checkProtocol, error) {
	if spec.Plant == nil || spec.Stdin != nil {
		return checkProtocol{}, fmt.Errorf("%s: want a plant step and no stdin of the spec's own; "+
			"if the grader's protocol changed, update readProtocol", spec.Name)
	}
	var in pyboot.PlantInput
	if err := json.Unmarshal(spec.Plant.Files["stdin"], &in); err != nil || len(in.IDs) == 0 {
		return checkProtocol{}, fmt.Errorf("%s: want the planter's JSON input, got %q (%v)", spec.Name,
			spec.Plant.Files["stdin"], err)
	}
	file, _, _ := strings.Cut(in.IDs[0], "::")
	p := checkProtocol{Required: in.IDs}
	if in.Twins > 0 {
		p.Sentinels = append(p.Sentinels, sentinel{
			Sentinel: pyboot.Sentinel{ID: file + "::test_twin_of_first", Kind: pyboot.Twin, Of: in.IDs[0]},
			MustPass: true,
		})
	}
	if in.Negated > 0 {
		p.Sentinels = append(p.Sentinels,
			sentinel{Sentinel: pyboot.Sentinel{ID: file + "::test_negation_of_first", Kind: pyboot.Negated, Of: in.IDs[0]}})
	}
	stdin, err := spec.Plant.Stdin(p.planted(nil))
	if err != nil {
		return checkProtocol{}, fmt.Errorf("%s: the grader refused the planter's output: %v", spec.Name, err)
	}
	var cfg pyboot.Config
	if err := json.Unmarshal(stdin, &cfg); err != nil || cfg.Nonce == "" {
		return checkProtocol{}, fmt.Errorf("%s: want the bootstrap's JSON configuration, got %q (%v)", spec.Name, stdin, err)
	}
	for _, id := range append(slices.Clone(in.IDs), p.ids()...) {
		if !slices.Contains(cfg.IDs, id) {
			return checkProtocol{}, fmt.Errorf("%s: the bootstrap is not told to run %s", spec.Name, id)
		}
	}
	for _, a := range spec.Command {
		if slices.Contains(cfg.IDs, a) {
			return checkProtocol{}, fmt.Errorf("%s: the required ID %s is on the command line", spec.Name, a)
		}
	}
	p.Nonce, p.Config = cfg.Nonce, cfg
	return p, nil
}

func (p checkProtocol) ids() []string {
	var ids []string
	for _, s := range p.Sentinels {
		ids = append(ids, s.ID)
	}
	return ids
}

// planted is what the fake planter writes: the plan, with lines for the required tests.
func (p checkProtocol) planted(lines map[string]int) []byte {
	var sents []pyboot.Sentinel
	for _, s := range p.Sentinels {
		sents = append(sents, s.Sentinel)
	}
	b, _ := json.Marshal(map[string]any{
		"public":  pyboot.Plan{V: 2, Sentinels: sents, Lines: lines},
		"private": map[string]any{"held": map[string]any{}},
		"ids":     p.ids(), "paths": []string{}, "files": []string{},
	})
	return b
}

// controlOpts are the ways a fake run's control lines can differ from an honest bootstrap's.
type controlOpts struct {
	noStart, noEnd bool
	endExit        *int     // nil: the verifier's exit code
	endDigest      *string  // nil: the digest of the report returned
	sawPassed      []string // nil: the test process saw pass what the report says passed
	hits           []pyboot.Hit
	lines          map[string]int // the plan's line of each required test
}

// control writes the bootstrap's control lines for a run that exited with exit and left
// report behind; passed are the tests the report says passed.
func (p checkProtocol) control(exit int, report []byte, passed []string, o controlOpts) string {
	if o.noStart {
		return ""
	}
	line := func(kind string, v any) string {
		b, _ := json.Marshal(v)
		return "TENDER-CONTROL " + p.Nonce + " " + kind + " " + string(b) + "\n"
	}
	out := line("start", map[string]int{"v": 2})
	for _, h := range o.hits {
		out += line("hit", h)
	}
	if o.noEnd {
		return out
	}
	if o.sawPassed != nil {
		passed = o.sawPassed
	}
	end := pyboot.End{
		Exit:         exit,
		StreamEnded:  true,
		Outcomes:     len(p.Required) + len(p.Sentinels),
		PassedSHA256: passedDigest(passed),
	}
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
