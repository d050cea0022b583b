package bundle

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
)

// VerifyOptions tune Verify.
type VerifyOptions struct {
	// RequireSignature fails verification (ErrUnsigned) unless a signature was checked with
	// the given public key.
	RequireSignature bool
	// MaxEnvelopeSize overrides MaxEnvelopeSize when positive and smaller.
	MaxEnvelopeSize int64
}

// Verify reads dir/bundle.dsse.json as hostile input, checks the signature with pub (when
// pub is not nil), recomputes every file digest, and refuses files present but not listed,
// listed but missing, symlinks and special files. The inputs, which live outside the bundle,
// are the predicate's resolved dependencies: each must have a well-formed name and sha256
// (Verify cannot see the inputs themselves; see VerifyInputs). A bundle of the first format
// (inputs as subjects) fails with ErrOldFormat.
//
// On failure the error is a *FileError, or several joined, each naming the file and
// wrapping a sentinel; the manifest is nil. When pub is nil and the bundle is signed,
// Verify succeeds with Manifest.SignatureChecked false, unless opts.RequireSignature.
func Verify(dir string, pub ed25519.PublicKey, opts VerifyOptions) (*Manifest, error) {
	if pub != nil && len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("bundle: %w: an ed25519 public key has %d bytes", ErrKey, ed25519.PublicKeySize)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle: opening %s: %w", dir, err)
	}
	defer root.Close()
	m, err := readStatement(root, pub, opts)
	if err != nil {
		return nil, err
	}
	probs, err := compareTree(root, m.Files)
	if err != nil {
		return nil, err
	}
	if opts.RequireSignature && !m.SignatureChecked {
		probs = append(probs, fileErr(EnvelopeName, ErrUnsigned, "%s", m.SignatureStatus()))
	}
	if err := joinProblems(probs); err != nil {
		return nil, err
	}
	return m, nil
}

// readStatement reads, parses and (with pub) authenticates the envelope.
func readStatement(root *os.Root, pub ed25519.PublicKey, opts VerifyOptions) (*Manifest, error) {
	data, err := readEnvelope(root, envelopeLimit(opts))
	if err != nil {
		return nil, err
	}
	env, payload, err := parseEnvelope(data)
	if err != nil {
		return nil, fileErr(EnvelopeName, ErrMalformed, "%v", err)
	}
	keyID, checked, err := checkSignature(env, pub)
	if err != nil {
		return nil, err
	}
	doc, err := parseStatement(payload)
	var old *FileError
	if errors.As(err, &old) {
		return nil, old
	}
	if err != nil {
		return nil, fileErr(EnvelopeName, ErrMalformed, "%v", err)
	}
	m := &Manifest{Signed: len(env.Signatures) > 0, SignatureChecked: checked, KeyID: keyID,
		Statement: payload, EnvelopeSHA256: digestBytes(data), Created: mustTime(doc.Predicate.Created)}
	for _, s := range doc.Subject {
		m.Files = append(m.Files, Subject{Name: s.Name, SHA256: s.Digest["sha256"]})
	}
	m.Inputs, m.Dependencies = inputsOf(doc.Predicate)
	return m, nil
}

func envelopeLimit(opts VerifyOptions) int64 {
	if opts.MaxEnvelopeSize > 0 && opts.MaxEnvelopeSize < MaxEnvelopeSize {
		return opts.MaxEnvelopeSize
	}
	return MaxEnvelopeSize
}

// readEnvelope opens the envelope as a regular file (no symlink) and reads it under the cap.
func readEnvelope(root *os.Root, limit int64) ([]byte, error) {
	f, err := openRegular(root, EnvelopeName)
	var fe *FileError
	if errors.As(err, &fe) && errors.Is(fe, ErrMissing) {
		return nil, fileErr(EnvelopeName, ErrMissing, "no envelope: this directory was never sealed")
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readCapped(f, limit)
	if err != nil {
		return nil, fileErr(EnvelopeName, ErrMalformed, "%v", err)
	}
	return data, nil
}

// compareTree walks the bundle and checks it against the listed files.
func compareTree(root *os.Root, listed []Subject) ([]*FileError, error) {
	t, err := walkBundle(root)
	if err != nil {
		return nil, err
	}
	probs := t.refused
	onDisk := make(map[string]bool, len(t.files))
	for _, f := range t.files {
		onDisk[f] = true
	}
	for _, s := range listed {
		if !onDisk[s.Name] {
			probs = append(probs, missing(root, s.Name))
			continue
		}
		delete(onDisk, s.Name)
		if p := compareFile(root, s); p != nil {
			probs = append(probs, p)
		}
	}
	for name := range onDisk {
		probs = append(probs, fileErr(name, ErrUnexpected, "remove it or seal the bundle again"))
	}
	sortProblems(probs)
	return probs, nil
}

// missing explains a listed file that the walk did not find as a regular file.
func missing(root *os.Root, name string) *FileError {
	info, err := root.Lstat(name)
	if err != nil {
		return fileErr(name, ErrMissing, "no such file")
	}
	return fileErr(name, ErrMissing, "a %s is there instead of a regular file", describeMode(info.Mode()))
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "regular file"
	}
	return "special file " + m.Type().String()
}

func compareFile(root *os.Root, s Subject) *FileError {
	got, err := digestFile(root, s.Name)
	var fe *FileError
	switch {
	case errors.As(err, &fe):
		return fe
	case err != nil:
		return &FileError{Path: s.Name, Err: err}
	case got != s.SHA256:
		return fileErr(s.Name, ErrTampered, "sha256 is %s, the statement says %s", got, s.SHA256)
	}
	return nil
}

func sortProblems(p []*FileError) {
	sort.SliceStable(p, func(i, j int) bool { return p[i].Path < p[j].Path })
}
