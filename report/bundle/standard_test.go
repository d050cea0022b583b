package bundle

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The bundle must verify with tools that know only the standards: contrib/verify-bundle.py
// (the DSSE spec's PAE, python3's standard library and openssl) here, and cosign in
// standard_cosign_test.go. Both must refuse every tampered bundle below.

// standardCase is a bundle a standard tool must accept (tamper nil) or refuse.
type standardCase struct {
	name   string
	tamper func(t *testing.T, dir string)
	want   string // in the refusal of contrib/verify-bundle.py
	// treeOnly: only a check of the whole tree sees it (a file gone, a symlink); cosign checks
	// the files it is given, one claim at a time.
	treeOnly bool
}

func standardCases() []standardCase {
	return []standardCase{
		{"untouched", nil, "", false},
		{"a byte of results.json", func(t *testing.T, dir string) {
			flipByte(t, filepath.Join(dir, "results.json"), 10)
		}, "results.json: sha256 differs", false},
		{"a file added", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "pairs/p1/extra.log"), []byte("PASSED"))
		}, "pairs/p1/extra.log: present but not listed", false},
		{"a file deleted", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "summary.md"))
		}, "summary.md: listed but missing", true},
		{"a subject digest, signature kept", func(t *testing.T, dir string) {
			editStatement(t, dir, func(st map[string]any) {
				setSubjectDigest(t, st, "results.json", digestBytes([]byte(`{"forged":true}`)))
			})
		}, "signature does not verify", false},
		{"an input digest, signature kept", func(t *testing.T, dir string) {
			editStatement(t, dir, func(st map[string]any) {
				setDependencyDigest(t, st, "suite/tender.yaml", digestBytes([]byte("another suite")))
			})
		}, "signature does not verify", false},
		{"resealed with another key", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "results.json"), []byte(`{"forged":true}`))
			if _, err := Seal(dir, testInputs(), otherKey, testTime); err != nil {
				t.Fatal(err)
			}
		}, "signature does not verify", false},
		{"a symlink added", func(t *testing.T, dir string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "pairs/p1/link")); err != nil {
				t.Fatal(err)
			}
		}, "pairs/p1/link: not a regular file", true},
	}
}

// writePublicPEM writes pub as a PKIX PEM file, as tender keygen does, and returns its path.
func writePublicPEM(t *testing.T, pub ed25519.PublicKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tender.pub")
	writeFile(t, path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	return path
}

// needTool finds a program the test cannot do without; a missing one fails the test.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is needed to check bundles with standard tools (.ci/setup installs it): %v", name, err)
	}
	return path
}

// runTool runs a command and returns its output and whether it exited 0; any other failure
// to run it fails the test.
func runTool(t *testing.T, name string, args ...string) (string, bool) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running %s: %v", name, err)
	}
	return string(out), err == nil
}

func TestIndependentScriptVerifiesBundles(t *testing.T) {
	python := needTool(t, "/usr/bin/python3") // Debian's, with the standard library only
	needTool(t, "openssl")
	script := filepath.Join("..", "..", "contrib", "verify-bundle.py")
	pub := writePublicPEM(t, testPub)
	for _, tc := range standardCases() {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := sealedBundle(t, testKey)
			if tc.tamper != nil {
				tc.tamper(t, dir)
			}
			out, ok := runTool(t, python, script, dir, pub)
			switch {
			case tc.tamper == nil && (!ok || !strings.HasPrefix(out, "OK ")):
				t.Fatalf("the script refused an untouched signed bundle:\n%s", out)
			case tc.tamper != nil && (ok || !strings.Contains(out, "FAIL ") || !strings.Contains(out, tc.want)):
				t.Fatalf("the script accepted, or refused without saying %q:\n%s", tc.want, out)
			}
		})
	}
	t.Run("the first format", func(t *testing.T) {
		dir := fixtureBundle(t)
		old, _ := os.ReadFile(filepath.Join("testdata", "envelope-v1.json")) // signed with testKey
		writeFile(t, filepath.Join(dir, EnvelopeName), old)
		if out, ok := runTool(t, python, script, dir, pub); ok || !strings.Contains(out, "predicate type") {
			t.Fatalf("the script accepted a bundle of the first format:\n%s", out)
		}
	})
}
