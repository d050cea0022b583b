package gitsafe

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestVerify(t *testing.T) {
	files := map[string]string{"a.py": "a\n", ".gitignore": ".env\n*.pyc\n", "pkg/b.py": "b\n"}
	cases := []struct {
		name      string
		dirty     func(t *testing.T, src string)
		requested string // "base", "head", "", or a literal
		pinned    bool
		want      error
	}{
		{name: "clean, pinned at HEAD", requested: "head", pinned: true},
		{name: "clean, unpinned at an older commit", requested: "base"},
		{name: "clean, unpinned, nothing requested", requested: ""},
		{name: "pinned, HEAD disagrees", requested: "base", pinned: true, want: ErrHeadMismatch},
		{name: "pinned, nothing requested", requested: "", pinned: true, want: ErrCommitNotFound},
		{name: "missing commit", requested: "0123456789abcdef0123456789abcdef01234567", want: ErrCommitNotFound},
		{name: "ignored files only", requested: "head", pinned: true, dirty: func(t *testing.T, src string) {
			writeFiles(t, src, map[string]string{".env": "SECRET=1\n", "pkg/c.pyc": "x"})
		}},
		{name: "modified tracked file", requested: "head", want: ErrDirty, dirty: func(t *testing.T, src string) {
			writeFiles(t, src, map[string]string{"a.py": "changed\n"})
		}},
		{name: "untracked file", requested: "head", want: ErrDirty, dirty: func(t *testing.T, src string) {
			writeFiles(t, src, map[string]string{"pkg/new.py": "x\n"})
		}},
		{name: "deleted file", requested: "head", want: ErrDirty, dirty: func(t *testing.T, src string) {
			if err := os.Remove(filepath.Join(src, "a.py")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "staged change", requested: "head", want: ErrDirty, dirty: func(t *testing.T, src string) {
			writeFiles(t, src, map[string]string{"a.py": "staged\n"})
			tgit(t, src, "add", "a.py")
		}},
		{
			name:      "change hidden by skip-worktree in the source index",
			requested: "head",
			want:      ErrDirty,
			dirty: func(t *testing.T, src string) {
				tgit(t, src, "update-index", "--skip-worktree", "a.py")
				writeFiles(t, src, map[string]string{"a.py": "hidden\n"})
			},
		},
		{
			name:      "change hidden by assume-unchanged in the source index",
			requested: "head",
			want:      ErrDirty,
			dirty: func(t *testing.T, src string) {
				tgit(t, src, "update-index", "--assume-unchanged", "a.py")
				writeFiles(t, src, map[string]string{"a.py": "hidden\n"})
			},
		},
		{
			name:      "untracked file hidden by info/exclude",
			requested: "head",
			want:      ErrDirty,
			dirty: func(t *testing.T, src string) {
				writeFiles(t, src, map[string]string{".git/info/exclude": "*.py\n", "sneaky.py": "x\n"})
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, base := newRepo(t, files)
			writeFiles(t, src, map[string]string{"a.py": "a2\n"})
			head := commitAll(t, src, "second")
			if c.dirty != nil {
				c.dirty(t, src)
			}
			requested := map[string]string{"base": base, "head": head, "": ""}[c.requested]
			if requested == "" && c.requested != "" {
				requested = c.requested
			}
			r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
			executed, err := r.Verify(testCtx(t), requested, c.pinned)
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Fatalf("Verify = %q, %v; want %v", executed, err, c.want)
				}
				t.Logf("refused: %v", err)
				return
			}
			want := requested
			if want == "" {
				want = head
			}
			if err != nil || executed != want {
				t.Fatalf("Verify = %q, %v; want %s", executed, err, want)
			}
		})
	}
}
