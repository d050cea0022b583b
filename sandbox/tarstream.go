package sandbox

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"time"

	"github.com/tender-grader/tender/internal/treelink"
)

// TarEntry is one directory to stream, and the name it gets inside the archive.
type TarEntry struct {
	Dir    string   // host directory; empty means only create Prefix and Extra
	Prefix string   // e.g. "workspace" or "tender"
	Extra  []string // empty directories to create under Prefix, e.g. "out"
	// Links are Dir's symlinks (slash path -> target, Spec.Links): each is a regular file on
	// the host that holds its target, and becomes a link in the archive.
	Links map[string]string
	// Owners, when set, names an owner and a mode for every member of Dir and Extra, for a
	// process that extracts as root and keeps them (tar --same-owner), and says which members
	// to write. Without it no owner is written: the extracting process owns everything.
	Owners *Owners
	// Private are files only Tender's own user may read (root, 0600), written under Prefix
	// (which is created root's, 0700): a step's program and input.
	Private map[string][]byte
}

// The owners a tree is split between: the verifier user, who runs the candidate's code, and
// Tender's own user (root inside a verifier), who writes the evaluator's files.
const (
	VerifierUID = 65532
	TenderUID   = 0
)

// Part is which members of a tree an archive carries.
type Part int

const (
	// AllFiles: every member.
	AllFiles Part = iota
	// CandidateFiles: every member but the evaluator's files. The directories that lead to
	// them are written, so that they are Tender's from the start.
	CandidateFiles
	// EvaluatorFiles: the evaluator's files alone, into directories an earlier archive made.
	EvaluatorFiles
)

// Owners splits a tree between the verifier user and Tender's user. The evaluator's files
// are Tender's and read-only to everyone else; so are the directories that lead to them, which
// stay open to new files the way /tmp is (1777: sticky, so the verifier user can add files
// beside the evaluator's but can neither replace, remove nor move what it does not own).
// Everything else is the verifier user's, as the candidate's tree always was.
type Owners struct {
	Evaluator map[string]bool // files (or symlinks), slash-separated and relative to the entry's Dir
	Part      Part
}

// evaluatorDirs are the directories, relative to the tree's root, that lead to an evaluator
// file.
func (o *Owners) evaluatorDirs() map[string]bool {
	dirs := map[string]bool{}
	for f := range o.Evaluator {
		for d := path.Dir(f); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	return dirs
}

// writes says whether an archive of part o carries the member rel, and who owns it.
func (o *Owners) writes(rel string) (bool, owner) {
	if o == nil {
		return true, owner{}
	}
	switch eval := o.Evaluator[rel]; {
	case eval && o.Part == CandidateFiles, !eval && o.Part == EvaluatorFiles:
		return false, owner{}
	case eval:
		return true, owner{true, TenderUID}
	}
	return true, owner{true, VerifierUID}
}

// WriteTar streams regular files and directories only, read beneath each Dir through an
// os.Root. Symlinks and special files on the host are refused with ErrUnsafeTree, never
// followed, so nothing outside the tree is ever read. A path of an entry's Links is written as
// a symlink instead of its host file, and only when that is a regular file that holds exactly
// its target and every link stays inside the tree (internal/treelink). No member of the archive
// can pass through a link: each is a path the walk found under a directory, and a link's path
// is a regular file on the host.
func WriteTar(w io.Writer, entries []TarEntry) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		if err := writeEntry(tw, e); err != nil {
			return err
		}
	}
	return tw.Close()
}

func writeEntry(tw *tar.Writer, e TarEntry) error {
	if len(e.Private) > 0 {
		err := writeHeader(tw, &tar.Header{Typeflag: tar.TypeDir, Name: e.Prefix + "/", Mode: 0o700},
			owner{true, TenderUID})
		if err != nil {
			return err
		}
		for _, name := range slices.Sorted(maps.Keys(e.Private)) {
			data := e.Private[name]
			hdr := &tar.Header{Typeflag: tar.TypeReg, Name: path.Join(e.Prefix, name), Size: int64(len(data)),
				Mode: 0o600}
			if err := writeHeader(tw, hdr, owner{true, TenderUID}); err != nil {
				return err
			}
			if _, err := tw.Write(data); err != nil {
				return err
			}
		}
	}
	verifier := owner{e.Owners != nil, VerifierUID}
	if e.Owners == nil || e.Owners.Part != EvaluatorFiles {
		for _, d := range e.Extra {
			if err := writeDir(tw, path.Join(e.Prefix, d), 0o755, verifier); err != nil {
				return err
			}
		}
	}
	if e.Dir == "" {
		return nil
	}
	return walkInto(tw, e)
}

// owner is who a member belongs to, when the archive says (set).
type owner struct {
	set bool
	uid int
}

