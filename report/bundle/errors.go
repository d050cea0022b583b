package bundle

import (
	"errors"
	"fmt"
)

// Sentinels carried by *FileError. Test them with errors.Is.
var (
	// ErrTampered: a file's digest differs from the one in the statement.
	ErrTampered = errors.New("digest does not match the signed statement")
	// ErrBadSignature: the envelope's signature does not verify with the given key, the
	// envelope was signed by another key, or it is unsigned although a key was given.
	ErrBadSignature = errors.New("signature does not verify")
	// ErrMissing: the statement lists a file that is not in the bundle.
	ErrMissing = errors.New("listed in the statement but missing from the bundle")
	// ErrUnexpected: the bundle holds a file that the statement does not list.
	ErrUnexpected = errors.New("present in the bundle but not listed in the statement")
	// ErrUnsafe: a symlink, a special file, or a path that is not relative and clean.
	ErrUnsafe = errors.New("unsafe file or path")
	// ErrMalformed: the envelope or its statement cannot be read: too large, not strict
	// JSON, wrong types, or a subject that breaks the rules in the package doc.
	ErrMalformed = errors.New("malformed envelope")
	// ErrOldFormat: the envelope holds a statement of the first evidence format
	// (PredicateTypeV1, inputs listed as subjects), which this version does not read.
	ErrOldFormat = errors.New("sealed in an older evidence format")
	// ErrUnsigned: VerifyOptions.RequireSignature was set and the signature was not
	// checked, because the bundle is unsigned or no public key was given.
	ErrUnsigned = errors.New("signature required but not checked")
)

// FileError names the file (a bundle-relative path, or "bundle.dsse.json")
// that failed, and wraps one of the sentinels above.
type FileError struct {
	Path   string
	Detail string // what was expected and what was found; never key material
	Err    error
}

func (e *FileError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("bundle: %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("bundle: %s: %v: %s", e.Path, e.Err, e.Detail)
}

func (e *FileError) Unwrap() error { return e.Err }

func fileErr(path string, sentinel error, format string, a ...any) *FileError {
	return &FileError{Path: path, Err: sentinel, Detail: fmt.Sprintf(format, a...)}
}

// maxReported bounds how many file errors one Verify returns, so a bundle with a million
// planted files gives a readable error.
const maxReported = 50

// joinProblems returns nil, the single *FileError, or all of them joined (errors.As finds
// the first; errors.Is tests every sentinel).
func joinProblems(probs []*FileError) error {
	switch len(probs) {
	case 0:
		return nil
	case 1:
		return probs[0]
	}
	errs := make([]error, 0, min(len(probs), maxReported)+1)
	for i, p := range probs {
		if i == maxReported {
			errs = append(errs, fmt.Errorf("bundle: and %d more problems", len(probs)-maxReported))
			break
		}
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}
