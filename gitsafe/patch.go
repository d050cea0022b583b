package gitsafe

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// MaxPatchBytes is the largest patch ParsePatch accepts.
const MaxPatchBytes = 10 << 20

// Patch is a parsed patch whose every path has been validated.
type Patch struct {
	Raw   []byte
	Files []FileChange
	// links: the patch was parsed with PatchOptions.Links, so a file change may create a
	// symlink (FileChange.LinkTarget).
	links bool
	// parsed holds go-gitdiff's reading of Raw, one per Files entry: the fuzz step applies
	// the hunks of the very parse whose paths were validated.
	parsed []*gitdiff.File
}

// FileChange is one file of a patch. Paths are repository-relative with the
// a/ and b/ (or -p1) prefix removed; "" stands for /dev/null.
type FileChange struct {
	OldPath, NewPath                            string
	IsNew, IsDelete, IsRename, IsCopy, IsBinary bool
	OldMode, NewMode                            uint32
	Line                                        int // 1-based line of this file's header in Raw
	// LinkTarget is the target of the symlink this change creates (PatchOptions.Links);
	// "" for every other change.
	LinkTarget string
}

// PatchOptions say what a patch may do beyond changing regular files.
type PatchOptions struct {
	// Links lets a file change create a symlink (a new file of mode 120000), for a repository
	// whose setting is SymlinksInTree. It may not change, retarget or remove one, or turn a
	// file into one in place: a link is written as a regular file that holds its target (git's
	// core.symlinks=false), and only a created one is known to be a link.
	Links bool
}

// Git modes a patch may carry. Anything else (120000 symlink, 160000
// submodule, 040000 directory) is refused.
const (
	modeFile = 0o100644
	modeExec = 0o100755
)

// ParsePatch parses a unified or git diff and validates every path and mode
// before git ever sees it. A patch over MaxPatchBytes is refused with
// ErrPatchTooLarge; an empty patch (whitespace only) yields no files.
func ParsePatch(data []byte) (*Patch, error) {
	return ParsePatchWith(data, PatchOptions{})
}

// ParsePatchWith is ParsePatch with options.
func ParsePatchWith(data []byte, o PatchOptions) (*Patch, error) {
	if len(data) > MaxPatchBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d (MaxPatchBytes)", ErrPatchTooLarge, len(data), MaxPatchBytes)
	}
	p := &Patch{Raw: data, links: o.Links}
	if len(bytes.TrimSpace(data)) == 0 {
		return p, nil
	}
	files, _, err := gitdiff.Parse(bytes.NewReader(data))
	if err != nil {
		// A header git would read as an absolute path ("a//tmp/x") can also be what made
		// the parser give up: name the attack rather than a parse error.
		for _, h := range scanFileHeaders(data) {
			if uerr := checkRawNames(h); uerr != nil {
				return nil, uerr
			}
		}
		return nil, fmt.Errorf("%w: %v", ErrPatchInvalid, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no file change found in a non-empty patch", ErrPatchInvalid)
	}
	headers := scanFileHeaders(data)
	if len(headers) != len(files) {
		return nil, fmt.Errorf(
			"%w: found %d file headers but parsed %d files",
			ErrPatchInvalid,
			len(headers),
			len(files),
		)
	}
	for i, f := range files {
		fc, err := fileChange(f, headers[i], o)
		if err != nil {
			return nil, err
		}
		p.Files = append(p.Files, fc)
	}
	if err := checkLinkCreations(p.Files); err != nil {
		return nil, err
	}
	p.parsed = files
	return p, nil
}

// checkRawNames refuses header names with a doubled slash: go-gitdiff
// collapses "a//etc/passwd" to "etc/passwd" where git apply reads
// "/etc/passwd".
func checkRawNames(h fileHeader) error {
	for _, l := range h.names {
		if strings.Contains(l, "//") && !strings.HasPrefix(l, "--- /dev/null") &&
			!strings.HasPrefix(l, "+++ /dev/null") {
			return fmt.Errorf(
				"patch line %d: %w",
				h.line,
				unsafePath(
					strings.TrimSpace(l),
					"doubled slash in a path: git and the parser would read different files",
				),
			)
		}
	}
	return nil
}

