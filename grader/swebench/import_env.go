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
	"strings"

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
		for _, v := range slices.Sorted(maps.Keys(versions)) {
			if err := checkSpecEnv(versions[v]); err != nil {
				return spec, fmt.Errorf("%w: --env %s: %s version %q: %v", suite.ErrBadSuite, file, repo, v, err)
			}
			// Everything else as the suite loader will check it, so that a bad entry is the
			// spec's error here, not a suite that does not load.
			if err := suite.CheckEnvironmentDoc("--env "+file, fmt.Sprintf("%s version %q", repo, v), versions[v]); err != nil {
				return spec, err
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
// for the "*" entry. A repository the spec does not list (or every repository, without --env)
// gets its environment from Tender's table (knownFacts); one the table does not know either
// runs in the suite's verifier without --env, and is the instance's failure with it.
func (im *importer) environment(in Instance) (string, error) {
	versions, ok := im.spec.repos[in.Repo]
	if !ok {
		return im.factEnvironment(in)
	}
	v := string(in.Version)
	e, ok := versions[v]
	label := v
	if !ok {
		// Every version the "*" entry covers shares one environment, and so one image.
		if e, ok = versions[AnyVersion]; !ok {
			return "", fmt.Errorf(
				"--env %s has no entry for %s version %q; add one, or a %q entry for any version",
				im.spec.file,
				in.Repo,
				v,
				AnyVersion,
			)
		}
		label = "any"
	}
	name, err := envName(in, label)
	if err != nil {
		return "", err
	}
	if _, done := im.envs[name]; !done {
		var note string
		if e, note = withKnownEnv(in.Repo, v, name, e); note != "" {
			im.note(note)
		}
		im.envs[name] = e
	}
	return name, nil
}

func envName(in Instance, label string) (string, error) {
	name := RepoID(in.Repo) + "-" + label
	if !report.ValidID(name) {
		return "", fmt.Errorf("version %q makes the environment name %q, which is not a valid name", in.Version, name)
	}
	return name, nil
}

// factEnvironment is the environment of Tender's table for an instance the --env spec does
// not cover.
func (im *importer) factEnvironment(in Instance) (string, error) {
	f, version, ok := knownFact(in.Repo, string(in.Version))
	switch {
	case !ok && im.spec.repos != nil:
		return "", fmt.Errorf(
			"--env %s has no entry for repository %s, and Tender's table of known environments has none either; "+
				"add %s: {%q: {debian: {packages: [...]}}} (tender env infer proposes one)",
			im.spec.file, in.Repo, in.Repo, AnyVersion)
	case !ok:
		im.note(fmt.Sprintf("%s is not in Tender's table of known environments: its pairs run in the suite's "+
			"verifier (tender env infer --repo CLONE --commit SHA proposes an environment; give it with --env)", in.Repo))
		return "", nil
	case f.Unsupported != "":
		return "", fmt.Errorf("no Debian environment can grade %s, by Tender's table of known environments: %s; "+
			"give an --env entry (such as a prebuilt image) to try anyway", in.Repo, f.Unsupported)
	case !f.needsEnvironment():
		im.note(fmt.Sprintf("%s needs nothing beyond the pytest image, by Tender's table of known environments (%s)",
			in.Repo, strings.Join(f.Sources, "; ")))
		return "", nil
	}
	label := version
	if version == AnyVersion {
		label = "any"
	}
	name, err := envName(in, label)
	if err != nil {
		return "", err
	}
	if _, done := im.envs[name]; !done {
		im.envs[name] = f.doc()
		im.note(fmt.Sprintf("environment %s: %s, from Tender's table of known environments for %s version %s (%s)",
			name, f.describe(), in.Repo, in.Version, strings.Join(f.Sources, "; ")))
	}
	return name, nil
}

// note records a line for the import's summary, once.
func (im *importer) note(line string) {
	if !slices.Contains(im.sum.Notes, line) {
		im.sum.Notes = append(im.sum.Notes, line)
	}
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
// symlink, a device) is refused, as a suite holds only plain files. A context over
// suite.MaxEnvContext is refused before anything is copied; files are streamed, never held whole.
func copyContext(src, dst string) error {
	if n, err := suite.ContextSize(src); err != nil {
		return err
	} else if n > suite.MaxEnvContext {
		return errors.New(suite.ContextTooLarge(src))
	}
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
		return copyFile(p, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
