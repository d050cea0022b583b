package bundle

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVerifyUntouched(t *testing.T) {
	for _, tc := range []struct {
		name        string
		key         ed25519.PrivateKey
		pub         ed25519.PublicKey
		wantChecked bool
	}{
		{"signed, checked with the key", testKey, testPub, true},
		{"signed, no key given", testKey, nil, false},
		{"unsigned, no key given", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, sealed := sealedBundle(t, tc.key)
			got, err := Verify(dir, tc.pub, VerifyOptions{})
			if err != nil {
				t.Fatalf("Verify on an untouched bundle: %v", err)
			}
			if got.SignatureChecked != tc.wantChecked || got.Signed != (tc.key != nil) {
				t.Fatalf(
					"Signed=%v SignatureChecked=%v; want %v, %v",
					got.Signed,
					got.SignatureChecked,
					tc.key != nil,
					tc.wantChecked,
				)
			}
			// What Verify reads back is what Seal wrote: a merge can rely on it.
			ignore := cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "SignatureChecked" }, cmp.Ignore())
			if diff := cmp.Diff(sealed, got, ignore); diff != "" {
				t.Fatalf("manifest from Verify differs from Seal's (-seal +verify):\n%s", diff)
			}
			if len(got.Files) != 11 || len(got.Inputs.Files) != 4 || len(got.Dependencies) != 5 {
				t.Fatalf("got %d files, %d input files and %d dependencies; want 11, 4 and 5",
					len(got.Files), len(got.Inputs.Files), len(got.Dependencies))
			}
			if d := cmp.Diff(testInputs(), got.Inputs); d != "" {
				t.Fatalf("the inputs read back differ from those sealed (-sealed +read):\n%s", d)
			}
		})
	}
}

