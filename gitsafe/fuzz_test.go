package gitsafe

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// gnuHunk is one "Hunk #k succeeded at L with fuzz F (offset O lines)." line.
var gnuHunk = regexp.MustCompile(
	`^Hunk #(\d+) succeeded at (\d+)(?: with fuzz (\d+))?(?: \(offset (-?\d+) lines?\))?\.$`)

// TestFuzzStepAgainstGNUPatch holds the fuzz step to what GNU patch 2.7.6 did with the same
// file and patch (testdata/gnupatch/*.txtar, recorded by regenerate.sh there): where GNU patch
// applied every hunk, Tender's result is the same file and each hunk is placed at the same
// line with the same fuzz and offset; where GNU patch failed a hunk, or applied the patch
// in reverse, Tender's step fails.
func TestFuzzStepAgainstGNUPatch(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "gnupatch", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, name := range files {
		t.Run(strings.TrimSuffix(filepath.Base(name), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(name)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string]string{}
			for _, f := range a.Files {
				sec[f.Name] = string(f.Data)
			}
			p, err := ParsePatch([]byte(sec["patch"]))
			if err != nil {
				t.Fatal(err)
			}
			ws := plainDir(t, map[string]string{"f.txt": sec["file"]})
			states, placed, err := fuzzStep(p, ws)
			gnu := strings.Split(strings.TrimSpace(sec["gnu"]), "\n")
			if gnu[len(gnu)-1] != "exit 0" || strings.HasPrefix(gnu[0], "Reversed") {
				if err == nil {
					t.Fatalf("GNU patch: %q; Tender's fuzz step applied it: %+v", gnu, placed)
				}
				return
			}
			if err != nil {
				t.Fatalf("GNU patch applied it (%q); Tender: %v", gnu, err)
			}
			if diff := cmp.Diff(sec["result"], string(states["f.txt"].data)); diff != "" {
				t.Errorf("result (-GNU patch +Tender):\n%s", diff)
			}
			if diff := cmp.Diff(gnuPlacements(t, gnu, p, len(placed)), asGNU(p, placed)); diff != "" {
				t.Errorf("placements (-GNU patch +Tender):\n%s", diff)
			}
		})
	}
}

// gnuPlacements reads GNU patch's hunk lines; a hunk it does not mention applied exactly.
func gnuPlacements(t *testing.T, gnu []string, p *Patch, n int) []HunkPlacement {
	t.Helper()
	out := make([]HunkPlacement, n)
	for i := range out {
		out[i] = HunkPlacement{Path: "f.txt", Hunk: i + 1, Line: int(p.parsed[0].TextFragments[i].OldPosition)}
	}
	for _, l := range gnu {
		m := gnuHunk.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		k := atoi(t, m[1]) - 1
		out[k].Line, out[k].Fuzz, out[k].Offset = atoi(t, m[2]), atoi(t, m[3]), atoi(t, m[4])
	}
	return out
}

// asGNU states Tender's placements in GNU patch's terms: it reports a hunk's line in the new
// file, that is moved by what the hunks before it added and removed.
func asGNU(p *Patch, placed []HunkPlacement) []HunkPlacement {
	out := append([]HunkPlacement(nil), placed...)
	shift := 0
	for i := range out {
		out[i].Line += shift
		fr := p.parsed[0].TextFragments[i]
		shift += int(fr.LinesAdded - fr.LinesDeleted)
	}
	return out
}

