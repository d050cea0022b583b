package bundle

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchBundle is a bundle of 200 files of 32 KiB (6.4 MiB) across 40 pair directories.
func benchBundle(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	buf := make([]byte, 32<<10)
	for i := 0; i < 200; i++ {
		rand.Read(buf)
		writeFile(b, filepath.Join(dir, fmt.Sprintf("pairs/p%02d/file%d.log", i%40, i)), buf)
	}
	return dir
}

// BenchmarkDigestBaseline is the floor Seal and Verify are compared to: walk the same
// files and sha256 each one, nothing else.
func BenchmarkDigestBaseline(b *testing.B) {
	dir := benchBundle(b)
	b.SetBytes(200 * 32 << 10)
	for b.Loop() {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == EnvelopeName {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = Digest(f)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSeal(b *testing.B) {
	dir := benchBundle(b)
	b.SetBytes(200 * 32 << 10)
	for b.Loop() {
		if _, err := Seal(dir, testInputs(), testKey, testTime); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	dir := benchBundle(b)
	if _, err := Seal(dir, testInputs(), testKey, testTime); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(200 * 32 << 10)
	for b.Loop() {
		if _, err := Verify(dir, testPub, VerifyOptions{RequireSignature: true}); err != nil {
			b.Fatal(err)
		}
	}
}
