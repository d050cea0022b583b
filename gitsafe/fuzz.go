package gitsafe

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// MaxFuzz is the most context lines the fuzz step ignores at each end of a hunk: SWE-bench's
// `patch --fuzz=5`. As in GNU patch, a hunk is never fuzzed past its own context, so with
// git's three lines of context the step ignores at most three.
const MaxFuzz = 5

// maxFuzzCompares bounds the line comparisons of one fuzz step: the patch and the file are
// the candidate's, and a search over a long file of equal lines must end.
const maxFuzzCompares = 1 << 26

// maxFuzzFileBytes bounds a file the fuzz step reads.
const maxFuzzFileBytes = 64 << 20

// HunkPlacement says where the fuzz step put one hunk.
type HunkPlacement struct {
	Path   string `json:"path"`
	Hunk   int    `json:"hunk"`   // 1-based, within its file
	Line   int    `json:"line"`   // 1-based line of the original file where the hunk's old side starts
	Offset int    `json:"offset"` // Line minus the line the hunk header names
	Fuzz   int    `json:"fuzz"`   // context lines ignored at each end of the hunk
}

var errFuzzBudget = errors.New("the search for hunk positions exceeded its bound")

// fuzzStep computes, without writing anything, what the patch makes of dir when each hunk
// may move (as `git apply` lets it) and may ignore up to MaxFuzz lines of its leading and
// trailing context (as `patch --fuzz` does). It is Tender's own code, not GNU patch: each
// file's hunks are placed in that file only, the file the parser and git name (git's new
// name, for a traditional diff whose two names differ; GNU patch would take the old one);
// the removed lines and the context between changes always match exactly; every hunk lies
// wholly inside the file and after the hunk before it; a patch is never applied in reverse
// (GNU patch --batch assumes a patch that applies backwards is reversed); binary patches are
// not fuzzed; and it writes no .orig or .rej file.
func fuzzStep(p *Patch, dir string) (map[string]entry, []HunkPlacement, error) {
	if len(p.parsed) != len(p.Files) {
		return nil, nil, errors.New("gitsafe: internal error: the patch was not made by ParsePatch")
	}
	ov := &overlay{dir: dir, m: map[string]entry{}}
	budget := maxFuzzCompares
	var placed []HunkPlacement
	for i, fc := range p.Files {
		hp, err := ov.applyFile(fc, p.parsed[i], &budget)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrPatchFailed, err)
		}
		placed = append(placed, hp...)
	}
	return ov.m, placed, nil
}

// overlay is the tree as the patch has made it so far: entries it set, else dir's own.
type overlay struct {
	dir string
	m   map[string]entry
}

func (o *overlay) get(p string) (entry, error) {
	if e, ok := o.m[p]; ok {
		return e, nil
	}
	return readEntry(filepath.Join(o.dir, filepath.FromSlash(p)), p)
}

// readEntry reads what one path holds; a symlink or a special file is refused.
func readEntry(full, p string) (entry, error) {
	fi, err := os.Lstat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return entry{kind: entryAbsent}, nil
	case err != nil:
		return entry{}, err
	case fi.IsDir():
		return entry{kind: entryDir}, nil
	case !fi.Mode().IsRegular():
		return entry{}, unsafePath(p, "is neither a regular file nor a directory")
	case fi.Size() > maxFuzzFileBytes:
		return entry{}, fmt.Errorf("%s: %d bytes, more than the fuzz step reads (%d)", p, fi.Size(), maxFuzzFileBytes)
	}
	f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return entry{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFuzzFileBytes+1))
	if err != nil {
		return entry{}, err
	}
	if len(data) > maxFuzzFileBytes {
		return entry{}, fmt.Errorf("%s: grew past %d bytes while read", p, maxFuzzFileBytes)
	}
	return entry{kind: entryFile, data: data, mode: fi.Mode().Perm()}, nil
}

