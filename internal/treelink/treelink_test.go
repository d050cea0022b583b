package treelink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: the links of a tree, one table row per way out (or around) the tree's root.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links map[string]string
		want  string // "" when every link stays inside; else a word of the refusal
	}{
		{"sibling file", map[string]string{"test/fixtures/a.sql": "b.sql"}, ""},
		{"up one level, inside", map[string]string{"test/fixtures/cfg": "../data/cfg"}, ""},
		{"to a directory", map[string]string{"docs/src": "../src"}, ""},
		{"to the root from below", map[string]string{"sub/up": ".."}, ""},
		{"chain inside", map[string]string{"a": "b", "b": "c/d", "c/d": "../e"}, ""},
		{"dangling, inside", map[string]string{"a": "nowhere/x"}, ""},
		{"absolute", map[string]string{"pkg/x": "/etc/passwd"}, "absolute"},
		{"dot-dot out of the root", map[string]string{"x": "../outside"}, "above the root"},
		{"dot-dot out from below", map[string]string{"a/b/x": "../../../tmp/canary"}, "above the root"},
		{"lexically inside, out through a link", map[string]string{"sub/up": "..", "sub/a": "up/../x"}, "above the root"},
		{"chain out", map[string]string{"a": "b", "b": "c", "c": "../x"}, "above the root"},
		{"through a directory link, out", map[string]string{"d": "deep/er", "x": "d/../../../y"}, "above the root"},
		{"loop", map[string]string{"a": "b", "b": "a"}, "loop"},
		{"self", map[string]string{"a": "a"}, "loop"},
		{"empty target", map[string]string{"a": ""}, "empty"},
		{"NUL", map[string]string{"a": "b\x00c"}, "NUL"},
		{"line break", map[string]string{"a": "b\nc"}, "line break"},
		{"backslash", map[string]string{"a": "..\\..\\x"}, "backslash"},
		{"too long", map[string]string{"a": strings.Repeat("b/", 2100)}, "longer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.links)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Check(%q) = %v, want nil", tc.links, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Check(%q) = %v, want an error with %q", tc.links, err, tc.want)
			}
		})
	}
}

// TestResolveAgreesWithTheKernel builds each tree of links for real, in a directory of its
// own beside canaries that an escape would reach, and compares Resolve with what the kernel
// resolves: wherever Resolve says inside, the kernel's answer is the same path; where the
// kernel leaves the tree (to a canary), Resolve refuses.
func TestResolveAgreesWithTheKernel(t *testing.T) {
	for _, tc := range []struct {
		links map[string]string
		dirs  []string
		path  string
	}{
		{map[string]string{"sub/up": ".."}, []string{"sub", "x"}, "sub/up/x"},
		{map[string]string{"sub/up": "..", "sub/a": "up/../x"}, []string{"sub", "x"}, "sub/a"},
		{map[string]string{"d": "deep/er"}, []string{"deep/er/f"}, "d/f"},
		{map[string]string{"d": "deep/er", "x": "d/../../y"}, []string{"deep/er", "y"}, "x"},
		{map[string]string{"d": "deep/er", "x": "d/../../../y"}, []string{"deep/er", "y"}, "x"},
		{map[string]string{"a": "b", "b": "c/d", "c/d": "../e"}, []string{"c", "e"}, "a"},
	} {
		outer := t.TempDir()
		root := filepath.Join(outer, "tree")
		for _, canary := range []string{"x", "y"} { // what an escape would reach
			if err := os.WriteFile(filepath.Join(outer, canary), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range append(tc.dirs, "") {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for p, target := range tc.links {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
				t.Fatal(err)
			}
		}
		real, kerr := filepath.EvalSymlinks(filepath.Join(root, tc.path))
		got, err := Resolve(tc.links, tc.path)
		inside := kerr == nil && (real == root || strings.HasPrefix(real, root+"/"))
		switch {
		case err == nil && !inside:
			t.Errorf("%v: Resolve(%q) = %q, but the kernel goes to %s, outside the tree", tc.links, tc.path, got, real)
		case err == nil && inside && filepath.Join(root, got) != real:
			t.Errorf("%v: Resolve(%q) = %q, the kernel %s", tc.links, tc.path, got, real)
		}
		t.Logf("%v %s: Resolve %q %v; kernel %s %v", tc.links, tc.path, got, err, real, kerr)
	}
}

// TestThrough: a path that is a link, or lies under one, names it.
func TestThrough(t *testing.T) {
	links := map[string]string{"pkg/x": "../tests", "a": "b"}
	for p, want := range map[string]string{"pkg/x": "pkg/x", "pkg/x/y.py": "pkg/x", "pkg/xy": "", "a/b/c": "a",
		"b": "", "pkg": ""} {
		if got := Through(links, p); got != want {
			t.Errorf("Through(%q) = %q, want %q", p, got, want)
		}
	}
}
