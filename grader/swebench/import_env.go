package swebench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// envSpec is the --env file of `tender import swebench`: SWE-bench repository (OWNER/NAME) ->
// version -> environment. The version "*" stands for any version the repository lists no
// entry for.
type envSpec struct {
	file  string
	repos map[string]map[string]suite.EnvironmentDoc
}

// AnyVersion is the version key of an env spec entry that covers every other version.
const AnyVersion = "*"

// maxEnvContext caps the Dockerfile build context an import copies into the suite.
const maxEnvContext = 64 << 20

var reSpecRepo = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)

func readEnvSpec(r io.Reader, file string) (envSpec, error) {
	spec := envSpec{file: file}
	if r == nil {
		return spec, nil
	}
	data, err := io.ReadAll(io.LimitReader(r, suite.MaxSuiteFile+1))
	if err != nil {
		return spec, fmt.Errorf("--env %s: %w", file, err)
	}
	if len(data) > suite.MaxSuiteFile {
		return spec, fmt.Errorf("%w: --env %s is larger than %d bytes", suite.ErrBadSuite, file, suite.MaxSuiteFile)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&spec.repos); err != nil {
		if line, n := suite.LongKey(data); line > 0 && !errors.Is(err, io.EOF) {
			return spec, fmt.Errorf("%w: --env %s: %s", suite.ErrBadSuite, file, suite.LongKeyError(line, n))
		}
		if errors.Is(err, io.EOF) {
			return spec, fmt.Errorf("%w: --env %s is empty; map OWNER/NAME to versions (see the README)",
				suite.ErrBadSuite, file)
		}
		return spec, fmt.Errorf("%w: --env %s: %s; write OWNER/NAME: {VERSION: {debian: ...}} (see the README)",
			suite.ErrBadSuite, file, oneLine(err))
	}
	for repo, versions := range spec.repos {
		if !reSpecRepo.MatchString(repo) {
			return spec, fmt.Errorf("%w: --env %s: key %q is not OWNER/NAME as in SWE-bench's \"repo\"",
				suite.ErrBadSuite, file, repo)
		}
		for v, e := range versions {
			if err := checkSpecEnv(e); err != nil {
				return spec, fmt.Errorf("%w: --env %s: %s version %q: %v", suite.ErrBadSuite, file, repo, v, err)
			}
		}
	}
	return spec, nil
}

func oneLine(err error) string {
	return string(bytes.Join(bytes.Fields([]byte(err.Error())), []byte(" ")))
}

func checkSpecEnv(e suite.EnvironmentDoc) error {
	n := 0
	for _, set := range []bool{e.Debian != nil, e.Dockerfile != "", e.Image != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("give exactly one of debian, dockerfile or image (it has %d)", n)
	}
	return nil
}

// environment picks the spec entry of an instance's repository and version and names the
// environment the pair runs in: OWNER__NAME-VERSION for a version's own entry, OWNER__NAME-any
// for the "*" entry. Without --env every pair runs in the suite's verifier.
func (im *importer) environment(in Instance) (string, error) {
	if im.spec.repos == nil {
		return "", nil
	}
	versions, ok := im.spec.repos[in.Repo]
	if !ok {
		return "", fmt.Errorf("--env %s has no entry for repository %s; add %s: {%q: {debian: {packages: [...]}}}", im.spec.file, in.Repo, in.Repo, AnyVersion)
	}
	v := string(in.Version)
	e, ok := versions[v]
	label := v
	if !ok {
		// Every version the "*" entry covers shares one environment, and so one image.
		if e, ok = versions[AnyVersion]; !ok {
			return "", fmt.Errorf("--env %s has no entry for %s version %q; add one, or a %q entry for any version", im.spec.file, in.Repo, v, AnyVersion)
		}
		label = "any"
	}
	name := RepoID(in.Repo) + "-" + label
	if !report.ValidID(name) {
		return "", fmt.Errorf("version %q makes the environment name %q, which is not a valid name", v, name)
	}
	im.envs[name] = e
	return name, nil
}

// writeEnvironments puts the used environments into the suite. A Dockerfile (relative to the
// spec file) is copied with its directory, the build context, to envs/NAME/.
func (im *importer) writeEnvironments(dir string, doc *suite.SuiteDoc) error {
	used := map[string]bool{}
	for _, p := range doc.Pairs {
		if p.Environment != "" {
			used[p.Environment] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(used)) {
		e := im.envs[name]
		if e.Dockerfile != "" {
			src := e.Dockerfile
			if !filepath.IsAbs(src) {
				src = filepath.Join(filepath.Dir(im.spec.file), src)
			}
			rel := path.Join("envs", name)
			if err := copyContext(filepath.Dir(src), filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				return fmt.Errorf("%w: --env %s: environment %s: dockerfile %s: %v",
					suite.ErrBadSuite, im.spec.file, name, e.Dockerfile, err)
			}
			e.Dockerfile = path.Join(rel, filepath.Base(src))
		}
		if doc.Environments == nil {
			doc.Environments = map[string]suite.EnvironmentDoc{}
		}
		doc.Environments[name] = e
		im.sum.Environments = append(im.sum.Environments, name)
	}
	return nil
}

// copyContext copies a build context of regular files and directories; anything else (a
// symlink, a device) is refused, as a suite holds only plain files.
func copyContext(src, dst string) error {
	var total int64
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file; a build context holds plain files only", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if total += int64(len(data)); total > maxEnvContext {
			return fmt.Errorf("the build context %s is larger than %d bytes", src, maxEnvContext)
		}
		return os.WriteFile(target, data, 0o644)
	})
}
