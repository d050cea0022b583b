// Package treelink resolves the symlinks of a repository tree on paper: a tree's links are a
// table (slash-separated path -> target text), and a path is resolved against the table, one
// component at a time, the way the kernel would resolve it inside a checkout of the tree. It is
// how Tender decides, before any link exists anywhere, that every link of a tree stays inside
// it (a repository's `symlinks: in-tree`).
//
// treelink never touches a file system: it cannot follow a link on the host, because it never
// sees one.
package treelink

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// MaxHops bounds the links one resolution may pass through, as the kernel's 40 does.
const MaxHops = 40

// MaxTarget bounds a link's target text (the kernel's PATH_MAX less its NUL).
const MaxTarget = 4095

// Error says why a link, or a path through links, was refused.
type Error struct {
	Path   string // the link (or the path resolved)
	Target string // the link's target text; "" for a path that is no link
	Reason string
}

func (e *Error) Error() string {
	if e.Target == "" {
		return fmt.Sprintf("%q: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("symlink %q -> %q: %s", e.Path, e.Target, e.Reason)
}

// CheckTarget checks one target's text: not empty, relative, one line, no NUL or backslash,
// and no longer than MaxTarget.
func CheckTarget(path, target string) error {
	bad := func(reason string) error { return &Error{Path: path, Target: target, Reason: reason} }
	switch {
	case target == "":
		return bad("the target is empty")
	case len(target) > MaxTarget:
		return bad(fmt.Sprintf("the target is longer than %d bytes", MaxTarget))
	case strings.HasPrefix(target, "/"):
		return bad("the target is absolute; only a relative target that stays inside the tree is allowed")
	case strings.ContainsAny(target, "\x00\n\r\\"):
		return bad("the target holds a NUL, a line break or a backslash")
	}
	return nil
}

// Resolve returns the tree path that p (tree-relative, slash-separated) names once every link
// of links on its way, its last component included, is followed, each target read relative to
// its link's directory. It fails when the resolution leaves the tree (".." above the root, or
// an absolute target), or passes more than MaxHops links (a loop). The root is "".
//
// A ".." after a component that is a regular file in the tree pops it, where the kernel would
// stop with ENOTDIR: the result never lies further out than the kernel could reach.
func Resolve(links map[string]string, p string) (string, error) {
	var done []string
	todo := split(p)
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", &Error{Path: p, Reason: "resolves above the root of the tree"}
			}
			done = done[:len(done)-1]
			continue
		}
		cur := strings.Join(append(done, c), "/")
		target, ok := links[cur]
		if !ok {
			done = append(done, c)
			continue
		}
		if hops++; hops > MaxHops {
			return "", &Error{Path: p, Reason: fmt.Sprintf("passes more than %d symlinks (a loop?)", MaxHops)}
		}
		if err := CheckTarget(cur, target); err != nil {
			return "", err
		}
		todo = append(split(target), todo...)
	}
	return strings.Join(done, "/"), nil
}

// Check checks every link of links: its target's text, and that it resolves inside the tree.
// The first refusal, in path order, is returned.
func Check(links map[string]string) error {
	for _, p := range slices.Sorted(maps.Keys(links)) {
		if err := CheckTarget(p, links[p]); err != nil {
			return err
		}
		if _, err := Resolve(links, p); err != nil {
			var e *Error
			if errors.As(err, &e) && e.Target == "" {
				return &Error{Path: p, Target: links[p], Reason: e.Reason}
			}
			return err
		}
	}
	return nil
}

// Through returns the link of links that p is, or passes through ("" when none): p itself,
// or a directory on its way.
func Through(links map[string]string, p string) string {
	if len(links) == 0 {
		return ""
	}
	for cur := p; cur != "." && cur != ""; cur = parent(cur) {
		if _, ok := links[cur]; ok {
			return cur
		}
	}
	return ""
}

// Within reports whether p is dir or lies under it ("" is the root, which holds everything).
func Within(p, dir string) bool {
	return dir == "" || p == dir || strings.HasPrefix(p, dir+"/")
}

func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

func split(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}
