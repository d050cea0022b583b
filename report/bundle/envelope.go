package bundle

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// edSigner and edVerifier adapt an ed25519 key to the dsse interfaces.
type edSigner struct {
	key ed25519.PrivateKey
	id  string
}

func (s edSigner) Sign(_ context.Context, data []byte) ([]byte, error) {
	return ed25519.Sign(s.key, data), nil
}

func (s edSigner) KeyID() (string, error) { return s.id, nil }

type edVerifier struct {
	pub ed25519.PublicKey
	id  string
}

var errEd25519 = errors.New("ed25519 signature does not verify")

func (v edVerifier) Verify(_ context.Context, data, sig []byte) error {
	if !ed25519.Verify(v.pub, data, sig) {
		return errEd25519
	}
	return nil
}

func (v edVerifier) KeyID() (string, error)   { return v.id, nil }
func (v edVerifier) Public() crypto.PublicKey { return v.pub }

// makeEnvelope wraps the statement; signed when key != nil. An unsigned envelope has an
// empty signature list, not a missing one.
func makeEnvelope(payload []byte, key ed25519.PrivateKey) (*dsse.Envelope, error) {
	if key == nil {
		return &dsse.Envelope{
			PayloadType: PayloadType,
			Payload:     base64.StdEncoding.EncodeToString(payload),
			Signatures:  []dsse.Signature{},
		}, nil
	}
	signer, err := dsse.NewEnvelopeSigner(edSigner{key: key, id: KeyID(key.Public().(ed25519.PublicKey))})
	if err != nil {
		return nil, err
	}
	return signer.SignPayload(context.Background(), PayloadType, payload)
}

// encodeEnvelope is the exact byte form Seal writes.
func encodeEnvelope(env *dsse.Envelope) ([]byte, error) {
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// readCapped reads at most limit bytes and fails when r holds more.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("envelope is larger than %d bytes", limit)
	}
	return b, nil
}

// parseEnvelope decodes hostile envelope bytes strictly: no duplicate or unknown keys, no
// trailing data, Tender's payload type, strict standard base64, and at most one signature.
func parseEnvelope(data []byte) (*dsse.Envelope, []byte, error) {
	if err := checkNoDuplicateKeys(data); err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var env dsse.Envelope
	if err := dec.Decode(&env); err != nil {
		return nil, nil, fmt.Errorf("envelope does not match the DSSE schema: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("trailing data after the envelope")
	}
	if env.PayloadType != PayloadType {
		return nil, nil, fmt.Errorf("payloadType is %q, want %q", safeQuote(env.PayloadType), PayloadType)
	}
	payload, err := base64.StdEncoding.Strict().DecodeString(env.Payload)
	if err != nil {
		return nil, nil, fmt.Errorf("payload is not strict standard base64: %v", err)
	}
	return &env, payload, checkSignatureShape(env.Signatures)
}

// checkSignatureShape: Tender writes zero or one signature, an ed25519 signature in strict
// standard base64 with a key id.
func checkSignatureShape(sigs []dsse.Signature) error {
	if len(sigs) > 1 {
		return fmt.Errorf("envelope has %d signatures; Tender writes at most one", len(sigs))
	}
	for _, s := range sigs {
		raw, err := base64.StdEncoding.Strict().DecodeString(s.Sig)
		if err != nil || len(raw) != ed25519.SignatureSize {
			return errors.New("signature is not a strict base64 ed25519 signature")
		}
		if !validHex(s.KeyID) {
			return errors.New("signature keyid is not a lowercase hex sha256")
		}
	}
	return nil
}

// checkNoDuplicateKeys walks the JSON tokens and refuses an object that repeats a key:
// two parsers that keep different duplicates would see different envelopes.
func checkNoDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return walkValue(dec, 0)
}

const maxDepth = 32

func walkValue(dec *json.Decoder, depth int) error {
	if depth > maxDepth {
		return errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("envelope is not JSON: %v", err)
	}
	switch tok {
	case json.Delim('{'):
		return walkObject(dec, depth)
	case json.Delim('['):
		for dec.More() {
			if err := walkValue(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

func walkObject(dec *json.Decoder, depth int) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("envelope is not JSON: %v", err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return fmt.Errorf("envelope repeats the key %q", safeQuote(key))
		}
		seen[key] = true
		if err := walkValue(dec, depth+1); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// checkSignature verifies the envelope with pub. It returns the signature's key id and
// whether the signature was checked. With pub == nil nothing is checked.
func checkSignature(env *dsse.Envelope, pub ed25519.PublicKey) (keyID string, checked bool, err error) {
	if len(env.Signatures) > 0 {
		keyID = env.Signatures[0].KeyID
	}
	if pub == nil {
		return keyID, false, nil
	}
	want := KeyID(pub)
	switch {
	case len(env.Signatures) == 0:
		return "", false, fileErr(
			EnvelopeName,
			ErrBadSignature,
			"the bundle is unsigned but a public key (%s) was given; anyone could have rewritten it",
			want,
		)
	case keyID != want:
		return keyID, false, fileErr(EnvelopeName, ErrBadSignature, "signed by key %s, expected key %s", keyID, want)
	}
	v, err := dsse.NewEnvelopeVerifier(edVerifier{pub: pub, id: want})
	if err != nil {
		return keyID, false, err
	}
	if _, err := v.Verify(context.Background(), env); err != nil {
		return keyID, false, fileErr(
			EnvelopeName,
			ErrBadSignature,
			"key %s: the statement or the signature was changed after signing",
			want,
		)
	}
	return keyID, true, nil
}