func atoi(t *testing.T, s string) int {
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// placeCases are placements GNU patch has no say in, or that a txtar file cannot hold.
var placeCases = []struct {
	name, file, patch string
	want              string // "" when the step must fail
	fail              string // a word of the failure
}{
	{
		name: "no final newline, its last line changed, context drifted",
		file: "a\nb\nc\nd\ne",
		patch: "--- a/f.txt\n+++ b/f.txt\n@@ -2,4 +2,4 @@\n x\n c\n d\n-e\n\\ No newline at end of file\n" +
			"+E\n\\ No newline at end of file\n",
		want: "a\nb\nc\nd\nE",
	},
	{
		name:  "added line without a newline in the middle of the file",
		file:  "a\nb\nc\n",
		patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,3 @@\n a\n+x\n\\ No newline at end of file\n b\n",
		fail:  "newline",
	},
	{
		name:  "CRLF lines compare whole",
		file:  "a\r\nb\r\nc\r\nd\r\n",
		patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n",
		want:  "a\r\nB\r\nc\r\nd\r\n",
	},
	{
		name:  "LF context does not match CRLF removed line",
		file:  "a\r\nb\r\nc\r\n",
		patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		fail:  "nowhere",
	},
	{
		name:  "zero-context insertion after line 2",
		file:  "a\nb\nc\n",
		patch: "--- a/f.txt\n+++ b/f.txt\n@@ -2,0 +3 @@\n+x\n",
		want:  "a\nb\nx\nc\n",
	},
	{
		name: "a long file of equal lines: the search is bounded",
		file: strings.Repeat("same\n", 300000),
		patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,301 +1,301 @@\n" + strings.Repeat(" same\n", 150) + "-other\n+x\n" +
			strings.Repeat(" same\n", 150),
		fail: "bound",
	},
}

func TestPlaceHunks(t *testing.T) {
	for _, c := range placeCases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParsePatch([]byte(c.patch))
			if err != nil {
				t.Fatal(err)
			}
			budget := maxFuzzCompares
			got, _, err := placeHunks([]byte(c.file), p.parsed[0].TextFragments, "f.txt", &budget)
			if c.want == "" {
				if err == nil || !strings.Contains(err.Error(), c.fail) {
					t.Fatalf("err = %v, want one saying %q; got %q", err, c.fail, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// FuzzPlaceHunks checks the fuzz step on any patch and file: no panic, and on success the
// output is the file less the removed lines plus the added ones, byte for byte in length
// (removed lines are always compared, so they are the patch's own bytes).
func FuzzPlaceHunks(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "gnupatch", "*.txtar"))
	for _, name := range files {
		a, err := txtar.ParseFile(name)
		if err != nil {
			f.Fatal(err)
		}
		var file, patch []byte
		for _, s := range a.Files {
			switch s.Name {
			case "file":
				file = s.Data
			case "patch":
				patch = s.Data
			}
		}
		f.Add(file, patch)
	}
	for _, c := range placeCases[:5] {
		f.Add([]byte(c.file), []byte(c.patch))
	}
	f.Fuzz(func(t *testing.T, file, patch []byte) {
		p, err := ParsePatch(patch)
		if err != nil || len(p.parsed) != 1 {
			return
		}
		budget := 1 << 20
		frags := p.parsed[0].TextFragments
		got, _, err := placeHunks(file, frags, "f.txt", &budget)
		if err != nil {
			return
		}
		want := len(file)
		for _, fr := range frags {
			for _, l := range fr.Lines {
				switch l.Op {
				case gitdiff.OpAdd:
					want += len(l.Line)
				case gitdiff.OpDelete:
					want -= len(l.Line)
				}
			}
		}
		if len(got) != want {
			t.Fatalf("%d bytes out, want %d", len(got), want)
		}
	})
}

// The fuzz step places hunks against the workspace's file as it is now, and names the file
// and hunk that do not fit.
func TestFuzzStepReadsTheWorkspace(t *testing.T) {
	ws := plainDir(t, map[string]string{"f.txt": "a\nb\nc\n"})
	p, err := ParsePatch([]byte("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("a\nz\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := fuzzStep(p, ws); err == nil || !strings.Contains(err.Error(), "f.txt: hunk 1") {
		t.Fatalf("fuzzStep = %v, want a failure naming f.txt's hunk 1", err)
	}
}
