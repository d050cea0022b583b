package bundle

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenerateKeySealVerify(t *testing.T) {
	dir := t.TempDir()
	priv, pub := filepath.Join(dir, "tender.key"), filepath.Join(dir, "tender.pub")
	if err := GenerateKey(priv, pub); err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{priv: 0o600, pub: 0o644} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got&^mode != 0 {
			t.Fatalf("%s has mode %v, want at most %v", path, got, mode)
		}
	}
	key, err := LoadPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := LoadPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	bdir := fixtureBundle(t)
	if _, err := Seal(bdir, testInputs(), key, testTime); err != nil {
		t.Fatal(err)
	}
	m, err := Verify(bdir, pk, VerifyOptions{RequireSignature: true})
	if err != nil {
		t.Fatalf("Verify with the generated pair: %v", err)
	}
	if m.KeyID != KeyID(pk) || !m.SignatureChecked {
		t.Fatalf("KeyID %s checked %v; want %s checked", m.KeyID, m.SignatureChecked, KeyID(pk))
	}

	// Existing keys are never overwritten, and a failed run leaves them as they were.
	before, _ := os.ReadFile(priv)
	if err := GenerateKey(priv, filepath.Join(dir, "new.pub")); !errors.Is(err, os.ErrExist) {
		t.Fatalf("GenerateKey over an existing private key: got %v, want ErrExist", err)
	}
	if err := GenerateKey(filepath.Join(dir, "new.key"), pub); !errors.Is(err, os.ErrExist) {
		t.Fatalf("GenerateKey over an existing public key: got %v, want ErrExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.key")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a half-written pair was left behind")
	}
	if after, _ := os.ReadFile(priv); !bytes.Equal(before, after) {
		t.Fatal("the private key changed")
	}
}

func TestLoadPrivateKeyRefusesOpenModes(t *testing.T) {
	dir := t.TempDir()
	priv := filepath.Join(dir, "k")
	if err := GenerateKey(priv, filepath.Join(dir, "k.pub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(priv, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPrivateKey(priv)
	if !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable key: got %v, want ErrKey with a chmod hint", err)
	}
}

func TestParsePrivateKey(t *testing.T) {
	der, _ := x509.MarshalPKCS8PrivateKey(testKey)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	badHalf := append(ed25519.PrivateKey{}, testKey...)
	badHalf[40] ^= 1
	pubDER, _ := x509.MarshalPKIXPublicKey(testPub)
	b64 := base64.StdEncoding.EncodeToString
	for _, tc := range []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"PEM PKCS#8", pemBytes("PRIVATE KEY", der), true},
		{"PEM with surrounding space", append(append([]byte("\n  "), pemBytes("PRIVATE KEY", der)...), "\n\n"...), true},
		{"base64 PKCS#8 DER", []byte(b64(der)), true},
		{"base64 seed", []byte(b64(testKey.Seed())), true},
		{"base64 64-byte key", []byte(b64(testKey)), true},
		{"64-byte key with a forged public half", []byte(b64(badHalf)), false},
		{"ECDSA key", pemBytes("PRIVATE KEY", ecDER), false},
		{"public key as private", pemBytes("PUBLIC KEY", pubDER), false},
		{"PEM with trailing data", append(pemBytes("PRIVATE KEY", der), "junk"...), false},
		{"two PEM blocks", append(pemBytes("PRIVATE KEY", der), pemBytes("PRIVATE KEY", der)...), false},
		{"garbage", []byte("not a key at all!"), false},
		{"empty", nil, false},
		{"base64 of 31 bytes", []byte(b64(testKey.Seed()[:31])), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := ParsePrivateKey(tc.in)
			if !tc.ok {
				if !errors.Is(err, ErrKey) {
					t.Fatalf("got %v, want ErrKey", err)
				}
				// Key material never reaches an error line.
				for _, secret := range []string{b64(testKey.Seed()), b64(der)[20:60], "junk"} {
					if strings.Contains(err.Error(), secret) {
						t.Fatalf("the error quotes the input: %v", err)
					}
				}
				return
			}
			if err != nil || !k.Equal(testKey) {
				t.Fatalf("got %v, %v; want the test key", k != nil, err)
			}
		})
	}
}

func TestParsePublicKey(t *testing.T) {
	der, _ := x509.MarshalPKIXPublicKey(testPub)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	got, err := ParsePublicKey(pemBytes("PUBLIC KEY", der))
	if err != nil || !got.Equal(testPub) {
		t.Fatalf("PEM PKIX: %v", err)
	}
	for name, in := range map[string][]byte{
		"ECDSA":       pemBytes("PUBLIC KEY", ecDER),
		"private PEM": pemBytes("PRIVATE KEY", der),
		"raw base64":  []byte(base64.StdEncoding.EncodeToString(testPub)),
	} {
		if _, err := ParsePublicKey(in); !errors.Is(err, ErrKey) {
			t.Errorf("%s: got %v, want ErrKey", name, err)
		}
	}
}
