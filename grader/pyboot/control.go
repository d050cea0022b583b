package pyboot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/tender-grader/tender/report/junit"
)

const controlPrefix = "TENDER-CONTROL "

// Sentinel is one copy of the required test Of that the planter wrote at the end of its
// module: a twin is a verbatim copy (it passes when Of passes), a rephrased copy says Of's
// checks another way (it passes when Of passes, and its code is not Of's), a negation has one
// assertion turned around (it fails when Of passes), an unguarded copy has its guards turned off.
type Sentinel struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Of   string `json:"of,omitempty"`
}

// Sentinel kinds.
const (
	Twin = "twin"
	// Rephrased is a copy of Of whose asserts are `if not (X): raise AssertionError` and whose
	// raises blocks are a try whose else raises: it must pass when Of passes.
	Rephrased = "rephrased"
	Negated   = "negated" // a copy of the required test Of with one assertion turned around: never passes with Of
	// Unguarded is a copy of Of whose guards (an `if` that returns before any assertion) are
	// turned off: it passes when Of passed without taking one.
	Unguarded = "unguarded"
)

// Plan is what the planter did, as it told Tender through its own step: the sentinels, and the
// held sites of each test (by node ID: the required tests and the copies). Shifts lists, per
// test module, the blocks of lines it inserted: [line after which, count], in the numbering of
// the module as it was (one block after the module's last line: no original line moves). Lines
// is the line of each required test the planter found in its own parse of the test module (its
// first decorator, or its def): the only line of a required test Tender shows.
type Plan struct {
	V         int                 `json:"v"`
	Sentinels []Sentinel          `json:"sentinels"`
	Shifts    map[string][][2]int `json:"shifts"`
	Lines     map[string]int      `json:"lines"`
	Held      map[string]HeldTest `json:"held"`
}

// HeldTest is a test's held sites: the tokens its top-level assertions ask the bootstrap's
// parent with, and whether they are all of its assertions (Full: then it has no copy).
type HeldTest struct {
	Tokens []string `json:"tokens"`
	Full   bool     `json:"full"`
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
	// StreamEnded: the test process's streams reached their end after it ended. A process it
	// forked that keeps one open leaves it unfinished, and its outcomes unsure.
	StreamEnded bool `json:"stream_ended"`
	// Held is the parent's own record of the held comparisons, by token and the test that
	// asked; HeldUnknown counts the asks it could not place (an unknown token, a garbled line).
	Held        []HeldRecord `json:"held"`
	HeldUnknown int          `json:"held_unknown"`
}

// HeldRecord is what the parent saw of one held site while one test ran: how often the value
// the test process sent held, did not, was decided in the test process by the value's own
// comparison (the parent could not compare it), and claimed to equal a decoy.
type HeldRecord struct {
	Token, Key                           string
	Matched, Mismatched, Evaluated, Lies int
}

// UnmarshalJSON reads the parent's [token, key, matched, mismatched, evaluated, lies].
func (h *HeldRecord) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if len(raw) != 6 {
		return fmt.Errorf("a held record has %d fields, want 6", len(raw))
	}
	if err := json.Unmarshal(raw[0], &h.Token); err != nil {
		return err
	}
	if err := json.Unmarshal(raw[1], &h.Key); err != nil {
		return err
	}
	for i, n := range []*int{&h.Matched, &h.Mismatched, &h.Evaluated, &h.Lies} {
		if err := json.Unmarshal(raw[2+i], n); err != nil {
			return err
		}
	}
	return nil
}

// Control is everything the bootstrap reported on one check, with the planter's plan.
type Control struct {
	Plan    *Plan
	Started bool // the parent read its configuration and started the tests
	Hits    []Hit
	End     *End
	Error   string // the stage at which the bootstrap gave up, when it did
	// Stray counts lines of the check's nonce that the bootstrap's parent never writes: a second
	// start or end, or any line after the end. Another process that learned the nonce wrote them.
	Stray int
}

// Read collects the control lines of nonce from a verifier's stdout. Only lines that carry
// the nonce count; the start must come first and counts once, hits count between the start and
// the end, and nothing after the end counts. A line cut by the output cap does not parse and
// is ignored, so a flood can only make a report unbelievable, never believable. The plan is
// not among them: the caller sets it from the planter's own output (ParsePlan).
func Read(stdout []byte, nonce string) Control {
	var c Control
	if nonce == "" {
		return c
	}
	prefix := []byte(controlPrefix + nonce + " ")
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		kind, payload, _ := bytes.Cut(rest, []byte(" "))
		if c.End != nil || c.Error != "" || c.Started && string(kind) == "start" {
			if c.End != nil || string(kind) == "start" {
				c.Stray++
			}
			continue
		}
		switch string(kind) {
		case "start":
			var v struct{ V int }
			if len(c.Hits) == 0 && json.Unmarshal(payload, &v) == nil && v.V == 2 {
				c.Started = true
			}
		case "hit":
			var h Hit
			if c.Started && json.Unmarshal(payload, &h) == nil {
				c.Hits = append(c.Hits, h)
			}
		case "end":
			var e End
			if c.Started && json.Unmarshal(payload, &e) == nil {
				c.End = &e
			}
		case "error":
			var e struct{ Stage string }
			// After the start too: the child can die before it reads its configuration (no
			// pytest in the image), and the parent's write to it fails before any candidate
			// code has run.
			if json.Unmarshal(payload, &e) == nil {
				c.Error = "stage " + e.Stage
			}
		}
	}
	return c
}

// Locate gives every case of a pytest report the file of its ID and the line the plan has for
// it, or none: the report's own file and line attributes are written inside the test process,
// whose code can set any line it likes on a test (compat_co_firstlineno) and so carry bytes of
// a hidden file into what Tender shows. A nil plan (no bootstrap) leaves no line at all.
func (p *Plan) Locate(rep *junit.Report) {
	if rep == nil {
		return
	}
	for i := range rep.Cases {
		c := &rep.Cases[i]
		c.Line = 0
		if file, _, ok := strings.Cut(c.ID, "::"); ok {
			c.File = file
		}
		if p != nil {
			c.Line = p.Lines[c.ID]
		}
	}
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

// Summary is one line for the operator's log: what the planter planted and the bootstrap saw.
func (c Control) Summary() string {
	switch {
	case c.Error != "":
		return "bootstrap: gave up at " + c.Error
	case c.Plan == nil:
		return "bootstrap: no plan (the planter did not run, or its output was lost)"
	case !c.Started:
		return "bootstrap: no start line (it did not run, or its output was lost)"
	}
	kinds := map[string]int{}
	for _, s := range c.Plan.Sentinels {
		kinds[s.Kind]++
	}
	full := 0
	for _, h := range c.Plan.Held {
		if h.Full {
			full++
		}
	}
	s := fmt.Sprintf("bootstrap: %d test(s) with held sites (%d wholly), %d twin(s), %d rephrased, %d negation(s) "+
		"and %d unguarded copy(ies) planted; %d tripwire hit(s)", len(c.Plan.Held), full, kinds[Twin],
		kinds[Rephrased], kinds[Negated], kinds[Unguarded], len(c.Hits))
	if c.End == nil {
		return s + "; no end line"
	}
	return s + fmt.Sprintf("; the test process ended with %d", c.End.Exit)
}
