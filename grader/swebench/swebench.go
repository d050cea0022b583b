// Package swebench owns Tender's SWE-bench interop: it reads SWE-bench instances and
// predictions, and Import turns them into a self-contained suite (grader/suite's format), each
// repository vendored as a git bundle and each instance in the environment an --env spec gives
// its repository and version. After grading, it makes SWE-bench's files of a bundle
// (Outputs): swebench-summary.json as make_run_report writes it, each pair's report.json, and
// SWE-bench's grade of each pair's run (Resolution), which report lays out and writes.
//
// It never runs a verifier or any candidate code: the records are data, every field is checked
// before a file is written, git runs only through gitsafe on private snapshots of the
// operator's clones, and a failed import leaves nothing behind.
package swebench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/report"
)

// ErrBadRecord marks an instance or prediction that cannot be imported.
var ErrBadRecord = errors.New("bad SWE-bench record")

// Instance is the part of a SWE-bench instance Tender uses. Other fields are ignored.
type Instance struct {
	InstanceID       string   `json:"instance_id"`
	Repo             string   `json:"repo"`
	BaseCommit       string   `json:"base_commit"`
	Patch            string   `json:"patch"`
	TestPatch        string   `json:"test_patch"`
	ProblemStatement string   `json:"problem_statement"`
	FailToPass       TestList `json:"FAIL_TO_PASS"`
	PassToPass       TestList `json:"PASS_TO_PASS"`
	Version          Version  `json:"version"`
}

// Version is an instance's environment version ("2.14"). The datasets write it as a string;
// a number is taken as written in the file, so 2.10 stays "2.10".
type Version string

func (v *Version) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = Version(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("version must be a string such as \"2.14\"")
	}
	*v = Version(n.String())
	return nil
}

// RecordError is one record that cannot be imported. The other records can: with
// --keep-going the import skips it.
type RecordError struct {
	N   int    // 1-based record number (the line of a JSONL file)
	ID  string // the record's instance_id, when it has a readable one
	Err error
}

func (e *RecordError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("record %d (%s): %v", e.N, e.ID, e.Err)
	}
	return fmt.Sprintf("record %d: %v", e.N, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Prediction is one model's patch for one instance.
type Prediction struct {
	InstanceID      string  `json:"instance_id"`
	ModelPatch      *string `json:"model_patch"`
	ModelNameOrPath string  `json:"model_name_or_path"`
}

// TestList accepts a JSON list of strings or a string holding a JSON-encoded list, as the
// SWE-bench datasets use both.
type TestList []string

func (t *TestList) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*t = list
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a test list must be a JSON list of strings or a string holding one")
	}
	if strings.TrimSpace(s) == "" {
		*t = nil
		return nil
	}
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		return fmt.Errorf("the string %.40q does not hold a JSON list of strings", s)
	}
	*t = list
	return nil
}