func TestVerifySignatureStatus(t *testing.T) {
	dir, _ := sealedBundle(t, testKey)
	m, err := Verify(dir, nil, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.SignatureStatus(); !strings.Contains(s, "NOT checked") || !strings.Contains(s, KeyID(testPub)) {
		t.Fatalf("status without a key: %q", s)
	}
	_, err = Verify(dir, nil, VerifyOptions{RequireSignature: true})
	wantFileError(t, err, ErrUnsigned, EnvelopeName)

	udir, _ := sealedBundle(t, nil)
	_, err = Verify(udir, nil, VerifyOptions{RequireSignature: true})
	wantFileError(t, err, ErrUnsigned, EnvelopeName)

	if _, err := Verify(dir, testPub, VerifyOptions{RequireSignature: true}); err != nil {
		t.Fatalf("strict verify with the right key: %v", err)
	}
}

// TestVerifyTampered changes a signed bundle in one place per row; each must fail and name
// the file.
func TestVerifyTampered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pub    ed25519.PublicKey
		tamper func(t *testing.T, dir string)
		want   error
		path   string
	}{
		{"a byte in results.json", testPub, func(t *testing.T, dir string) {
			flipByte(t, filepath.Join(dir, "results.json"), 10)
		}, ErrTampered, "results.json"},
		{"a byte in a log", testPub, func(t *testing.T, dir string) {
			flipByte(t, filepath.Join(dir, "pairs/p1/target.log"), 3)
		}, ErrTampered, "pairs/p1/target.log"},
		{"a byte in a raw JUnit file, no key given", nil, func(t *testing.T, dir string) {
			flipByte(t, filepath.Join(dir, "pairs/p2/junit/target.xml"), 50)
		}, ErrTampered, "pairs/p2/junit/target.xml"},
		{"a deleted file", testPub, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "pairs/p2/report.json"))
		}, ErrMissing, "pairs/p2/report.json"},
		{"an added file", testPub, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "pairs/p1/extra.log"), []byte("PASSED"))
		}, ErrUnexpected, "pairs/p1/extra.log"},
		{"an added hidden file", testPub, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".results.json"), []byte("{}"))
		}, ErrUnexpected, ".results.json"},
		{"a file replaced by a directory", testPub, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "summary.md"))
			os.Mkdir(filepath.Join(dir, "summary.md"), 0o755)
		}, ErrMissing, "summary.md"},
		{"the statement payload (tool changed)", testPub, func(t *testing.T, dir string) {
			editStatement(t, dir, func(st map[string]any) {
				st["predicate"].(map[string]any)["tool"] = "tender v9"
			})
		}, ErrBadSignature, EnvelopeName},
		{"the signature", testPub, func(t *testing.T, dir string) {
			env := readEnvelopeFile(t, dir)
			sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
			sig[5] ^= 0x80
			env.Signatures[0].Sig = base64.StdEncoding.EncodeToString(sig)
			writeEnvelopeFile(t, dir, env)
		}, ErrBadSignature, EnvelopeName},
		{"a file and its subject digest, signature kept", testPub, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "results.json"), []byte(`{"forged":true}`))
			editStatement(t, dir, func(st map[string]any) {
				setSubjectDigest(t, st, "results.json", digestBytes([]byte(`{"forged":true}`)))
			})
		}, ErrBadSignature, EnvelopeName},
		{"a file and its subject digest, signature stripped", testPub, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "results.json"), []byte(`{"forged":true}`))
			editStatement(t, dir, func(st map[string]any) {
				setSubjectDigest(t, st, "results.json", digestBytes([]byte(`{"forged":true}`)))
			})
			env := readEnvelopeFile(t, dir)
			env.Signatures = nil
			writeEnvelopeFile(t, dir, env)
		}, ErrBadSignature, EnvelopeName},
		{"a subject digest, no key given", nil, func(t *testing.T, dir string) {
			editStatement(t, dir, func(st map[string]any) {
				setSubjectDigest(t, st, "summary.md", digestBytes([]byte("other")))
			})
		}, ErrTampered, "summary.md"},
		{"an input's digest in the predicate", testPub, func(t *testing.T, dir string) {
			editStatement(t, dir, func(st map[string]any) {
				setDependencyDigest(t, st, "suite/tender.yaml", digestBytes([]byte("another suite")))
			})
		}, ErrBadSignature, EnvelopeName},
		{"an image id in the predicate", testPub, func(t *testing.T, dir string) {
			editStatement(t, dir, func(st map[string]any) {
				setDependencyDigest(t, st, "image/tender-verifier:py311", strings.Repeat("0", 64))
			})
		}, ErrBadSignature, EnvelopeName},
		{"resealed by someone else's key", testPub, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "results.json"), []byte(`{"forged":true}`))
			if _, err := Seal(dir, testInputs(), otherKey, testTime); err != nil {
				t.Fatal(err)
			}
		}, ErrBadSignature, EnvelopeName},
		{"another key's signature under our key id", testPub, func(t *testing.T, dir string) {
			if _, err := Seal(dir, testInputs(), otherKey, testTime); err != nil {
				t.Fatal(err)
			}
			env := readEnvelopeFile(t, dir)
			env.Signatures[0].KeyID = KeyID(testPub)
			writeEnvelopeFile(t, dir, env)
		}, ErrBadSignature, EnvelopeName},
		{"the envelope deleted", testPub, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, EnvelopeName))
		}, ErrMissing, EnvelopeName},
		{"a FIFO added", testPub, func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "pairs/p1/pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ErrUnsafe, "pairs/p1/pipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := sealedBundle(t, testKey)
			tc.tamper(t, dir)
			m, err := Verify(dir, tc.pub, VerifyOptions{})
			wantFileError(t, err, tc.want, tc.path)
			if m != nil {
				t.Fatalf("a failed Verify returned a manifest")
			}
		})
	}
}

func TestVerifyWrongKey(t *testing.T) {
	dir, _ := sealedBundle(t, testKey)
	_, err := Verify(dir, otherPub, VerifyOptions{})
	wantFileError(t, err, ErrBadSignature, EnvelopeName)
	if !strings.Contains(err.Error(), KeyID(otherPub)) || !strings.Contains(err.Error(), KeyID(testPub)) {
		t.Fatalf("the error should name both key ids: %v", err)
	}
	if _, err := Verify(dir, ed25519.PublicKey{1, 2, 3}, VerifyOptions{}); !errors.Is(err, ErrKey) {
		t.Fatalf("a 3-byte public key: got %v, want ErrKey", err)
	}
}

