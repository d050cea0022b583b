package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fuzzSeeds are the genuine envelopes (signed and unsigned) and every hostile one from the
// table tests.
func fuzzSeeds(f *testing.F) (signedPayload []byte) {
	signedDir, signed := sealedBundle(f, testKey)
	unsignedDir, _ := sealedBundle(f, nil)
	for _, dir := range []string{signedDir, unsignedDir} {
		data, err := os.ReadFile(filepath.Join(dir, EnvelopeName))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, tc := range hostileEnvelopes(f) {
		f.Add(tc.data)
	}
	return signed.Statement
}

// FuzzEnvelope feeds bytes to the envelope parser and the signature check: no input but
// the genuine payload may pass the signature check, and an accepted payload goes through
// the statement checks of FuzzStatement.
func FuzzEnvelope(f *testing.F) {
	genuine := fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		env, payload, err := parseEnvelope(data)
		if err != nil {
			return
		}
		if _, checked, err := checkSignature(env, testPub); err == nil && checked && !bytes.Equal(payload, genuine) {
			t.Fatalf("a payload other than the genuine one passed the signature check:\n%s", payload)
		}
		checkAcceptedStatement(t, payload)
	})
}

// FuzzStatement feeds statement bytes (the decoded payload) to the statement parser, which
// base64 hides from FuzzEnvelope's mutations.
func FuzzStatement(f *testing.F) {
	_, genuine := sealedBundle(f, testKey)
	f.Add(genuine.Statement)
	for _, tc := range hostileEnvelopes(f) {
		if _, payload, err := parseEnvelope(tc.data); err == nil {
			f.Add(payload)
		}
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		checkAcceptedStatement(t, payload)
	})
}

// checkAcceptedStatement: whatever parseStatement accepts must be exactly the statement Seal
// would build from it, and every file subject must be a local path.
func checkAcceptedStatement(t *testing.T, payload []byte) {
	doc, err := parseStatement(payload)
	if err != nil {
		return
	}
	subs := make([]Subject, 0, len(doc.Subject))
	for _, s := range doc.Subject {
		if !filepath.IsLocal(s.Name) {
			t.Fatalf("accepted a subject that is not a local path: %q", s.Name)
		}
		subs = append(subs, Subject{Name: s.Name, SHA256: s.Digest["sha256"]})
	}
	rebuilt, err := buildStatement(subs, doc.Predicate)
	if err != nil {
		t.Fatalf("accepted a statement Seal cannot build: %v\n%s", err, payload)
	}
	if !bytes.Equal(rebuilt, payload) {
		t.Fatalf("accepted statement is not what Seal builds from it:\n got %s\nwant %s", payload, rebuilt)
	}
}

// FuzzVerify writes fuzzed envelopes into a real sealed bundle. With the key, only the
// genuine envelope's statement may pass; without it, a passing statement must list exactly
// the bundle's real files and digests.
func FuzzVerify(f *testing.F) {
	genuine := fuzzSeeds(f)
	dir, sealed := sealedBundle(f, testKey)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, EnvelopeName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if m, err := Verify(dir, testPub, VerifyOptions{}); err == nil && !bytes.Equal(m.Statement, genuine) {
			t.Fatalf("Verify with the key accepted a statement that was never signed:\n%s", m.Statement)
		}
		m, err := Verify(dir, nil, VerifyOptions{})
		if err != nil {
			return
		}
		if diff := cmp.Diff(sealed.Files, m.Files); diff != "" {
			t.Fatalf("Verify accepted a statement whose files differ from the bundle's:\n%s", diff)
		}
	})
}
