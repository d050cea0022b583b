package pyboot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

const controlPrefix = "TENDER-CONTROL "

// Sentinel is one test the bootstrap wrote into a test module. A twin is a verbatim copy of
// the required test Of; a mutant is a copy of some test with one expected value replaced by
// a random value of the same shape (it must not pass); a near mutant is a copy of the
// required test Of with one expected value changed a little (it never passes together with
// Of).
type Sentinel struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Of   string `json:"of,omitempty"`
}

// Sentinel kinds.
const (
	Twin    = "twin"
	Mutant  = "mutant"
	Near    = "near"
	Negated = "negated" // a copy of the required test Of with one assertion turned around: never passes with Of
)

// Plan is where the bootstrap put the sentinels. Shifts lists, per test module, the blocks of
// lines it inserted: [line after which, count], in the numbering of the module as it was.
type Plan struct {
	V         int                 `json:"v"`
	Sentinels []Sentinel          `json:"sentinels"`
	Shifts    map[string][][2]int `json:"shifts"`
}

// Hit is a tripwire the code under test set off, as the test process reported it. Kind and
// What are free text from inside the verifier: they are matched against Tender's own list
// and never shown as they are.
type Hit struct {
	Kind string `json:"kind"`
	What string `json:"what"`
}

// End is how the test process ended, as the bootstrap's parent saw it: its exit status, and
// the digest of the report file at that moment ("" when there was none).
type End struct {
	Exit        int    `json:"exit"`
	Signal      int    `json:"signal"`
	JUnitSHA256 string `json:"junit_sha256"`
	Hits        int    `json:"hits"`
	// What the test process itself saw, test by test, as it ran: how many tests sent an
	// outcome, how many sent two, and the digest of the ones that passed (sha256 over the
	// sorted lines of the first 16 hex digits of each passed test's sha256).
	Outcomes     int    `json:"outcomes"`
	OutcomeDups  int    `json:"outcome_dups"`
	PassedSHA256 string `json:"passed_sha256"`
	// StreamEnded: the outcome stream reached its end after the test process ended. A process
	// it forked that keeps the stream open leaves it unfinished, and its outcomes unsure.
	StreamEnded bool `json:"stream_ended"`
}

// Control is everything the bootstrap reported on one check.
type Control struct {
	Plan  *Plan
	Hits  []Hit
	End   *End
	Error string // the stage at which the bootstrap gave up, when it did
}

// Read collects the control lines of nonce from a verifier's stdout. Only lines that carry
// the nonce count; the plan must come first and counts once, hits count between the plan and
// the end, and nothing after the end counts. A line cut by the output cap does not parse and
// is ignored, so a flood can only make a report unbelievable, never believable.
func Read(stdout []byte, nonce string) Control {
	var c Control
	if nonce == "" {
		return c
	}
	prefix := []byte(controlPrefix + nonce + " ")
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, prefix)
		if !ok || c.End != nil || c.Error != "" {
			continue
		}
		kind, payload, _ := bytes.Cut(rest, []byte(" "))
		switch string(kind) {
		case "plan":
			if c.Plan == nil && len(c.Hits) == 0 {
				var p Plan
				if json.Unmarshal(payload, &p) == nil && p.V == 1 {
					c.Plan = &p
				}
			}
		case "hit":
			var h Hit
			if c.Plan != nil && json.Unmarshal(payload, &h) == nil {
				c.Hits = append(c.Hits, h)
			}
		case "end":
			var e End
			if c.Plan != nil && json.Unmarshal(payload, &e) == nil {
				c.End = &e
			}
		case "error":
			var e struct{ Stage string }
			if c.Plan == nil && json.Unmarshal(payload, &e) == nil {
				c.Error = "stage " + e.Stage
			}
		}
	}
	return c
}

// Mutants counts the sentinels that must not pass.
func (p *Plan) Mutants() int {
	n := 0
	for _, s := range p.Sentinels {
		if s.Kind == Mutant {
			n++
		}
	}
	return n
}

// OriginalLine maps a line of a test module as it ran (sentinels inserted) back to the
// module as it was. It returns 0 for a line inside an inserted sentinel.
func (p *Plan) OriginalLine(path string, line int) int {
	if p == nil {
		return line
	}
	added := 0
	for _, s := range p.Shifts[path] {
		after, n := s[0], s[1]
		if line <= after+added {
			break
		}
		if line <= after+added+n {
			return 0
		}
		added += n
	}
	return line - added
}

// Redact takes the control lines out of a log and replaces each sentinel's name with
// "<sentinel>", so a log shown to someone never names them.
func (c Control) Redact(log []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(log, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte(controlPrefix)) {
			out.Write(line)
		}
	}
	if c.Plan == nil {
		return out.Bytes()
	}
	var names []string
	for _, s := range c.Plan.Sentinels {
		name := s.ID[strings.LastIndex(s.ID, "::")+2:]
		if i := strings.IndexByte(name, '['); i >= 0 {
			name = name[:i]
		}
		names = append(names, regexp.QuoteMeta(name))
	}
	if len(names) == 0 {
		return out.Bytes()
	}
	re := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
	return re.ReplaceAll(out.Bytes(), []byte("<sentinel>"))
}

// Summary is one line for the operator's log: what the bootstrap planted and saw.
func (c Control) Summary() string {
	switch {
	case c.Error != "":
		return "bootstrap: gave up at " + c.Error
	case c.Plan == nil:
		return "bootstrap: no plan line (it did not run, or its output was lost)"
	}
	kinds := map[string]int{}
	for _, s := range c.Plan.Sentinels {
		kinds[s.Kind]++
	}
	s := fmt.Sprintf("bootstrap: %d twin(s), %d mutant(s), %d near mutant(s) and %d negation(s) planted; %d tripwire hit(s)",
		kinds[Twin], kinds[Mutant], kinds[Near], kinds[Negated], len(c.Hits))
	if c.End == nil {
		return s + "; no end line"
	}
	return s + fmt.Sprintf("; the test process ended with %d", c.End.Exit)
}
