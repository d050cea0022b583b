package gitsafe

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A forged pack index maps one object id to another object's data. Git
// checks commits and trees when it parses them, but hands blobs out as
// stored: plain git then shows the other file's content. gitsafe hashes
// every blob it hands out, so Materialize and ReadFile refuse instead.
func TestForgedPackIndex(t *testing.T) {
	cases := []struct {
		name string
		swap func(t *testing.T, src, base, evil string) (string, string)
		want error
	}{
		{"blob", func(t *testing.T, src, base, evil string) (string, string) {
			return revParse(t, src, base+":app.py"), revParse(t, src, evil+":app.py")
		}, ErrUnsafeRepo},
		{
			"commit",
			func(t *testing.T, src, base, evil string) (string, string) { return base, evil },
			ErrCommitNotFound,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, base := newRepo(t, map[string]string{"app.py": "good\n"})
			writeFiles(t, src, map[string]string{"app.py": "evil\n"})
			evil := commitAll(t, src, "evil")
			tgit(t, src, "update-ref", "refs/heads/side", evil)
			tgit(t, src, "reset", "-q", "--hard", base)
			tgit(t, src, "repack", "-a", "-d", "-q")
			idx, _ := filepath.Glob(filepath.Join(src, ".git", "objects", "pack", "*.idx"))
			if len(idx) != 1 {
				t.Fatalf("want one pack index, got %v", idx)
			}
			a, b := c.swap(t, src, base, evil)
			swapIdxOffsets(t, idx[0], a, b)
			r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
			ctx := testCtx(t)
			ws := filepath.Join(t.TempDir(), "ws")
			if fp, err := r.Materialize(ctx, base, ws); !errors.Is(err, c.want) {
				t.Errorf("Materialize = %+v, %v; want %v", fp, err, c.want)
			}
			if got, err := r.ReadFile(ctx, base, "app.py"); !errors.Is(err, c.want) {
				t.Errorf("ReadFile = %q, %v; want %v", got, err, c.want)
			}
			if c.name == "blob" {
				if out := tgit(t, src, "cat-file", "blob", a); !strings.Contains(out, "evil") {
					t.Errorf("control: the forged index did not fool plain git: %q", out)
				}
			}
		})
	}
}

func revParse(t *testing.T, dir, rev string) string {
	return strings.TrimSpace(tgit(t, dir, "rev-parse", rev))
}

// swapIdxOffsets exchanges the pack offsets of two objects in a version 2
// pack index.
func swapIdxOffsets(t *testing.T, path, a, b string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("\xfftOc\x00\x00\x00\x02")) {
		t.Fatal("not a v2 pack index")
	}
	n := int(binary.BigEndian.Uint32(data[8+255*4:]))
	names := 8 + 256*4
	offsets := names + n*20 + n*4
	find := func(oid string) int {
		raw, _ := hex.DecodeString(oid)
		for i := 0; i < n; i++ {
			if bytes.Equal(data[names+i*20:names+i*20+20], raw) {
				return i
			}
		}
		t.Fatalf("%s not in the index", oid)
		return -1
	}
	i, j := offsets+find(a)*4, offsets+find(b)*4
	tmp := append([]byte{}, data[i:i+4]...)
	copy(data[i:i+4], data[j:j+4])
	copy(data[j:j+4], tmp)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
