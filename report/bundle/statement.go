package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	intoto "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// Names and limits of the bundle format.
const (
	// EnvelopeName is the DSSE envelope at the top of the bundle.
	EnvelopeName = "bundle.dsse.json"
	// PayloadType is the DSSE payload type of an in-toto statement.
	PayloadType = "application/vnd.in-toto+json"
	// PredicateType identifies Tender's evidence predicate (see the package doc).
	PredicateType = "https://tender.dev/evidence/v2"
	// PredicateTypeV1 is the first format, which listed the inputs as subjects. Verify
	// refuses it with ErrOldFormat.
	PredicateTypeV1 = "https://tender.dev/evidence/v1"
	// MaxEnvelopeSize caps the envelope Seal writes and Verify reads: 32 MiB holds about
	// 150,000 subjects.
	MaxEnvelopeSize = 32 << 20
)

// volatileFields are the predicate fields that may differ between two seals of the same
// inputs and files.
var volatileFields = []string{"created"}

// Predicate is the body of the Tender evidence predicate. Fields are declared in key order.
type Predicate struct {
	Created              string            `json:"created"`
	Options              map[string]string `json:"options"`
	ResolvedDependencies []descriptor      `json:"resolvedDependencies"`
	Tool                 string            `json:"tool"`
	Volatile             []string          `json:"volatile"`
}

// descriptor is an in-toto ResourceDescriptor as Tender writes one: a name and one sha256.
type descriptor struct {
	Digest map[string]string `json:"digest"`
	Name   string            `json:"name"`
}

func descriptors(subs []Subject) []descriptor {
	out := make([]descriptor, 0, len(subs))
	for _, s := range subs {
		out = append(out, descriptor{Digest: map[string]string{"sha256": s.SHA256}, Name: s.Name})
	}
	return out
}

// statementDoc mirrors the in-toto v1 Statement for strict decoding of a hostile payload.
type statementDoc struct {
	Type          string       `json:"_type"`
	Subject       []descriptor `json:"subject"`
	PredicateType string       `json:"predicateType"`
	Predicate     Predicate    `json:"predicate"`
}

// buildStatement makes the canonical statement bytes: subjects sorted by name, keys sorted,
// no insignificant space. The in-toto library validates the statement first.
func buildStatement(subjects []Subject, pred Predicate) ([]byte, error) {
	sort.Slice(subjects, func(i, j int) bool { return subjects[i].Name < subjects[j].Name })
	st := &intoto.Statement{Type: intoto.StatementTypeUri, PredicateType: PredicateType}
	for _, s := range subjects {
		st.Subject = append(st.Subject, &intoto.ResourceDescriptor{
			Name:   s.Name,
			Digest: map[string]string{"sha256": s.SHA256},
		})
	}
	p, err := predicateStruct(pred)
	if err != nil {
		return nil, err
	}
	st.Predicate = p
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("bundle: building the statement: %w", err)
	}
	raw, err := protojson.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("bundle: encoding the statement: %w", err)
	}
	return canonicalJSON(raw)
}

// predicateStruct converts the predicate to the protobuf Struct the statement carries.
func predicateStruct(pred Predicate) (*structpb.Struct, error) {
	raw, err := json.Marshal(pred)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return structpb.NewStruct(m)
}

// canonicalJSON re-encodes one JSON value with sorted keys and no insignificant space.
// Duplicate keys collapse, so a payload equal to its canonical form has none.
func canonicalJSON(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return json.Marshal(v)
}

// parseStatement decodes a hostile payload: it must be canonical, strictly typed, accepted
// by the in-toto library, of Tender's predicate type, with valid and unique subjects and
// resolved dependencies. A statement of the first format fails with a *FileError of ErrOldFormat.
func parseStatement(payload []byte) (*statementDoc, error) {
	canon, err := canonicalJSON(payload)
	if err != nil {
		return nil, fmt.Errorf("statement is not JSON: %v", err)
	}
	if !bytes.Equal(canon, payload) {
		return nil, errors.New("statement is not in canonical form (sorted keys, no spaces, no duplicate keys)")
	}
	if err := checkFormat(payload); err != nil {
		return nil, err
	}
	doc, err := decodeStatementDoc(payload)
	if err != nil {
		return nil, err
	}
	if err := validateStatementProto(payload); err != nil {
		return nil, err
	}
	return doc, checkStatementDoc(doc)
}

