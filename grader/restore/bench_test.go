package restore

import (
	"fmt"
	"io/fs"
	"os"
	"testing"
)

// benchRepo is a 1,000-file repository with 200 test files under tests/.
func benchRepo() map[string]file {
	repo := map[string]file{}
	for p, f := range baseRepo {
		repo[p] = f
	}
	for i := range 800 {
		repo[fmt.Sprintf("src/pkg%d/mod_%d.py", i%20, i)] = file{Data: "X = 1\n"}
	}
	for i := range 200 {
		repo[fmt.Sprintf("tests/unit%d/test_%d.py", i%10, i)] = file{Data: "def test(): pass\n"}
	}
	return repo
}

// BenchmarkBaselineWalk is the floor: one walk of the workspace, reading nothing.
func BenchmarkBaselineWalk(b *testing.B) {
	ws := b.TempDir()
	writeTree(b, ws, benchRepo())
	for b.Loop() {
		n := 0
		_ = fs.WalkDir(os.DirFS(ws), ".", func(string, fs.DirEntry, error) error { n++; return nil })
	}
}

// BenchmarkRestoreUntouched is Restore on an untouched 1,000-file workspace.
func BenchmarkRestoreUntouched(b *testing.B) {
	dir := b.TempDir()
	base, ws := dir+"/base", dir+"/ws"
	writeTree(b, base, benchRepo())
	copyTree(b, base, ws)
	restored := defaultRestored()
	for b.Loop() {
		out, err := Restore(ws, dirBase{base}, restored)
		if err != nil || !out.TestedAsSubmitted {
			b.Fatal(err, out)
		}
	}
}
