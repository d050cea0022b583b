package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
)

// Digest returns the lowercase hex sha256 of everything r yields: the one digest helper for
// bundle files and grader inputs alike.
func Digest(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// digestBytes is Digest for bytes already in memory.
func digestBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// validHex reports whether s is a lowercase hex sha256: exactly 64 of [0-9a-f].
func validHex(s string) bool {
	if len(s) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
