package restore

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"

	"github.com/tender-grader/tender/report"
)

// removeAdded removes the regular files under restored paths that the base does not have.
func (r *run) removeAdded(files []string) error {
	for _, f := range files {
		if r.baseSet[f] || !r.restored.Match(f) {
			continue
		}
		if err := r.ws.root.Remove(f); err != nil {
			return fmt.Errorf("removing %s, which the patch added under restored paths: %w", f, err)
		}
		r.out.Removed = append(r.out.Removed, f)
	}
	baseDirs := map[string]bool{}
	for f := range r.baseSet {
		for d := path.Dir(f); d != "." && !baseDirs[d]; d = path.Dir(d) {
			baseDirs[d] = true
		}
	}
	if err := r.ws.pruneEmpty(r.out.Removed, func(d string) bool { return baseDirs[d] }); err != nil {
		return fmt.Errorf("removing directories the patch added under restored paths: %w", err)
	}
	return nil
}

// restoreBase rewrites every base file under restored paths that is missing or differs.
func (r *run) restoreBase() error {
	for _, f := range slices.Sorted(maps.Keys(r.baseSet)) {
		if !r.restored.Match(f) {
			continue
		}
		if !fs.ValidPath(f) || f == "." {
			return fmt.Errorf("base file path %q is not a clean relative path", f)
		}
		if err := r.restoreOne(f); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) restoreOne(f string) error {
	data, err := r.base.ReadFile(f)
	if err != nil {
		return fmt.Errorf("reading base file %s: %w", f, err)
	}
	perm, err := r.baseMode(f)
	if err != nil {
		return err
	}
	if a, fi, err := r.ws.blockingAncestor(f); err != nil {
		return err
	} else if a != "" {
		r.violate(report.CodeRestoreConflict, f, fmt.Sprintf("cannot restore %q: the candidate left a %s at %q, where the base has a directory", f, kindOf(fi.Mode()), a))
		return nil
	}
	fi, err := r.ws.lstat(f)
	if err != nil {
		return err
	}
	if fi != nil && !fi.Mode().IsRegular() {
		r.violate(
			report.CodeRestoreConflict,
			f,
			fmt.Sprintf("cannot restore %q: the candidate left a %s there", f, kindOf(fi.Mode())),
		)
		return nil
	}
	if fi != nil {
		if same, err := r.ws.sameFile(f, fi, data, perm); err != nil || same {
			return err
		}
	}
	if err := r.ws.writeFile(f, data, perm); err != nil {
		return fmt.Errorf("restoring %s: %w", f, err)
	}
	r.out.Restored = append(r.out.Restored, f)
	return nil
}

// baseMode is 0755 for a base file with any execute bit, else 0644.
func (r *run) baseMode(f string) (fs.FileMode, error) {
	mb, ok := r.base.(ModeBase)
	if !ok {
		return 0o644, nil
	}
	m, err := mb.FileMode(f)
	if err != nil {
		return 0, fmt.Errorf("reading the mode of base file %s: %w", f, err)
	}
	if m&0o111 != 0 {
		return 0o755, nil
	}
	return 0o644, nil
}
