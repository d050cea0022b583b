//go:build cosign

package bundle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests need cosign at the version .ci/cosign/go.mod pins: .ci/cosign.sh builds it
// (cached) and runs them with -tags cosign and TENDER_COSIGN set to the binary.

// cosign runs verify-blob-attestation of blob against envelope with the key, as docs/outputs.md
// says to. SIGSTORE_REKOR_PUBLIC_KEY names a key file only so that cosign does not fetch
// Sigstore's trust root: with --insecure-ignore-tlog no log is consulted.
func cosign(t *testing.T, pub, envelope, predicateType, blob string) (string, bool) {
	t.Helper()
	bin := os.Getenv("TENDER_COSIGN")
	if bin == "" {
		t.Fatal("TENDER_COSIGN is not set: run .ci/cosign.sh, which builds the pinned cosign and runs this test")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("SIGSTORE_REKOR_PUBLIC_KEY", pub)
	return runTool(t, bin, "verify-blob-attestation", "--key", pub, "--signature", envelope,
		"--type", predicateType, "--insecure-ignore-tlog", blob)
}

// errorLine is cosign's "Error: ..." line.
func errorLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Error: ") {
			return l
		}
	}
	return strings.TrimSpace(out)
}

// bundleFiles lists the regular files of dir but the envelope, as `find -type f` does.
func bundleFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && d.Name() != EnvelopeName {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCosignVerifiesBundles: cosign accepts every file of a signed bundle as a subject of the
// attestation, and refuses some file of every tampered bundle it can see.
func TestCosignVerifiesBundles(t *testing.T) {
	pub := writePublicPEM(t, testPub)
	for _, tc := range standardCases() {
		if tc.treeOnly {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := sealedBundle(t, testKey)
			if tc.tamper != nil {
				tc.tamper(t, dir)
			}
			files := bundleFiles(t, dir)
			var refused []string
			for _, f := range files {
				out, ok := cosign(t, pub, filepath.Join(dir, EnvelopeName), PredicateType, f)
				if !ok {
					rel, _ := filepath.Rel(dir, f)
					refused = append(refused, filepath.ToSlash(rel)+" ("+errorLine(out)+")")
				} else if !strings.Contains(out, "Verified OK") {
					t.Fatalf("cosign exited 0 without saying Verified OK:\n%s", out)
				}
			}
			want := 0 // files refused: none, the one the row names, or all when the signature fails
			if tc.tamper != nil {
				want = 1
				if strings.Contains(tc.want, "signature") {
					want = len(files)
				}
			}
			if len(refused) != want || want == 1 && !strings.HasPrefix(refused[0], strings.Split(tc.want, ":")[0]) {
				t.Fatalf("cosign refused %d of %d files, want %d (%s):\n%s", len(refused), len(files), want, tc.want,
					strings.Join(refused, "\n"))
			}
			t.Logf("cosign refused %d of %d files: %s", len(refused), len(files), strings.Join(refused, "; "))
		})
	}
}

// TestCosignRefusesInputsAsSubjects is the reason the inputs left the subjects: a suite file
// whose digest the bundle records as an input must not pass --check-claims. In the first
// format (testdata/envelope-v1.json) it did; now it is refused, and so is the old envelope
// under the new predicate type.
func TestCosignRefusesInputsAsSubjects(t *testing.T) {
	pub := writePublicPEM(t, testPub)
	suiteFile := filepath.Join(t.TempDir(), "tender.yaml")
	writeFile(t, suiteFile, []byte("suite")) // testInputs' suite/tender.yaml
	dir, _ := sealedBundle(t, testKey)
	if out, ok := cosign(t, pub, filepath.Join(dir, EnvelopeName), PredicateType, suiteFile); ok {
		t.Fatalf("cosign accepted a suite input as a subject of the bundle:\n%s", out)
	}
	if out, ok := cosign(t, pub, filepath.Join(dir, EnvelopeName), PredicateType,
		filepath.Join(dir, "results.json")); !ok {
		t.Fatalf("cosign refused results.json of the same bundle:\n%s", out)
	}
	old := filepath.Join("testdata", "envelope-v1.json")
	if out, ok := cosign(t, pub, old, PredicateTypeV1, suiteFile); !ok {
		t.Fatalf("the first format listed inputs as subjects, so cosign should accept the suite file:\n%s", out)
	}
	if out, ok := cosign(t, pub, old, PredicateType, suiteFile); ok {
		t.Fatalf("cosign accepted an envelope of the first format under %s:\n%s", PredicateType, out)
	}
	var env map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, EnvelopeName))
	if err := json.Unmarshal(data, &env); err != nil || env["payloadType"] != PayloadType {
		t.Fatalf("the envelope cosign read is not Tender's: %v", err)
	}
}
