package scratch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// OwnerFile is the name of the owner file inside each directory MkdirTemp makes.
const OwnerFile = ".tender-owner"

// Prefix starts the name of every directory MkdirTemp makes; Sweep looks at no other.
const Prefix = "tender-"

// MkdirTemp makes a new directory in parent (os.TempDir() when "") named pattern plus a
// random part, as os.MkdirTemp does, and writes its owner file: this process. pattern must
// start with Prefix. A caller keeps its own files beside OwnerFile, never at that name.
func MkdirTemp(parent, pattern string) (string, error) {
	if !strings.HasPrefix(pattern, Prefix) {
		return "", fmt.Errorf("scratch: pattern %q does not start with %q", pattern, Prefix)
	}
	me, err := Self()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return "", err
	}
	if err := writeOwner(dir, me); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

func writeOwner(dir string, o Owner) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, OwnerFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
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
		if !ok || me.Judge(o) != Dead {
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

// Remove deletes dir after detaching whatever is mounted at or under it, deepest first. If a
// mount remains it deletes nothing: removing through a mount would delete what it shows.
func Remove(dir string) error {
	for _, m := range mountsUnder(dir) {
		_ = syscall.Unmount(m, syscall.MNT_DETACH)
	}
	if left := mountsUnder(dir); len(left) > 0 {
		return fmt.Errorf("scratch: %s: %s is still mounted; unmount it, then remove the directory", dir, left[0])
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("scratch: %w", err)
	}
	return nil
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
