package sandbox

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"
)

// TarEntry is one directory to stream, and the name it gets inside the archive.
type TarEntry struct {
	Dir    string   // host directory; empty means only create Prefix and Extra
	Prefix string   // e.g. "workspace" or "tender"
	Extra  []string // empty directories to create under Prefix, e.g. "out"
}

// WriteTar streams regular files and directories only. Symlinks and special files are
// refused with ErrUnsafeTree, never followed, so nothing outside the tree is ever read.
// Owners are not kept: the extracting process is the unprivileged verifier user.
func WriteTar(w io.Writer, entries []TarEntry) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		for _, d := range e.Extra {
			if err := writeDir(tw, path.Join(e.Prefix, d), 0o755); err != nil {
				return err
			}
		}
		if e.Dir == "" {
			continue
		}
		if err := walkInto(tw, e.Dir, e.Prefix); err != nil {
			return err
		}
	}
	return tw.Close()
}

func walkInto(tw *tar.Writer, root, prefix string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode().IsDir():
			return writeDir(tw, name, info.Mode().Perm()|0o700)
		case info.Mode().IsRegular():
			return writeFile(tw, p, name, info)
		default:
			return fmt.Errorf("%w: %s (%s)", ErrUnsafeTree, p, info.Mode().Type())
		}
	})
}

func writeDir(tw *tar.Writer, name string, perm fs.FileMode) error {
	return tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeDir, Name: name + "/", Mode: int64(perm), ModTime: time.Unix(0, 0),
		Format: tar.FormatPAX,
	})
}

func writeFile(tw *tar.Writer, src, name string, info fs.FileInfo) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	hdr := &tar.Header{
		Typeflag: tar.TypeReg, Name: name, Size: info.Size(), Mode: int64(info.Mode().Perm() | 0o600),
		ModTime: info.ModTime(), Format: tar.FormatPAX,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, io.LimitReader(f, info.Size()))
	if err == nil && n != info.Size() {
		err = fmt.Errorf("%s changed size while it was streamed", src)
	}
	return err
}