func (o *overlay) applyFile(fc FileChange, f *gitdiff.File, budget *int) ([]HunkPlacement, error) {
	name := fc.NewPath
	if name == "" {
		name = fc.OldPath
	}
	if f.IsBinary {
		return nil, fmt.Errorf("%s: a binary patch has no hunks to place", name)
	}
	src, err := o.source(fc, name)
	if err != nil {
		return nil, err
	}
	data, placed, err := placeHunks(src.data, f.TextFragments, name, budget)
	if err != nil {
		return nil, err
	}
	return placed, o.store(fc, entry{kind: entryFile, data: data, mode: permOf(fc, src.mode)})
}

// source is the content the file's hunks apply to.
func (o *overlay) source(fc FileChange, name string) (entry, error) {
	if fc.IsNew {
		cur, err := o.get(fc.NewPath)
		if err != nil {
			return entry{}, err
		}
		if cur.kind != entryAbsent {
			return entry{}, fmt.Errorf("%s: the patch creates it, but it already exists", name)
		}
		return entry{kind: entryFile}, nil
	}
	from := fc.NewPath
	if fc.IsRename || fc.IsCopy || fc.IsDelete {
		from = fc.OldPath
	}
	src, err := o.get(from)
	if err != nil {
		return entry{}, err
	}
	switch src.kind {
	case entryAbsent:
		return entry{}, fmt.Errorf("%s: no such file", from)
	case entryDir:
		return entry{}, fmt.Errorf("%s: is a directory", from)
	}
	return src, nil
}

func (o *overlay) store(fc FileChange, e entry) error {
	switch {
	case fc.IsDelete:
		if len(e.data) != 0 {
			return fmt.Errorf("%s: the patch deletes it, but it holds lines the patch does not remove", fc.OldPath)
		}
		o.m[fc.OldPath] = entry{kind: entryAbsent}
		return nil
	case fc.IsRename || fc.IsCopy:
		cur, err := o.get(fc.NewPath)
		if err != nil {
			return err
		}
		if cur.kind != entryAbsent {
			return fmt.Errorf("%s: the patch renames or copies onto it, but it already exists", fc.NewPath)
		}
		if fc.IsRename {
			o.m[fc.OldPath] = entry{kind: entryAbsent}
		}
	}
	o.m[fc.NewPath] = e
	return nil
}

// permOf is a file's permission bits after the patch: git's new mode when the patch creates
// the file or changes its mode, else what it had.
func permOf(fc FileChange, had fs.FileMode) fs.FileMode {
	if fc.IsNew || (fc.NewMode != 0 && fc.NewMode != fc.OldMode) {
		if fc.NewMode == modeExec {
			return 0o755
		}
		return 0o644
	}
	if had == 0 {
		return 0o644
	}
	return had
}

// placeHunks applies the hunks of one file to its content, in order.
func placeHunks(content []byte, frags []*gitdiff.TextFragment, name string, budget *int) (
	[]byte, []HunkPlacement, error) {
	lines := splitLines(content)
	var out []string
	var placed []HunkPlacement
	cursor, offset := 0, 0
	for k, fr := range frags {
		h := newHunk(fr)
		where, fuzz, err := h.locate(lines, cursor, offset, budget)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: hunk %d (%s): %w", name, k+1, strings.TrimSpace(fr.Header()), err)
		}
		out = append(out, lines[cursor:where]...)
		cursor = h.apply(lines, where, &out)
		offset = where - h.start
		placed = append(placed, HunkPlacement{Path: name, Hunk: k + 1, Line: where + 1, Offset: offset, Fuzz: fuzz})
	}
	out = append(out, lines[cursor:]...)
	for i := 0; i+1 < len(out); i++ {
		if !strings.HasSuffix(out[i], "\n") {
			return nil, nil, fmt.Errorf("%s: the hunks would join a line that has no newline to the next", name)
		}
	}
	return []byte(strings.Join(out, "")), placed, nil
}

