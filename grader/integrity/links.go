package integrity

import (
	"fmt"
	"maps"
	"slices"

	"github.com/tender-grader/tender/internal/treelink"
	"github.com/tender-grader/tender/report"
)

// Links is what the pre-scan knows of the symlinks of a pair's tree.
type Links struct {
	// Allowed: the repository's setting is `symlinks: in-tree`, so a patch may create a link.
	Allowed bool
	// Base are the base tree's links (path -> target), each already known to stay inside it.
	Base map[string]string
	// Files lists every path of the base tree: a link to a directory touches what is in it.
	Files []string
}

// linkReasons judges a symlink the patch creates, at path with target: it must stay inside
// the tree (with the tree's links and the patch's other ones), it may not lie under restored
// paths (the restore resets files, and would remove it), and what it resolves to may not touch
// protected, restored or evaluator paths (in the verifier a write through it, or a read of it,
// would reach them).
func linkReasons(path, target string, line int, created map[string]string, p Policy, ev evaluatorSet) []report.Reason {
	all := maps.Clone(p.Links.Base)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, created)
	resolved, err := treelink.Resolve(all, path)
	if err != nil {
		return []report.Reason{reason(report.CodeUnsafePath, path, line, fmt.Sprintf(
			"is a symlink to %q that leaves the tree (%v); only relative symlinks that stay inside it are allowed",
			target, err))}
	}
	var out []report.Reason
	if p.Restored.Match(path) {
		out = append(out, reason(report.CodeEvaluator, path, line,
			"is a symlink under restored_paths: the evaluator's files there are reset, and no link may stand among them"))
	}
	if code, why := touches(resolved, p, ev); code != "" {
		out = append(out, reason(code, path, line, fmt.Sprintf("is a symlink to %q, which resolves to %q: %s",
			target, orRoot(resolved), why)))
	}
	return out
}

// touches says whether a link's resolved target is, holds or lies under a protected,
// restored or evaluator path, and which.
func touches(resolved string, p Policy, ev evaluatorSet) (report.Code, string) {
	if resolved != "" {
		if pat, ok := p.Protected.Which(resolved); ok {
			return report.CodeProtected, fmt.Sprintf("protected_paths pattern %q", pat)
		}
		if p.Restored.Match(resolved) {
			return report.CodeEvaluator, "a restored path"
		}
		if owned, ok := ev.conflict(resolved); ok {
			return report.CodeEvaluator, fmt.Sprintf("the evaluator-owned path %q", owned)
		}
	}
	for _, f := range p.Links.Files {
		if !treelink.Within(f, resolved) || f == resolved {
			continue
		}
		if pat, ok := p.Protected.Which(f); ok {
			return report.CodeProtected, fmt.Sprintf("it holds %q (protected_paths pattern %q)", f, pat)
		}
		if p.Restored.Match(f) {
			return report.CodeEvaluator, fmt.Sprintf("it holds the restored path %q", f)
		}
	}
	if resolved == "" && len(ev.paths) > 0 {
		return report.CodeEvaluator, "it holds the evaluator's paths"
	}
	return "", ""
}

// ownedTargets are the resolved targets of the base tree's links that lie under restored or
// protected paths, by link: what such a link shows the tests is the evaluator's, wherever it
// lives, so the candidate may not change it.
func ownedTargets(p Policy) map[string]string {
	out := map[string]string{}
	for _, l := range slices.Sorted(maps.Keys(p.Links.Base)) {
		if !p.Restored.Match(l) && !p.Protected.Match(l) {
			continue
		}
		if t, err := treelink.Resolve(p.Links.Base, l); err == nil {
			out[l] = t
		}
	}
	return out
}

// ownedTargetReason refuses a path of the patch that is, or lies under, the target of a
// restored or protected link of the base tree.
func ownedTargetReason(path string, line int, owned map[string]string) []report.Reason {
	for _, l := range slices.Sorted(maps.Keys(owned)) {
		if treelink.Within(path, owned[l]) {
			return []report.Reason{reason(report.CodeEvaluator, path, line, fmt.Sprintf(
				"is what the symlink %q under restored or protected paths resolves to (%q); the evaluator's "+
					"files may not be changed through a link", l, orRoot(owned[l])))}
		}
	}
	return nil
}

func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}
