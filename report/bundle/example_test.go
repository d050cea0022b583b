package bundle_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tender-grader/tender/report/bundle"
)

// Seal a bundle with a key, then verify it the way `tender verify BUNDLE --key PUB` does.
func Example() {
	tmp, _ := os.MkdirTemp("", "bundle-example")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "evidence")
	os.MkdirAll(filepath.Join(dir, "pairs", "p1"), 0o755)
	os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"pairs":[]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "pairs", "p1", "target.log"), []byte("1 passed"), 0o644)

	priv, pub := filepath.Join(tmp, "tender.key"), filepath.Join(tmp, "tender.pub")
	if err := bundle.GenerateKey(priv, pub); err != nil {
		fmt.Println(err)
		return
	}
	key, _ := bundle.LoadPrivateKey(priv)
	in := bundle.Inputs{Tool: "tender v0.1.0", Options: map[string]string{"backend": "docker"}}
	if _, err := bundle.Seal(dir, in, key, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		fmt.Println(err)
		return
	}

	pk, _ := bundle.LoadPublicKey(pub)
	m, err := bundle.Verify(dir, pk, bundle.VerifyOptions{RequireSignature: true})
	fmt.Println(err, len(m.Files), m.SignatureChecked)

	os.WriteFile(filepath.Join(dir, "pairs", "p1", "target.log"), []byte("9 passed"), 0o644)
	_, err = bundle.Verify(dir, pk, bundle.VerifyOptions{})
	fmt.Println(err)
	// Output:
	// <nil> 2 true
	// bundle: pairs/p1/target.log: digest does not match the signed statement: sha256 is e7335b31352d48552fe1c37101e199a0a7d60935346db3159d906560272e09d1, the statement says c170a0864a6f10c7f15ff52e35b6a315716aea7e6c95ad3856f9349f05cd28be
}
