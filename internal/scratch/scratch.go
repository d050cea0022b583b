package scratch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// OwnerFile is the name of the owner file inside each directory MkdirTemp makes.
const OwnerFile = ".tender-owner"

// Prefix starts the name of every directory MkdirTemp makes; Sweep looks at no other.
const Prefix = "tender-"

// MkdirTemp makes a new directory in parent (os.TempDir() when "") named pattern plus a
// random part, as os.MkdirTemp does, and writes its owner file: this process. pattern must
// start with Prefix. A caller keeps its own files beside OwnerFile, never at that name, and
// removes the directory with Remove, which deletes the owner file last.
//
// The name also carries this process's pid and start time (pattern + "p<pid>s<start>-" + a
// random part): a kill between making the directory and writing the owner file leaves an empty
// directory that names its dead maker, and Sweep removes it. A Sweep running in that moment
// may take this one, so MkdirTemp checks that the owner file it wrote is still in place and,
// if not, starts again.
func MkdirTemp(parent, pattern string) (string, error) {
	if !strings.HasPrefix(pattern, Prefix) {
		return "", fmt.Errorf("scratch: pattern %q does not start with %q", pattern, Prefix)
	}
	me, err := Self()
	if err != nil {
		return "", err
	}
	for range 5 {
		dir, err := os.MkdirTemp(parent, fmt.Sprintf("%sp%ds%s-*", pattern, me.Pid, me.Start))
		if err != nil {
			return "", err
		}
		err = writeOwner(dir, me)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, errSwept) && !errors.Is(err, fs.ErrNotExist) {
			_ = Remove(dir)
			return "", err
		}
	}
	return "", fmt.Errorf("scratch: a sweep removed each new directory in %s as it was made", parent)
}

// errSwept: the owner file was written, but a Sweep removed it and its directory meanwhile.
var errSwept = errors.New("scratch: directory swept while it was made")

func writeOwner(dir string, o Owner) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	p := filepath.Join(dir, OwnerFile)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		written, serr := f.Stat()
		now, lerr := os.Lstat(p)
		if serr != nil || lerr != nil || !os.SameFile(written, now) {
			err = errSwept
		}
	}
	return errors.Join(err, f.Close())
}

// readOwner reads dir's owner file; ok is false when there is none, or it is not one.
func readOwner(dir string) (o Owner, ok bool) {
	p := filepath.Join(dir, OwnerFile)
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return o, false
	}
	data, err := os.ReadFile(p)
	if err != nil || json.Unmarshal(data, &o) != nil || o.Host == "" {
		return o, false
	}
	return o, true
}

// OtherNamespace lists the directories in parent (os.TempDir() when "") that MkdirTemp made
// in another pid namespace of this host and boot: Sweep leaves them alone, since their pid
// cannot be checked from here, and `tender gc` names them.
func OtherNamespace(parent string) []string {
	if parent == "" {
		parent = os.TempDir()
	}
	me, err := Self()
	if err != nil {
		return nil
	}
	entries, _ := os.ReadDir(parent)
	var out []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), Prefix) {
			continue
		}
		if o, ok := readOwner(filepath.Join(parent, e.Name())); ok && me.Judge(o) == OtherPidNS {
			out = append(out, filepath.Join(parent, e.Name()))
		}
	}
	return out
}

// Sweep removes the directories in parent (os.TempDir() when "") that MkdirTemp made for
// processes that are gone. Anything mounted inside one (debootstrap mounts /proc and /sys in
// a rootfs it is building) is detached first; a directory with a mount that will not go is
// left, and named in the error. It returns the directories it removed.
func Sweep(parent string) ([]string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	me, err := Self()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil, fmt.Errorf("scratch: reading %s: %w", parent, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), Prefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		o, ok := readOwner(dir)
		if !ok {
			if maker, named := nameOwner(e.Name(), me); named && me.Judge(maker) == Dead && unfinished(dir) &&
				removeUnfinished(dir) {
				removed = append(removed, dir)
			}
			continue
		}
		if me.Judge(o) != Dead {
			continue
		}
		if err := Remove(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// nameOwner reads the maker a MkdirTemp name carries; named is false for any other name (a
// user's own empty tender-demo directory is not Tender's to remove). The record is of this
// host and boot: an empty directory in the local temporary directory is judged by its pid.
func nameOwner(name string, me Owner) (o Owner, named bool) {
	m := reMadeName.FindStringSubmatch(name)
	if m == nil {
		return o, false
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil {
		return o, false
	}
	return Owner{Host: me.Host, Boot: me.Boot, Pid: pid, Start: m[2]}, true
}

var reMadeName = regexp.MustCompile(`^tender-[a-z]+-p([0-9]{1,9})s([0-9]{1,20})-[0-9]+$`)

// unfinished reports whether dir holds nothing but, at most, an empty owner file: what a kill
// leaves between making a directory and writing its owner file, or between Remove deleting
// the owner file and the directory itself.
func unfinished(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) > 1 {
		return false
	}
	if len(entries) == 0 {
		return true
	}
	fi, err := os.Lstat(filepath.Join(dir, OwnerFile))
	return err == nil && fi.Mode().IsRegular() && fi.Size() == 0
}

// removeUnfinished deletes an unfinished directory; the directory itself goes only while it
// is empty, so one that a live MkdirTemp has meanwhile finished stays (and MkdirTemp notices
// a lost owner file).
func removeUnfinished(dir string) bool {
	if fi, err := os.Lstat(filepath.Join(dir, OwnerFile)); err == nil && fi.Size() == 0 {
		_ = os.Remove(filepath.Join(dir, OwnerFile))
	}
	return os.Remove(dir) == nil
}

// Remove deletes dir after detaching whatever is mounted at or under it, deepest first. If a
// mount remains it deletes nothing: removing through a mount would delete what it shows. The
// owner file goes last, so a kill at any moment of the removal leaves a directory that Sweep
// still knows as a dead process's. Directories a candidate made unwritable are opened up
// first. A dir that does not exist is no error.
func Remove(dir string) error {
	for _, m := range mountsUnder(dir) {
		_ = syscall.Unmount(m, syscall.MNT_DETACH)
	}
	if left := mountsUnder(dir); len(left) > 0 {
		return fmt.Errorf("scratch: %s: %s is still mounted; unmount it, then remove the directory", dir, left[0])
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		_ = os.Chmod(dir, 0o700)
		if entries, err = os.ReadDir(dir); err != nil {
			return fmt.Errorf("scratch: %w", err)
		}
	}
	var errs []error
	for _, e := range entries {
		if e.Name() != OwnerFile {
			if err := removeAll(filepath.Join(dir, e.Name())); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("scratch: %w", errors.Join(errs...))
	}
	if err := os.Remove(filepath.Join(dir, OwnerFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("scratch: %w", err)
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("scratch: %w", err)
	}
	return nil
}

// removeAll is os.RemoveAll, trying again once with every directory under p made writable
// (a test run may leave read-only directories behind).
func removeAll(p string) error {
	if os.RemoveAll(p) == nil {
		return nil
	}
	_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(q, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}

// mountsUnder lists the mount points at or under dir, deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, ...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
