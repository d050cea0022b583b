package sandbox

import (
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
)

// copyTree copies regular files and directories from src to dst beneath an os.Root on each
// side, refusing anything else. A path of links is not copied: it becomes a symlink in dst, after
// everything else, once its host file holds exactly its target (as WriteTar does).
func copyTree(src, dst string, links map[string]string) error {
	if err := CheckLinks(links); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	from, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer to.Close()
	seen := map[string]bool{}
	err = fs.WalkDir(from.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode().IsDir():
			return to.MkdirAll(p, info.Mode().Perm()|0o700)
		case info.Mode().IsRegular() && links[p] != "":
			seen[p] = true
			return checkLinkFile(from, p, links[p])
		case info.Mode().IsRegular():
			return copyFile(from, to, p, info.Mode().Perm()|0o600)
		default:
			return fmt.Errorf("%w: %s/%s (%s)", ErrUnsafeTree, src, p, info.Mode().Type())
		}
	})
	if err != nil {
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(links)) {
		if !seen[p] {
			return fmt.Errorf("%w: the file that stands for the symlink %s is not in %s", ErrUnsafeTree, p, src)
		}
		if err := to.Symlink(links[p], p); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to *os.Root, p string, perm fs.FileMode) error {
	in, err := from.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := to.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
