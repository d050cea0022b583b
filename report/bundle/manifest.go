package bundle

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Subject is one digested thing: a file of the bundle (Name is the bundle-relative slash
// path) or an input that lives outside the bundle (Name like "input:suite/tender.yaml",
// "input:image/<name>", "input:tool", "input:options").
type Subject struct {
	Name   string
	SHA256 string
}

// Inputs are what produced the bundle, digested by the grader at load time.
type Inputs struct {
	Files   map[string]string // input name ("suite/tender.yaml") -> sha256 hex; sealed as "input:<name>"
	Tool    string            // "tender vX"
	Options map[string]string // grading options that change results (backend, shard, ...); not concurrency
	Images  map[string]string // image name -> image id ("sha256:<hex>")
}

// Manifest is what Seal wrote or Verify read and checked.
type Manifest struct {
	Subjects []Subject // every subject of the statement, sorted by name
	Files    []Subject // the bundle's own files, sorted by name
	Inputs   Inputs
	Created  time.Time
	// Signed: the envelope carries a signature. SignatureChecked: it verified against the
	// public key given to Verify (Seal sets it when it signed). When Signed is true and
	// SignatureChecked is false, nobody has checked who signed it.
	Signed           bool
	SignatureChecked bool
	KeyID            string // the signature's key id ("" when unsigned)
	Statement        []byte // the exact in-toto statement (the DSSE payload)
	EnvelopeSHA256   string // sha256 of bundle.dsse.json as written or read
}

// SignatureStatus is one line for people: what the signature check established.
func (m *Manifest) SignatureStatus() string {
	switch {
	case !m.Signed:
		return "unsigned: digests were checked, but anyone could have rewritten the bundle"
	case m.SignatureChecked:
		return "signature verified with key " + m.KeyID
	}
	return "signed by key " + m.KeyID + ", but the signature was NOT checked (no public key given)"
}

// optionsDigest is the digest of "input:options": compact JSON with sorted keys.
func optionsDigest(opts map[string]string) string {
	if opts == nil {
		opts = map[string]string{}
	}
	b, err := json.Marshal(opts) // map keys are sorted; strings cannot fail
	if err != nil {
		panic(err)
	}
	return digestBytes(b)
}

// imageHex returns the hex of an image id "sha256:<64 hex>".
func imageHex(id string) (string, bool) {
	h, ok := strings.CutPrefix(id, "sha256:")
	return h, ok && validHex(h)
}

// inputSubjects lists the inputs as subjects, after checking every name and digest.
func inputSubjects(in Inputs) ([]Subject, error) {
	if in.Tool == "" || !printable(in.Tool) {
		return nil, fmt.Errorf("bundle: Inputs.Tool must be a printable tool version like \"tender v1.0.0\"")
	}
	subs := []Subject{{inputTool, digestBytes([]byte(in.Tool))}, {inputOptions, optionsDigest(in.Options)}}
	for k, v := range in.Options {
		if k == "" || !printable(k) || !printable(v) {
			return nil, fmt.Errorf("bundle: option %q: names and values must be printable and names non-empty", safeQuote(k))
		}
	}
	for name, id := range in.Images {
		h, ok := imageHex(id)
		if fe := checkImageName(name); fe != nil || !ok {
			return nil, fmt.Errorf("bundle: image %q: want a printable name and an id like sha256:<64 hex>, got %q", safeQuote(name), safeQuote(id))
		}
		subs = append(subs, Subject{inputImage + name, h})
	}
	files, err := inputFileSubjects(in.Files)
	return append(subs, files...), err
}

func inputFileSubjects(files map[string]string) ([]Subject, error) {
	var subs []Subject
	for name, sum := range files {
		if reason := pathProblem(name); reason != "" {
			return nil, fmt.Errorf("bundle: input file %q: %s", safeQuote(name), reason)
		}
		if name == "tool" || name == "options" || strings.HasPrefix(name, "image/") || strings.HasPrefix(name, inputPrefix) {
			return nil, fmt.Errorf("bundle: input file %q: the names tool, options, image/... and input:... are reserved (the prefix input: is added for you)", name)
		}
		if !validHex(sum) {
			return nil, fmt.Errorf("bundle: input file %q: digest must be a lowercase hex sha256", name)
		}
		subs = append(subs, Subject{inputPrefix + name, sum})
	}
	return subs, nil
}

// split separates bundle files from inputs and rebuilds Inputs from the predicate.
func (m *Manifest) split(pred Predicate) {
	m.Inputs = Inputs{Files: map[string]string{}, Tool: pred.Tool, Options: pred.Options, Images: pred.Images}
	for _, s := range m.Subjects {
		rest, isInput := strings.CutPrefix(s.Name, inputPrefix)
		switch {
		case !isInput:
			m.Files = append(m.Files, s)
		case s.Name != inputTool && s.Name != inputOptions && !strings.HasPrefix(s.Name, inputImage):
			m.Inputs.Files[rest] = s.SHA256
		}
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Name < m.Files[j].Name })
}