func splitLines(content []byte) []string {
	if len(content) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(content), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// hunk is one text fragment, read for placing.
type hunk struct {
	frag        *gitdiff.TextFragment
	old         []string // the old side: context and removed lines
	lead, trail int      // context lines before the first change and after the last
	start       int      // 0-based index where the header says the old side starts
}

func newHunk(fr *gitdiff.TextFragment) hunk {
	h := hunk{frag: fr}
	changed := false
	for _, l := range fr.Lines {
		switch l.Op {
		case gitdiff.OpContext:
			if changed {
				h.trail++
			} else {
				h.lead++
			}
		case gitdiff.OpAdd, gitdiff.OpDelete:
			changed, h.trail = true, 0
		}
		if l.Op != gitdiff.OpAdd {
			h.old = append(h.old, l.Line)
		}
	}
	h.start = int(fr.OldPosition) - 1
	if len(h.old) == 0 {
		h.start = int(fr.OldPosition) // "-5,0": insert after line 5
	}
	return h
}

// locate finds where the hunk's old side starts, trying fuzz 0, 1, ... up to the hunk's
// context (and MaxFuzz), and at each fuzz the named line moved by the offset of the hunks
// before, then one line further each way, as GNU patch does. A hunk with less context before
// its change than after (one the header places at the top of the file) may only match the
// top of the file, and one with less after than before only its end, until the fuzz covers
// the difference.
func (h hunk) locate(lines []string, after, offset int, budget *int) (int, int, error) {
	ctx := max(h.lead, h.trail)
	for fuzz := 0; fuzz <= min(MaxFuzz, ctx); fuzz++ {
		pf, sf := fuzz+h.lead-ctx, fuzz+h.trail-ctx
		atStart, atEnd := pf < 0 && h.frag.OldPosition <= 1, sf < 0
		w, ok := h.search(lines, after, h.start+offset, max(pf, 0), max(sf, 0), atStart, atEnd, budget)
		if *budget <= 0 {
			return 0, 0, errFuzzBudget
		}
		if ok {
			return w, fuzz, nil
		}
	}
	return 0, 0, fmt.Errorf("matches nowhere in the file with up to %d lines of context ignored", min(MaxFuzz, ctx))
}

func (h hunk) search(lines []string, after, guess, pf, sf int, atStart, atEnd bool, budget *int) (int, bool) {
	n := len(h.old)
	lo, hi := after, len(lines)-n
	if atStart {
		lo, hi = max(lo, 0), min(hi, 0)
	}
	if atEnd {
		lo = max(lo, hi)
	}
	if n == 0 {
		return guess, guess >= lo && guess <= hi
	}
	for d := 0; guess+d <= hi || guess-d >= lo; d++ {
		for _, w := range candidates(guess, d) {
			if w < lo || w > hi {
				continue
			}
			if h.matches(lines, w, pf, sf, budget) {
				return w, true
			}
			if *budget <= 0 {
				return 0, false
			}
		}
	}
	return 0, false
}

// candidates are the positions d lines from the guess: below it first, as GNU patch tries.
func candidates(guess, d int) []int {
	if d == 0 {
		return []int{guess}
	}
	return []int{guess + d, guess - d}
}

// matches compares the old side with the file at w, but for pf lines at its start and sf at
// its end; those are context lines, so a removed line is always compared.
func (h hunk) matches(lines []string, w, pf, sf int, budget *int) bool {
	for k := pf; k < len(h.old)-sf; k++ {
		*budget--
		if lines[w+k] != h.old[k] {
			return false
		}
	}
	return true
}

// apply writes the hunk placed at w to out: the file's own lines where the hunk has context
// (so context that drifted stays as the file has it), the patch's added lines, and nothing
// for removed lines. It returns the index after the hunk's old side.
func (h hunk) apply(lines []string, w int, out *[]string) int {
	i := w
	for _, l := range h.frag.Lines {
		switch l.Op {
		case gitdiff.OpContext:
			*out = append(*out, lines[i])
			i++
		case gitdiff.OpDelete:
			i++
		case gitdiff.OpAdd:
			*out = append(*out, l.Line)
		}
	}
	return i
}