func walkInto(tw *tar.Writer, e TarEntry) error {
	if err := CheckLinks(e.Links); err != nil {
		return err
	}
	root, err := os.OpenRoot(e.Dir)
	if err != nil {
		return err
	}
	defer root.Close()
	o := e.Owners
	var evalDirs map[string]bool
	if o != nil {
		evalDirs = o.evaluatorDirs()
	}
	seen := map[string]bool{}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		name := path.Join(e.Prefix, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode().IsDir():
			switch {
			case o == nil:
				return writeDir(tw, name, info.Mode().Perm()|0o700, owner{})
			case o.Part == EvaluatorFiles:
				return nil
			case evalDirs[p]:
				return writeDir(tw, name, 0o777|fs.ModeSticky, owner{true, TenderUID})
			}
			return writeDir(tw, name, info.Mode().Perm()|0o700, owner{true, VerifierUID})
		case info.Mode().IsRegular() && e.Links[p] != "":
			seen[p] = true
			if err := checkLinkFile(root, p, e.Links[p]); err != nil {
				return err
			}
			return writeLink(tw, e, p)
		case info.Mode().IsRegular():
			ok, who := o.writes(p)
			if !ok {
				return nil
			}
			perm := info.Mode().Perm() | 0o600
			if who.set && who.uid == TenderUID {
				perm = 0o644 | info.Mode().Perm()&0o111
			}
			return writeFile(tw, root, p, name, info, perm, who)
		default:
			return fmt.Errorf("%w: %s/%s (%s)", ErrUnsafeTree, e.Dir, p, info.Mode().Type())
		}
	})
	if err != nil {
		return err
	}
	return checkLinksSeen(e, seen)
}

// CheckLinks refuses a table of symlinks (Spec.Links) that is not for a tree: a path that is
// not clean and relative, or a link whose target is absolute or leaves the tree.
func CheckLinks(links map[string]string) error {
	for p := range links {
		if !fs.ValidPath(p) || p == "." {
			return fmt.Errorf("%w: symlink path %q is not a clean relative path", ErrUnsafeTree, p)
		}
	}
	if err := treelink.Check(links); err != nil {
		return fmt.Errorf("%w: %w", ErrUnsafeTree, err)
	}
	return nil
}

// checkLinkFile checks that the host file standing for a symlink holds exactly its target.
func checkLinkFile(root *os.Root, p, target string) error {
	f, err := root.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, treelink.MaxTarget+1))
	if err != nil {
		return err
	}
	if string(data) != target {
		return fmt.Errorf("%w: %s should hold the target of the symlink it stands for (%q), and does not",
			ErrUnsafeTree, p, target)
	}
	return nil
}

// writeLink writes the entry's symlink p, when its part carries it. It comes in the place of
// its host file, while its directory is still being filled: tar gives a directory its final
// owner and mode once it moves past it, and a directory of the verifier user's is closed to
// Tender's user, which unpacks (root, without DAC_OVERRIDE).
func writeLink(tw *tar.Writer, e TarEntry, p string) error {
	ok, who := e.Owners.writes(p)
	if !ok {
		return nil
	}
	hdr := &tar.Header{Typeflag: tar.TypeSymlink, Name: path.Join(e.Prefix, p), Linkname: e.Links[p], Mode: 0o777}
	return writeHeader(tw, hdr, who)
}

// checkLinksSeen refuses a table of links with a path the walk did not find as a file.
func checkLinksSeen(e TarEntry, seen map[string]bool) error {
	for _, p := range slices.Sorted(maps.Keys(e.Links)) {
		if !seen[p] {
			return fmt.Errorf("%w: the file that stands for the symlink %s is not in %s", ErrUnsafeTree, p, e.Dir)
		}
	}
	return nil
}

// writeHeader writes hdr in the PAX format with Tender's fixed fields, and the owner when the
// archive names one.
func writeHeader(tw *tar.Writer, hdr *tar.Header, o owner) error {
	hdr.Format = tar.FormatPAX
	if hdr.ModTime.IsZero() {
		hdr.ModTime = time.Unix(0, 0)
	}
	if o.set {
		hdr.Uid, hdr.Gid = o.uid, o.uid
	}
	return tw.WriteHeader(hdr)
}

func writeDir(tw *tar.Writer, name string, perm fs.FileMode, o owner) error {
	mode := int64(perm.Perm())
	if perm&fs.ModeSticky != 0 {
		mode |= 0o1000 // tar's sticky bit (c_ISVTX)
	}
	return writeHeader(tw, &tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode}, o)
}

func writeFile(tw *tar.Writer, root *os.Root, rel, name string, info fs.FileInfo, perm fs.FileMode, o owner) error {
	f, err := root.Open(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: info.Size(), Mode: int64(perm.Perm()),
		ModTime: info.ModTime()}
	if err := writeHeader(tw, hdr, o); err != nil {
		return err
	}
	n, err := io.Copy(tw, io.LimitReader(f, info.Size()))
	if err == nil && n != info.Size() {
		err = fmt.Errorf("%s changed size while it was streamed", rel)
	}
	return err
}
