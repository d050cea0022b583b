package bundle

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Subject is one digested thing: a file of the bundle (Name is the bundle-relative slash
// path), or, in Manifest.Dependencies, an input that lives outside the bundle (Name like
// "suite/tender.yaml" or "image/<name>").
type Subject struct {
	Name   string
	SHA256 string
}

// Inputs are what produced the bundle, digested by the grader at load time. They are sealed
// in the predicate, never as subjects.
type Inputs struct {
	Files   map[string]string // input name ("suite/tender.yaml") -> sha256 hex; a resolved dependency
	Tool    string            // "tender vX"
	Options map[string]string // grading options that change results (backend, shard, ...); not concurrency
	Images  map[string]string // image name -> image id ("sha256:<hex>"); the dependency "image/<name>"
}

// Manifest is what Seal wrote or Verify read and checked.
type Manifest struct {
	Files        []Subject // the statement's subjects: the bundle's own files, sorted by name
	Dependencies []Subject // the predicate's resolvedDependencies: every input, sorted by name
	Inputs       Inputs    // the same inputs as Seal took them (rebuilt from the predicate)
	Created      time.Time
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

// imageHex returns the hex of an image id "sha256:<64 hex>".
func imageHex(id string) (string, bool) {
	h, ok := strings.CutPrefix(id, "sha256:")
	return h, ok && validHex(h)
}

// checkInputs checks the tool and the options, which the predicate carries as they are.
func checkInputs(in Inputs) error {
	if in.Tool == "" || !printable(in.Tool) {
		return fmt.Errorf("bundle: Inputs.Tool must be a printable tool version like \"tender v1.0.0\"")
	}
	for k, v := range in.Options {
		if k == "" || !printable(k) || !printable(v) {
			return fmt.Errorf(
				"bundle: option %q: names and values must be printable and names non-empty",
				safeQuote(k),
			)
		}
	}
	return nil
}

// dependencies lists the input files and images as resolved dependencies, after checking
// every name and digest, sorted by name.
func dependencies(in Inputs) ([]Subject, error) {
	var deps []Subject
	for name, id := range in.Images {
		h, ok := imageHex(id)
		if fe := checkImageName(name); fe != nil || !ok {
			return nil, fmt.Errorf(
				"bundle: image %q: want a printable name and an id like sha256:<64 hex>, got %q",
				safeQuote(name),
				safeQuote(id),
			)
		}
		deps = append(deps, Subject{depImage + name, h})
	}
	for name, sum := range in.Files {
		if reason := pathProblem(name); reason != "" {
			return nil, fmt.Errorf("bundle: input file %q: %s", safeQuote(name), reason)
		}
		if strings.HasPrefix(name, depImage) {
			return nil, fmt.Errorf("bundle: input file %q: the names image/... are reserved for images", name)
		}
		if !validHex(sum) {
			return nil, fmt.Errorf("bundle: input file %q: digest must be a lowercase hex sha256", name)
		}
		deps = append(deps, Subject{name, sum})
	}
	sort.Slice(deps, func(i, j int) bool { return deps[i].Name < deps[j].Name })
	return deps, nil
}

// inputsOf rebuilds Inputs from a predicate that parseStatement accepted.
func inputsOf(pred Predicate) (Inputs, []Subject) {
	in := Inputs{Files: map[string]string{}, Images: map[string]string{}, Tool: pred.Tool, Options: pred.Options}
	deps := make([]Subject, 0, len(pred.ResolvedDependencies))
	for _, d := range pred.ResolvedDependencies {
		sum := d.Digest["sha256"]
		deps = append(deps, Subject{d.Name, sum})
		if img, ok := strings.CutPrefix(d.Name, depImage); ok {
			in.Images[img] = "sha256:" + sum
		} else {
			in.Files[d.Name] = sum
		}
	}
	return in, deps
}
