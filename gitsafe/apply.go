package gitsafe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Apply applies a validated patch inside dir under ApplyStrict: see ApplyWith.
func Apply(ctx context.Context, p *Patch, dir string) error {
	_, err := ApplyWith(ctx, p, dir, ApplyStrict)
	return err
}

// gitApplyStep runs `git apply` on dir itself, with the hardened runner in git's "patch"
// mode: no repository is discovered (dir holds no .git entry, and the search stops at dir's
// parent).
func gitApplyStep(ctx context.Context, p *Patch, dir string) error {
	_, err := runGit(ctx, applyCall(dir, p.Raw, "--whitespace=nowarn"))
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%w: %w", ErrPatchFailed, err)
	}
	return err
}

func applyCall(dir string, raw []byte, args ...string) gitCall {
	return gitCall{
		args:    append([]string{"apply"}, args...),
		dir:     dir,
		ceiling: filepath.Dir(dir),
		stdin:   bytes.NewReader(raw),
	}
}

// checkApplyDir makes dir absolute and refuses a directory that git could
// take for a repository, or where a touched path passes through a symlink.
func checkApplyDir(dir string, p *Patch) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", unsafePath(dir, "apply target is not a directory")
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return "", unsafePath(filepath.Join(dir, ".git"), "apply target holds a .git entry")
	}
	for _, path := range p.Paths() {
		if err := noSymlinkOnPath(dir, path); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// noSymlinkOnPath refuses a path any of whose existing components inside
// dir is a symlink (the CVE-2023-25652 class of out-of-tree writes).
func noSymlinkOnPath(dir, path string) error {
	cur := dir
	for _, comp := range strings.Split(path, "/") {
		cur = filepath.Join(cur, comp)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return unsafePath(path, "passes through a symlink in the target directory")
		}
	}
	return nil
}

// crossCheck asks git how it reads the patch, without touching dir, and
// refuses the patch unless git names the same files as ParsePatch did.
func crossCheck(ctx context.Context, p *Patch, dir string) error {
	out, err := runGit(ctx, applyCall(dir, p.Raw, "--numstat", "--summary", "-z"))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPatchFailed, err)
	}
	names, summary := splitNumstat(out)
	if err := sameFiles(p, names); err != nil {
		return err
	}
	return checkSummaryModes(summary, p.createdLinks())
}

// splitNumstat separates NUL-terminated numstat records from the summary
// lines (which start with a space) that follow them.
func splitNumstat(out []byte) (names []string, summary string) {
	rest := string(out)
	for rest != "" && rest[0] != ' ' {
		rec, after, _ := strings.Cut(rest, "\x00")
		rest = after
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) == 3 {
			names = append(names, parts[2])
		}
	}
	return names, rest
}

func sameFiles(p *Patch, names []string) error {
	if len(names) != len(p.Files) {
		return unsafePath(
			strings.Join(names, ", "),
			fmt.Sprintf("git reads %d files in the patch, the parser %d", len(names), len(p.Files)),
		)
	}
	for i, f := range p.Files {
		want := f.NewPath
		if want == "" {
			want = f.OldPath
		}
		if names[i] != want {
			return unsafePath(
				names[i],
				fmt.Sprintf("git reads this path where the parser read %q (patch line %d)", want, f.Line),
			)
		}
	}
	return nil
}

// checkSummaryModes refuses a symlink or submodule mode in git's summary of the patch, but
// for the creation of a link the parser read as one (created: path -> target).
func checkSummaryModes(summary string, created map[string]string) error {
	for _, line := range strings.Split(summary, "\n") {
		f := strings.Fields(line)
		var modes []string
		switch {
		case len(f) == 4 && f[0] == "create" && f[1] == "mode" && f[2] == "120000" && created[f[3]] != "":
		case len(f) >= 4 && (f[0] == "create" || f[0] == "delete") && f[1] == "mode":
			modes = f[2:3]
		case len(f) >= 6 && f[0] == "mode" && f[1] == "change":
			modes = []string{f[2], f[4]}
		}
		for _, m := range modes {
			if m == "120000" || m == "160000" {
				return unsafePath(line, "git reads a symlink or submodule mode in the patch")
			}
		}
	}
	return nil
}
