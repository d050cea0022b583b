package integrity

import "strings"

// evaluatorSet holds evaluator-owned paths in the canonical fold form. Evaluator paths are
// literal paths, not patterns.
type evaluatorSet struct {
	paths map[string]string // canonical -> as given
}

func newEvaluatorSet(paths []string) evaluatorSet {
	s := evaluatorSet{paths: make(map[string]string, len(paths))}
	for _, p := range paths {
		s.paths[canonicalPath(p)] = p
	}
	return s
}

// conflict reports the evaluator path that path collides with: the same path, an ancestor of
// it (the candidate would turn an evaluator directory into a file) or a descendant of it (the
// candidate would put files under an evaluator file).
func (s evaluatorSet) conflict(path string) (string, bool) {
	if len(s.paths) == 0 {
		return "", false
	}
	c := canonicalPath(path)
	if owned, ok := s.paths[c]; ok {
		return owned, true
	}
	for prefix := c; ; {
		i := strings.LastIndexByte(prefix, '/')
		if i < 0 {
			break
		}
		prefix = prefix[:i]
		if owned, ok := s.paths[prefix]; ok {
			return owned, true
		}
	}
	best, found := "", false
	for canon, owned := range s.paths {
		if strings.HasPrefix(canon, c+"/") && (!found || owned < best) {
			best, found = owned, true // the smallest, so the reason is deterministic
		}
	}
	return best, found
}
