package bundle

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// Test keys from fixed seeds: ed25519 signing is deterministic, so envelopes are golden-stable.
var (
	testKey  = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	testPub  = testKey.Public().(ed25519.PublicKey)
	otherKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize))
	otherPub = otherKey.Public().(ed25519.PublicKey)
	testTime = time.Date(2026, 3, 14, 15, 9, 26, 535000000, time.UTC)
)

func testInputs() Inputs {
	return Inputs{
		Files: map[string]string{
			"suite/tender.yaml":      digestBytes([]byte("suite")),
			"suite/pairs/p1.patch":   digestBytes([]byte("patch p1")),
			"suite/pairs/p2.patch":   digestBytes([]byte("patch p2")),
			"suite/assets/hidden.py": digestBytes([]byte("hidden asset")),
		},
		Tool:    "tender v0.1.0-test",
		Options: map[string]string{"backend": "docker", "shard": "1/2"},
		Images:  map[string]string{"tender-verifier:py311": "sha256:" + digestBytes([]byte("image config"))},
	}
}

// fixtureBundle copies testdata/bundle into a fresh directory.
func fixtureBundle(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(dir, os.DirFS("testdata/bundle")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sealedBundle is a fixture bundle sealed with key (nil: unsigned).
func sealedBundle(t testing.TB, key ed25519.PrivateKey) (string, *Manifest) {
	t.Helper()
	dir := fixtureBundle(t)
	m, err := Seal(dir, testInputs(), key, testTime)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	return dir, m
}

func readEnvelopeFile(t testing.TB, dir string) *dsse.Envelope {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, EnvelopeName))
	if err != nil {
		t.Fatal(err)
	}
	var env dsse.Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	return &env
}

func writeEnvelopeFile(t testing.TB, dir string, env *dsse.Envelope) {
	t.Helper()
	data, err := encodeEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, EnvelopeName), data)
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// statementMap decodes an envelope's statement into generic JSON for editing.
func statementMap(t testing.TB, env *dsse.Envelope) map[string]any {
	t.Helper()
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// setStatement re-encodes m canonically (sorted keys) as env's payload; signatures stay.
func setStatement(t testing.TB, env *dsse.Envelope, m map[string]any) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	env.Payload = base64.StdEncoding.EncodeToString(b)
}

// editStatement applies edit to the statement in dir's envelope, keeping the signature.
func editStatement(t testing.TB, dir string, edit func(st map[string]any)) {
	t.Helper()
	env := readEnvelopeFile(t, dir)
	st := statementMap(t, env)
	edit(st)
	setStatement(t, env, st)
	writeEnvelopeFile(t, dir, env)
}

// subjectsOf returns the statement's subject list for editing.
func subjectsOf(st map[string]any) []any { return st["subject"].([]any) }

// setSubjectDigest sets the sha256 of the named subject.
func setSubjectDigest(t testing.TB, st map[string]any, name, sum string) {
	t.Helper()
	for _, s := range subjectsOf(st) {
		sm := s.(map[string]any)
		if sm["name"] == name {
			sm["digest"] = map[string]any{"sha256": sum}
			return
		}
	}
	t.Fatalf("no subject %q", name)
}

// setDependencyDigest sets the sha256 of the named resolved dependency.
func setDependencyDigest(t testing.TB, st map[string]any, name, sum string) {
	t.Helper()
	for _, d := range st["predicate"].(map[string]any)["resolvedDependencies"].([]any) {
		dm := d.(map[string]any)
		if dm["name"] == name {
			dm["digest"] = map[string]any{"sha256": sum}
			return
		}
	}
	t.Fatalf("no resolved dependency %q", name)
}

func flipByte(t testing.TB, path string, at int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[at] ^= 0x01
	writeFile(t, path, data)
}

// fileErrors flattens an error (possibly joined) into its *FileErrors.
func fileErrors(err error) []*FileError {
	var out []*FileError
	var fe *FileError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, fileErrors(e)...)
		}
		return out
	}
	if errors.As(err, &fe) {
		out = append(out, fe)
	}
	return out
}

// wantFileError fails unless err names path with sentinel, in its text too.
func wantFileError(t *testing.T, err error, sentinel error, path string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Verify passed; want %v on %s", sentinel, path)
	}
	for _, fe := range fileErrors(err) {
		if fe.Path == path && errors.Is(fe, sentinel) {
			if !bytes.Contains([]byte(err.Error()), []byte(path)) {
				t.Fatalf("error text does not name %s: %v", path, err)
			}
			return
		}
	}
	t.Fatalf("want %v on %s, got: %v", sentinel, path, err)
}
