package bundle

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"
)

// Seal digests every regular file under dir except the envelope, and writes
// dir/bundle.dsse.json: an in-toto statement whose subjects are those files and whose
// predicate lists the inputs as resolved dependencies, in a DSSE envelope, signed with key
// when key is not nil. It refuses a bundle holding a symlink or a special file. now is the only volatile
// value (the predicate's "created"); inject it.
func Seal(dir string, in Inputs, key ed25519.PrivateKey, now time.Time) (*Manifest, error) {
	if now.IsZero() {
		return nil, errors.New("bundle: Seal needs the sealing time; got the zero time")
	}
	key, err := checkSigningKey(key)
	if err != nil {
		return nil, err
	}
	if err := checkInputs(in); err != nil {
		return nil, err
	}
	deps, err := dependencies(in)
	if err != nil {
		return nil, err
	}
	files, err := digestBundle(dir)
	if err != nil {
		return nil, err
	}
	pred := Predicate{
		Created:              now.UTC().Format(time.RFC3339Nano),
		Options:              nonNil(in.Options),
		ResolvedDependencies: descriptors(deps),
		Tool:                 in.Tool,
		Volatile:             volatileFields,
	}
	return sealStatement(dir, files, pred, key)
}

func checkSigningKey(key ed25519.PrivateKey) (ed25519.PrivateKey, error) {
	if key == nil {
		return nil, nil
	}
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("bundle: %w: an ed25519 private key has %d bytes", ErrKey, ed25519.PrivateKeySize)
	}
	return normalizePrivate(key)
}

// digestBundle walks dir and digests its files, refusing symlinks and special files.
func digestBundle(dir string) ([]Subject, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle: opening %s: %w", dir, err)
	}
	defer root.Close()
	t, err := walkBundle(root)
	if err != nil {
		return nil, err
	}
	if len(t.refused) > 0 {
		return nil, joinProblems(t.refused)
	}
	subs := make([]Subject, 0, len(t.files))
	for _, name := range t.files {
		sum, err := digestFile(root, name)
		if err != nil {
			return nil, err
		}
		subs = append(subs, Subject{Name: name, SHA256: sum})
	}
	return subs, nil
}

// sealStatement builds, checks, wraps and writes the statement.
func sealStatement(dir string, subjects []Subject, pred Predicate, key ed25519.PrivateKey) (*Manifest, error) {
	payload, err := buildStatement(subjects, pred)
	if err != nil {
		return nil, err
	}
	if _, err := parseStatement(payload); err != nil { // never write what Verify would refuse
		return nil, fmt.Errorf("bundle: the sealed statement fails its own check: %w", err)
	}
	env, err := makeEnvelope(payload, key)
	if err != nil {
		return nil, fmt.Errorf("bundle: signing: %w", err)
	}
	data, err := encodeEnvelope(env)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxEnvelopeSize {
		return nil, fmt.Errorf(
			"bundle: the envelope would be %d bytes, over the %d cap Verify enforces; split the batch into shards",
			len(data),
			MaxEnvelopeSize,
		)
	}
	if err := writeEnvelope(dir, data); err != nil {
		return nil, err
	}
	m := &Manifest{Files: subjects, Created: mustTime(pred.Created), Signed: key != nil,
		SignatureChecked: key != nil, Statement: payload, EnvelopeSHA256: digestBytes(data)}
	if key != nil {
		m.KeyID = KeyID(key.Public().(ed25519.PublicKey))
	}
	m.Inputs, m.Dependencies = inputsOf(pred)
	return m, nil
}

// writeEnvelope replaces dir/bundle.dsse.json atomically (a symlink there is replaced, not
// followed).
func writeEnvelope(dir string, data []byte) error {
	tmp, err := os.CreateTemp(dir, ".bundle.dsse.json.*")
	if err != nil {
		return fmt.Errorf("bundle: writing the envelope: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("bundle: writing the envelope: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("bundle: writing the envelope: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("bundle: writing the envelope: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, EnvelopeName)); err != nil {
		return fmt.Errorf("bundle: writing the envelope: %w", err)
	}
	return nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}

func mustTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s) // checked by parseStatement
	return t
}