func TestVerifyReportsEveryProblem(t *testing.T) {
	dir, _ := sealedBundle(t, testKey)
	flipByte(t, filepath.Join(dir, "results.json"), 1)
	os.Remove(filepath.Join(dir, "summary.md"))
	writeFile(t, filepath.Join(dir, "zzz.txt"), []byte("x"))
	_, err := Verify(dir, testPub, VerifyOptions{})
	var got []string
	for _, fe := range fileErrors(err) {
		got = append(got, fe.Path+": "+fe.Err.Error())
	}
	want := []string{
		"results.json: " + ErrTampered.Error(),
		"summary.md: " + ErrMissing.Error(),
		"zzz.txt: " + ErrUnexpected.Error(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("problems (-want +got):\n%s", diff)
	}
}

// TestSymlinkCanary: a symlink to an outside file with the very bytes the statement lists
// would pass a digest check that followed it. Seal and Verify must refuse it, and the
// canary's name and digest must never reach an envelope.
func TestSymlinkCanary(t *testing.T) {
	const marker = "TENDER-CANARY-7f3a"
	canary := filepath.Join(t.TempDir(), "canary.txt")
	writeFile(t, canary, []byte(marker))

	t.Run("Verify refuses a listed file swapped for a symlink to the same bytes", func(t *testing.T) {
		dir, _ := sealedBundle(t, testKey)
		target := filepath.Join(dir, "pairs/p1/target.log")
		content, _ := os.ReadFile(target)
		writeFile(t, canary+".same", content)
		os.Remove(target)
		if err := os.Symlink(canary+".same", target); err != nil {
			t.Fatal(err)
		}
		_, err := Verify(dir, testPub, VerifyOptions{})
		wantFileError(t, err, ErrUnsafe, "pairs/p1/target.log")
	})
	t.Run("Verify refuses a symlinked directory", func(t *testing.T) {
		dir, _ := sealedBundle(t, testKey)
		if err := os.Symlink(filepath.Dir(canary), filepath.Join(dir, "pairs/p3")); err != nil {
			t.Fatal(err)
		}
		_, err := Verify(dir, testPub, VerifyOptions{})
		wantFileError(t, err, ErrUnsafe, "pairs/p3")
	})
	t.Run("Verify refuses a symlinked envelope", func(t *testing.T) {
		dir, _ := sealedBundle(t, testKey)
		real := filepath.Join(t.TempDir(), "env.json")
		data, _ := os.ReadFile(filepath.Join(dir, EnvelopeName))
		writeFile(t, real, data)
		os.Remove(filepath.Join(dir, EnvelopeName))
		if err := os.Symlink(real, filepath.Join(dir, EnvelopeName)); err != nil {
			t.Fatal(err)
		}
		_, err := Verify(dir, testPub, VerifyOptions{})
		wantFileError(t, err, ErrUnsafe, EnvelopeName)
	})
	for _, link := range []string{"leak.txt", "pairs/p1/leak.log"} {
		t.Run("Seal refuses "+link, func(t *testing.T) {
			dir := fixtureBundle(t)
			if err := os.Symlink(canary, filepath.Join(dir, link)); err != nil {
				t.Fatal(err)
			}
			_, err := Seal(dir, testInputs(), testKey, testTime)
			wantFileError(t, err, ErrUnsafe, link)
			if _, statErr := os.Lstat(filepath.Join(dir, EnvelopeName)); !errors.Is(statErr, os.ErrNotExist) {
				t.Fatalf("Seal wrote an envelope despite the symlink: %v", statErr)
			}
			assertNoCanary(t, dir, marker)
		})
	}
	t.Run("Seal refuses a FIFO without blocking on it", func(t *testing.T) {
		dir := fixtureBundle(t)
		if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Seal(dir, testInputs(), testKey, testTime)
		wantFileError(t, err, ErrUnsafe, "pipe")
	})
}

// assertNoCanary fails when the marker or its digest appears in any regular file under dir.
func assertNoCanary(t *testing.T, dir, marker string) {
	t.Helper()
	sum := digestBytes([]byte(marker))
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), marker) || strings.Contains(string(data), sum) {
			t.Errorf("canary leaked into %s", p)
		}
		return nil
	})
}

// TestVerifyRefusesTheFirstFormat: a bundle sealed before inputs moved into the predicate
// (testdata/envelope-v1.json, the golden envelope of that format, signed with testKey) is
// refused with ErrOldFormat and a line that says what to do, whether or not the key is given.
func TestVerifyRefusesTheFirstFormat(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "envelope-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pub := range []ed25519.PublicKey{testPub, nil} {
		dir := fixtureBundle(t)
		writeFile(t, filepath.Join(dir, EnvelopeName), old)
		m, err := Verify(dir, pub, VerifyOptions{})
		wantFileError(t, err, ErrOldFormat, EnvelopeName)
		for _, want := range []string{PredicateTypeV1, "Grade the suite again"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal %q does not say %q", err, want)
			}
		}
		if m != nil {
			t.Fatal("a refused envelope returned a manifest")
		}
	}
}
