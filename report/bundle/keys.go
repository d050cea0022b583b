package bundle

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// ErrKey marks a key that cannot be used: wrong format, wrong algorithm, unsafe file mode.
// Its messages never include key material.
var ErrKey = errors.New("unusable signing key")

const maxKeyFile = 64 << 10

// KeyID is the key id written into signatures: the lowercase hex sha256 of the public key's
// PKIX DER encoding.
func KeyID(pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// GenerateKey writes a new ed25519 key pair as PEM: the private key as PKCS#8 with mode
// 0600, the public key as PKIX with mode 0644. It refuses to overwrite either file.
func GenerateKey(privPath, pubPath string) error {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return err
	}
	if err := writeNew(privPath, pemBytes("PRIVATE KEY", privDER), 0o600); err != nil {
		return err
	}
	if err := writeNew(pubPath, pemBytes("PUBLIC KEY", pubDER), 0o644); err != nil {
		os.Remove(privPath) // we created it just now; a half pair is useless
		return err
	}
	return nil
}

func pemBytes(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// writeNew creates path exclusively with mode perm (the umask can only narrow it).
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("bundle: writing key %s: %w (existing keys are never overwritten)", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("bundle: writing key %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("bundle: writing key %s: %w", path, err)
	}
	return nil
}

// LoadPrivateKey reads a PEM PKCS#8 ed25519 private key. Like ssh, it refuses a key file
// that group or others can read or write.
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	data, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	key, err := ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}

// readKeyFile reads a small regular private key file that only its owner can access.
func readKeyFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("bundle: reading key: %w", err)
	}
	if !info.Mode().IsRegular() || info.Size() > maxKeyFile {
		return nil, fmt.Errorf("bundle: %s: %w: not a regular file under 64 KiB", path, ErrKey)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf(
			"bundle: %s: %w: mode %v lets others read it; run chmod 600 %s",
			path,
			ErrKey,
			info.Mode().Perm(),
			path,
		)
	}
	return os.ReadFile(path)
}

// ParsePrivateKey accepts what TENDER_SIGNING_KEY may hold: a PEM PKCS#8 ed25519 key, or
// standard base64 of a PKCS#8 DER key, a 32-byte seed or a 64-byte ed25519 private key.
func ParsePrivateKey(pemOrBase64 []byte) (ed25519.PrivateKey, error) {
	data := bytes.TrimSpace(pemOrBase64)
	if bytes.HasPrefix(data, []byte("-----BEGIN")) {
		der, err := singlePEM(data, "PRIVATE KEY")
		if err != nil {
			return nil, err
		}
		return parsePKCS8(der)
	}
	raw, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		return nil, fmt.Errorf("bundle: %w: neither PEM nor standard base64", ErrKey)
	}
	switch len(raw) {
	case ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(raw), nil
	case ed25519.PrivateKeySize:
		return normalizePrivate(ed25519.PrivateKey(raw))
	}
	return parsePKCS8(raw)
}

// normalizePrivate rebuilds the key from its seed and refuses one whose public half was
// altered (ed25519.Sign would trust it and produce signatures nobody can verify).
func normalizePrivate(k ed25519.PrivateKey) (ed25519.PrivateKey, error) {
	n := ed25519.NewKeyFromSeed(k.Seed())
	if !bytes.Equal(n, k) {
		return nil, fmt.Errorf("bundle: %w: the public half does not match the seed", ErrKey)
	}
	return n, nil
}

func parsePKCS8(der []byte) (ed25519.PrivateKey, error) {
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w: not a PKCS#8 private key", ErrKey)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("bundle: %w: the key is %T, want ed25519", ErrKey, k)
	}
	return ek, nil
}

// singlePEM decodes exactly one PEM block of the given type with nothing after it.
func singlePEM(data []byte, typ string) ([]byte, error) {
	block, rest := pem.Decode(data)
	if block == nil || block.Type != typ {
		return nil, fmt.Errorf("bundle: %w: want one PEM block of type %q", ErrKey, typ)
	}
	if len(block.Headers) != 0 || len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("bundle: %w: PEM headers or data after the %q block", ErrKey, typ)
	}
	return block.Bytes, nil
}

// LoadPublicKey reads a PEM PKIX ed25519 public key.
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("bundle: reading public key: %w", err)
	}
	if !info.Mode().IsRegular() || info.Size() > maxKeyFile {
		return nil, fmt.Errorf("bundle: %s: %w: not a regular file under 64 KiB", path, ErrKey)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bundle: reading public key: %w", err)
	}
	pub, err := ParsePublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pub, nil
}

// ParsePublicKey parses a PEM PKIX ed25519 public key.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	der, err := singlePEM(bytes.TrimSpace(data), "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w: not a PKIX public key", ErrKey)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("bundle: %w: the key is %T, want ed25519", ErrKey, k)
	}
	return pub, nil
}
