package restore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/tender-grader/tender/grader/integrity"
	"github.com/tender-grader/tender/report"
)

// ErrWorkspace is wrapped by errors about the workspace itself (missing, not a directory).
var ErrWorkspace = errors.New("unusable workspace")

// Base gives the base-commit content of the repository.
type Base interface {
	Files() []string                      // every regular file path at the base commit
	ReadFile(path string) ([]byte, error) // its content
}

// ModeBase is a Base that also knows each file's mode (0644 or 0755). Restore uses it when the
// Base implements it; otherwise restored files get 0644.
type ModeBase interface {
	Base
	FileMode(path string) (fs.FileMode, error)
}

// Outcome is what Restore did. When Violations is non-empty the workspace must not be run.
type Outcome struct {
	TestedAsSubmitted bool     // nothing was changed from the candidate's submitted content
	Restored          []string // base files rewritten or recreated, sorted
	Removed           []string // files the patch added under restored paths, sorted
	Sections          []string // config sections reset, e.g. "pyproject.toml [tool.pytest*]"
	Violations        []report.Reason
}

// Restore resets restored paths and test-runner config sections in workspace to base content.
// An error means Restore could not do its job (I/O, an unreadable base) and the pair has no
// verdict; a violation means the candidate's tree cannot be graded safely.
func Restore(workspace string, base Base, restored *integrity.Matcher) (Outcome, error) {
	ws, err := openWorkspace(workspace)
	if err != nil {
		return Outcome{}, err
	}
	defer ws.root.Close()
	r := &run{ws: ws, base: base, restored: restored, baseSet: map[string]bool{}}
	for _, f := range base.Files() {
		r.baseSet[f] = true
	}
	if err := r.do(); err != nil {
		return Outcome{}, err
	}
	slices.Sort(r.out.Restored)
	slices.Sort(r.out.Removed)
	changed := len(r.out.Restored)+len(r.out.Removed)+len(r.out.Sections) > 0
	r.out.TestedAsSubmitted = !changed
	return r.out, nil
}

type run struct {
	ws       *workspace
	base     Base
	restored *integrity.Matcher
	baseSet  map[string]bool
	out      Outcome
}

func (r *run) violate(code report.Code, path, detail string) {
	r.out.Violations = append(r.out.Violations, report.Reason{Code: code, Path: path, Detail: detail})
}

func (r *run) do() error {
	files, unsafe, err := r.ws.walk()
	if err != nil {
		return err
	}
	for _, u := range unsafe {
		r.violate(
			report.CodeUnsafeEntry,
			u.path,
			fmt.Sprintf(
				"%q is a %s; a workspace holds only regular files and directories, so nothing was restored",
				u.path,
				u.kind,
			),
		)
	}
	if len(unsafe) > 0 {
		return nil
	}
	if err := r.removeAdded(files); err != nil {
		return err
	}
	if err := r.restoreBase(); err != nil {
		return err
	}
	return r.resetConfigs()
}

func openWorkspace(dir string) (*workspace, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWorkspace, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is a %s, not a directory", ErrWorkspace, dir, kindOf(fi.Mode()))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWorkspace, err)
	}
	return &workspace{root: root, dirs: map[string]bool{}}, nil
}

// Resets reports whether Restore resets path, wholly or in part: a path under restored, or a
// mixed-purpose config at the root whose test-runner section it resets. A patch that changed
// such a file is graded on content the evaluator chose, not the candidate.
func Resets(path string, restored *integrity.Matcher) bool {
	if restored != nil && restored.Match(path) {
		return true
	}
	return slices.ContainsFunc(configFiles, func(c configFile) bool { return c.name == path })
}