func fileChange(f *gitdiff.File, h fileHeader, o PatchOptions) (FileChange, error) {
	if err := checkRawNames(h); err != nil {
		return FileChange{}, err
	}
	fc := FileChange{
		IsNew: f.IsNew, IsDelete: f.IsDelete, IsRename: f.IsRename, IsCopy: f.IsCopy, IsBinary: f.IsBinary,
		OldMode: uint32(f.OldMode), NewMode: uint32(f.NewMode), Line: h.line,
	}
	var err error
	if fc.OldPath, err = patchName(f.OldName, h); err != nil {
		return fc, err
	}
	if fc.NewPath, err = patchName(f.NewName, h); err != nil {
		return fc, err
	}
	if f.IsNew {
		fc.OldPath = ""
	}
	if f.IsDelete {
		fc.NewPath = ""
	}
	if fc.NewMode == 0 && !f.IsDelete {
		fc.NewMode = fc.OldMode // "index a..b 100644" names one mode for both sides
	}
	if !o.Links || !fc.IsNew || fc.NewMode != modeLink {
		return fc, checkFileChange(fc)
	}
	asFile := fc
	asFile.NewMode = modeFile // its paths are checked like any file's
	if err := checkFileChange(asFile); err != nil {
		return fc, err
	}
	fc.LinkTarget, err = createdLink(f, fc)
	return fc, err
}

// checkLinkCreations refuses a patch that deletes a path and creates a symlink there: a file
// (or a link) turned into a link in place.
func checkLinkCreations(files []FileChange) error {
	old := map[string]bool{}
	for _, f := range files {
		if f.OldPath != "" {
			old[f.OldPath] = true
		}
	}
	for _, f := range files {
		if f.LinkTarget != "" && old[f.NewPath] {
			return fmt.Errorf("patch line %d: %w", f.Line, unsafePath(f.NewPath,
				"the patch turns a file into a symlink in place; a patch may only add a symlink where nothing was"))
		}
	}
	return nil
}

// createdLink is the target of the symlink a new file of mode 120000 creates: the one line
// its one hunk adds, without a final newline (git writes a link's blob so).
func createdLink(f *gitdiff.File, fc FileChange) (string, error) {
	refuse := func(why string) error {
		return fmt.Errorf("patch line %d: %w", fc.Line, unsafePath(fc.NewPath, "a symlink the patch creates "+why))
	}
	if f.IsBinary || f.IsCopy || f.IsRename || len(f.TextFragments) != 1 {
		return "", refuse("must be one text hunk of one line")
	}
	var target strings.Builder
	for _, l := range f.TextFragments[0].Lines {
		if l.Op != gitdiff.OpAdd {
			return "", refuse("must be one text hunk of one line")
		}
		target.WriteString(l.Line)
	}
	if strings.Contains(target.String(), "\n") {
		return "", refuse("must hold its target on one line, with no newline after it")
	}
	return target.String(), nil
}

// patchName turns a parsed name into a repository path. go-gitdiff strips
// the a/ b/ prefix of git diffs itself; for a traditional diff it keeps the
// first component, which git apply (-p1) strips, so strip it here too.
func patchName(name string, h fileHeader) (string, error) {
	if name == "" || name == "/dev/null" || h.git {
		if name == "/dev/null" {
			return "", nil
		}
		return name, nil
	}
	_, rest, ok := strings.Cut(name, "/")
	if !ok {
		return "", fmt.Errorf(
			"%w: line %d: traditional diff path %q has no leading directory for -p1 to strip",
			ErrPatchInvalid,
			h.line,
			name,
		)
	}
	return strings.TrimLeft(rest, "/"), nil
}

func checkFileChange(fc FileChange) error {
	for _, p := range []string{fc.OldPath, fc.NewPath} {
		if p == "" {
			continue
		}
		if err := ValidatePath(p); err != nil {
			return fmt.Errorf("patch line %d: %w", fc.Line, err)
		}
	}
	if fc.OldPath == "" && fc.NewPath == "" {
		return fmt.Errorf("%w: line %d: file change without a path", ErrPatchInvalid, fc.Line)
	}
	for _, m := range []uint32{fc.OldMode, fc.NewMode} {
		if err := checkMode(fc, m); err != nil {
			return err
		}
	}
	return nil
}

func checkMode(fc FileChange, m uint32) error {
	path := fc.NewPath
	if path == "" {
		path = fc.OldPath
	}
	switch m {
	case 0, modeFile, modeExec:
		return nil
	case modeLink:
		return fmt.Errorf("patch line %d: %w", fc.Line, unsafePath(path, "symlink mode 120000: a patch may not "+
			"change, retarget or remove a symlink, or turn a file into one; it may add one only where the tree "+
			"allows symlinks ("+SymlinksSetting+")"))
	case 0o160000:
		return fmt.Errorf("patch line %d: %w", fc.Line, unsafePath(path, "submodule mode 160000"))
	}
	return fmt.Errorf("patch line %d: %w", fc.Line, unsafePath(path, fmt.Sprintf("unsupported mode %o", m)))
}

// Paths returns every path the patch touches, old and new, deduplicated and
// sorted.
func (p *Patch) Paths() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range p.Files {
		for _, path := range []string{f.OldPath, f.NewPath} {
			if path != "" && !seen[path] {
				seen[path] = true
				out = append(out, path)
			}
		}
	}
	sort.Strings(out)
	return out
}