var (
	reRepo = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// RepoID is the suite repository ID of an OWNER/NAME repo, as SWE-bench spells it in ids.
func RepoID(repo string) string { return strings.ReplaceAll(repo, "/", "__") }

// ReadInstances reads a JSONL file (or a JSON array) of instances and validates each. A record
// that cannot be imported is returned in bad, and reading goes on; err is for a file that
// cannot be read as records at all.
func ReadInstances(r io.Reader) (good []Instance, bad []*RecordError, err error) {
	seen := map[string]bool{}
	err = readRecords(r, func(n int, raw json.RawMessage) error {
		var in Instance
		var idOnly struct {
			InstanceID string `json:"instance_id"`
		}
		id := "" // the record's id only when it is usable: an import lists it, and writes it in the suite
		if json.Unmarshal(raw, &idOnly) == nil && report.ValidID(idOnly.InstanceID) {
			id = idOnly.InstanceID
		}
		fail := func(e error) error {
			bad = append(bad, &RecordError{N: n, ID: id, Err: e})
			return nil
		}
		if bytes.Equal(raw, []byte("null")) {
			return fail(fmt.Errorf("%w: the record is null; write one instance object a line", ErrBadRecord))
		}
		if err := json.Unmarshal(raw, &in); err != nil {
			return fail(fmt.Errorf("%w: %v", ErrBadRecord, err))
		}
		if err := in.validate(); err != nil {
			return fail(err)
		}
		if seen[in.InstanceID] {
			return fail(fmt.Errorf("%w: instance_id %q appears twice", ErrBadRecord, in.InstanceID))
		}
		seen[in.InstanceID] = true
		good = append(good, in)
		return nil
	})
	return good, bad, err
}

func (in *Instance) validate() error {
	switch {
	case !report.ValidID(in.InstanceID):
		return fmt.Errorf("%w: instance_id %q is not usable as a pair id", ErrBadRecord, in.InstanceID)
	case !reRepo.MatchString(in.Repo):
		return fmt.Errorf("%w: repo %q is not OWNER/NAME", ErrBadRecord, in.Repo)
	case !gitsafe.IsObjectID(in.BaseCommit):
		return fmt.Errorf("%w: base_commit %q is not 40 lowercase hex digits", ErrBadRecord, in.BaseCommit)
	case len(in.FailToPass) == 0:
		return fmt.Errorf("%w: FAIL_TO_PASS is empty; an instance needs a test that proves the fix", ErrBadRecord)
	}
	return nil
}

// ReadPredictions reads a JSONL file (or a JSON array) of predictions.
func ReadPredictions(r io.Reader) (map[string]Prediction, error) {
	out := map[string]Prediction{}
	err := readRecords(r, func(n int, raw json.RawMessage) error {
		var p Prediction
		if bytes.Equal(raw, []byte("null")) {
			return fmt.Errorf("prediction %d: %w: the record is null; write one prediction object a line",
				n, ErrBadRecord)
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("prediction %d: %w: %v", n, ErrBadRecord, err)
		}
		if !report.ValidID(p.InstanceID) {
			return fmt.Errorf("prediction %d: %w: instance_id %q is not usable", n, ErrBadRecord, p.InstanceID)
		}
		if _, dup := out[p.InstanceID]; dup {
			return fmt.Errorf("prediction %d: %w: instance_id %q appears twice", n, ErrBadRecord, p.InstanceID)
		}
		out[p.InstanceID] = p
		return nil
	})
	return out, err
}

// readRecords calls fn for each record of a JSONL stream or a JSON array.
func readRecords(r io.Reader, fn func(n int, raw json.RawMessage) error) error {
	br := bufio.NewReader(io.LimitReader(r, 1<<30))
	if err := checkBOM(br); err != nil {
		return err
	}
	first, err := peekNonSpace(br)
	if err != nil {
		return fmt.Errorf("%w: the file is empty", ErrBadRecord)
	}
	if first == '[' {
		var all []json.RawMessage
		dec := json.NewDecoder(br)
		if err := dec.Decode(&all); err != nil {
			return fmt.Errorf("%w: %v", ErrBadRecord, err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return fmt.Errorf(
				"%w: the file holds more after the JSON array; keep one array, or one record a line",
				ErrBadRecord,
			)
		}
		for i, raw := range all {
			if err := fn(i+1, raw); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 1<<20), maxRecordLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := fn(n, json.RawMessage(bytes.Clone(line))); err != nil {
			return err
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("%w: line %d is over %d MiB, the most one record may take; check that the file is "+
			"JSON Lines (one record a line) or a JSON array, or remove that record",
			ErrBadRecord, n+1, maxRecordLine>>20)
	}
	return sc.Err()
}

// maxRecordLine caps one line of a JSON Lines file of instances or predictions.
const maxRecordLine = 64 << 20

// checkBOM refuses a file that starts with a byte order mark, which JSON does not allow: the
// first record would otherwise fail as "invalid character 'ï'".
func checkBOM(br *bufio.Reader) error {
	if b, _ := br.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		return fmt.Errorf("%w: the file starts with a byte order mark (U+FEFF); save it as UTF-8 without a BOM",
			ErrBadRecord)
	}
	return nil
}

func peekNonSpace(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		if b != ' ' && b != '\n' && b != '\r' && b != '\t' {
			return b, br.UnreadByte()
		}
	}
}