// checkFormat refuses a statement of the first format before the strict decode, which would
// only say its predicate does not match the schema.
func checkFormat(payload []byte) error {
	var head struct {
		PredicateType string `json:"predicateType"`
	}
	if json.Unmarshal(payload, &head) == nil && head.PredicateType == PredicateTypeV1 {
		return fileErr(EnvelopeName, ErrOldFormat, "predicateType %s is the first evidence format, which listed "+
			"the inputs as subjects; this Tender reads %s only. Grade the suite again, or verify this bundle "+
			"with the Tender release that sealed it (its predicate's tool)", PredicateTypeV1, PredicateType)
	}
	return nil
}

// decodeStatementDoc decodes into the typed mirror, refusing unknown fields.
func decodeStatementDoc(payload []byte) (*statementDoc, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	var doc statementDoc
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("statement does not match the schema: %v", err)
	}
	return &doc, nil
}

// validateStatementProto lets the in-toto library judge the statement too.
func validateStatementProto(payload []byte) error {
	var st intoto.Statement
	if err := protojson.Unmarshal(payload, &st); err != nil {
		return fmt.Errorf("statement is not an in-toto statement: %v", err)
	}
	if err := st.Validate(); err != nil {
		return fmt.Errorf("statement is not a valid in-toto statement: %v", err)
	}
	return nil
}

// checkStatementDoc applies Tender's own rules on top of the schema.
func checkStatementDoc(doc *statementDoc) error {
	if doc.Type != intoto.StatementTypeUri {
		return fmt.Errorf("statement _type is %q, want %q", doc.Type, intoto.StatementTypeUri)
	}
	if doc.PredicateType != PredicateType {
		return fmt.Errorf("predicateType is %q, want %q", doc.PredicateType, PredicateType)
	}
	if err := checkVolatile(doc.Predicate.Volatile); err != nil {
		return err
	}
	if _, err := time.Parse(time.RFC3339Nano, doc.Predicate.Created); err != nil {
		return fmt.Errorf("predicate created is not an RFC 3339 time: %v", err)
	}
	if err := checkSubjects(doc.Subject); err != nil {
		return err
	}
	if doc.Predicate.ResolvedDependencies == nil {
		return errors.New("predicate resolvedDependencies is missing; it lists the inputs (an empty list when none)")
	}
	return checkDependencies(doc.Predicate.ResolvedDependencies)
}

func checkVolatile(v []string) error {
	if len(v) != len(volatileFields) || (len(v) > 0 && v[0] != volatileFields[0]) {
		return fmt.Errorf("predicate volatile is %q, want %q", v, volatileFields)
	}
	return nil
}

// checkSubjects: sorted, unique, bundle-relative paths, exactly one lowercase sha256 each.
func checkSubjects(subs []descriptor) error {
	return checkDescriptors("subject", subs, checkFileName)
}

// checkDependencies: the same rules, with image/<name> or input paths as names.
func checkDependencies(deps []descriptor) error {
	return checkDescriptors("resolved dependency", deps, checkDependencyName)
}

func checkDescriptors(what string, ds []descriptor, checkName func(string) *FileError) error {
	for i, d := range ds {
		if fe := checkName(d.Name); fe != nil {
			return fmt.Errorf("%s %s: %s", what, fe.Path, fe.Detail)
		}
		if len(d.Digest) != 1 || !validHex(d.Digest["sha256"]) {
			return fmt.Errorf("%s %q must have exactly one digest, a lowercase hex sha256", what, safeQuote(d.Name))
		}
		if i > 0 && ds[i-1].Name >= d.Name {
			return fmt.Errorf("%ss are not sorted and unique at %q", what, safeQuote(d.Name))
		}
	}
	return nil
}
