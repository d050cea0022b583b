package suite

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/sandbox"
)

// EnvironmentDoc is one entry of tender.yaml's environments: how its verifier image is made
// (exactly one of Debian, Dockerfile, Image) and the verifier settings it replaces. A nil
// PythonPath or Setup keeps the suite's; an empty list clears it.
type EnvironmentDoc struct {
	Debian     *DebianDoc  `yaml:"debian,omitempty"`
	Dockerfile string      `yaml:"dockerfile,omitempty"`
	Image      string      `yaml:"image,omitempty"`
	PythonPath *[]string   `yaml:"python_path,omitempty"`
	Setup      *[][]string `yaml:"setup,omitempty"`
}

// DebianDoc is an offline debootstrap recipe: the pytest image's packages plus these.
type DebianDoc struct {
	Suite    string   `yaml:"suite,omitempty"`
	Packages []string `yaml:"packages,omitempty"`
}

// Environment kinds: how the image of an environment is made.
const (
	EnvDebian     = "debian"
	EnvDockerfile = "dockerfile"
	EnvImage      = "image"
)

// Environment is a loaded environment. Ref is the image its verifiers run: for debian and
// dockerfile a name derived from the recipe or context digest alone (tender-env/debian:<12
// hex>), so the digest names the image and environments with one recipe share one image; for
// image the pinned reference as written. The CLI sets ImageID once the image is ready.
type Environment struct {
	Name       string
	Kind       string
	Recipe     sandbox.Recipe // debian: the built-in pytest recipe plus the packages
	Dockerfile string         // dockerfile: suite-relative; its directory is the build context
	Context    string         // dockerfile: suite-relative directory ("." never: see dockerfile)
	Digest     string         // recipe digest (debian), context digest (dockerfile), or the pinned digest (image)
	Ref        string
	PythonPath []string
	Setup      [][]string
	setPath    bool
	setSetup   bool

	// Set once before grading starts, by whoever prepares the images (the CLI):
	ImageID string // the prepared image; verifiers run it by ID
	Failed  string // why the image could not be prepared; the pairs of this environment are error
}

// Failure says why a pair cannot run: its environment's image could not be prepared.
func (s *Suite) Failure(p *Pair) string {
	if env := s.Environments[p.Environment]; env != nil && env.Failed != "" {
		return fmt.Sprintf("environment %s: its image %s could not be prepared: %s", env.Name, env.Ref, env.Failed)
	}
	return ""
}

// ImageLabel is the image a pair's verifier runs, by name (not ID), for the bundle's inputs.
func (s *Suite) ImageLabel(p *Pair) string {
	if env := s.Environments[p.Environment]; env != nil {
		return env.Ref
	}
	return s.Verifier.Image
}

// VerifierFor returns the verifier a pair runs in: the suite's, with its environment's image,
// python path and setup when it has one. Everything that starts a pair's verifier uses it.
func (s *Suite) VerifierFor(p *Pair) Verifier {
	v := s.Verifier
	env := s.Environments[p.Environment]
	if env == nil {
		return v
	}
	v.Image = env.Ref
	if env.ImageID != "" {
		v.Image = env.ImageID
	}
	if env.setPath {
		v.PythonPath = env.PythonPath
	}
	if env.setSetup {
		v.Setup = env.Setup
	}
	return v
}

// UsedEnvironments lists the environments some of pairs (a shard of the suite's, say) run in,
// by name.
func (s *Suite) UsedEnvironments(pairs []*Pair) []*Environment {
	used := map[string]bool{}
	for _, p := range pairs {
		if p.Environment != "" {
			used[p.Environment] = true
		}
	}
	var out []*Environment
	for _, name := range slices.Sorted(maps.Keys(used)) {
		out = append(out, s.Environments[name])
	}
	return out
}

var (
	reDebPackage = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	reDebSuite   = regexp.MustCompile(`^[a-z][a-z0-9-]{1,31}$`)
	reImageID    = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	reImageName  = regexp.MustCompile(`^[a-z0-9][a-z0-9._/:-]{0,254}@sha256:[0-9a-f]{64}$`)
)

// EnvImagePrefix names the images built from a suite's environments.
const EnvImagePrefix = "tender-env/"

func (l *loader) environments(raw map[string]EnvironmentDoc, runner string) (map[string]*Environment, error) {
	out := map[string]*Environment{}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		env, err := l.environment("environments."+name, name, raw[name], runner)
		if err != nil {
			return nil, err
		}
		out[name] = env
	}
	return out, nil
}

func (l *loader) environment(field, name string, r EnvironmentDoc, runner string) (*Environment, error) {
	if !report.ValidID(name) {
		return nil, l.errf(field, "is not a valid environment name; use letters, digits, '.', '_' or '-'")
	}
	env := &Environment{Name: name}
	n := 0
	for _, set := range []bool{r.Debian != nil, r.Dockerfile != "", r.Image != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, l.errf(field, "sets %d of debian, dockerfile and image; set exactly one", n)
	}
	if runner != RunnerPytest && r.Debian != nil {
		return nil, l.errf(field+".debian", "adds packages to the pytest image, but the suite's runner is %s; use dockerfile or image", runner)
	}
	var err error
	switch {
	case r.Debian != nil:
		err = l.debianEnv(field+".debian", env, *r.Debian)
	case r.Dockerfile != "":
		err = l.dockerfileEnv(field+".dockerfile", env, r.Dockerfile)
	default:
		err = l.imageEnv(field+".image", env, r.Image)
	}
	if err != nil {
		return nil, err
	}
	if r.PythonPath != nil {
		env.setPath = true
		if env.PythonPath, err = l.pythonPath(field+".python_path", *r.PythonPath); err != nil {
			return nil, err
		}
		if len(env.PythonPath) > 0 && runner != RunnerPytest {
			return nil, l.errf(field+".python_path", "is for runner: pytest only (the bootstrap applies it); remove it")
		}
	}
	if r.Setup != nil {
		env.setSetup, env.Setup = true, *r.Setup
		if err := l.argvs(field+".setup", env.Setup); err != nil {
			return nil, err
		}
	}
	return env, nil
}

func (l *loader) debianEnv(field string, env *Environment, r DebianDoc) error {
	rec, _ := sandbox.BuiltinRecipe(sandbox.ImagePytest)
	if r.Suite != "" {
		if !reDebSuite.MatchString(r.Suite) {
			return l.errf(field+".suite", "%q is not a Debian suite name; write it like bookworm", r.Suite)
		}
		rec.Suite = r.Suite
	}
	for i, pkg := range r.Packages {
		if !reDebPackage.MatchString(pkg) {
			return l.errf(fmt.Sprintf("%s.packages[%d]", field, i), "%q is not a Debian package name (lowercase letters, digits, '+', '-', '.')", pkg)
		}
		if slices.Contains(rec.Packages, pkg) {
			return l.errf(fmt.Sprintf("%s.packages[%d]", field, i), "%q is listed twice or is already in the pytest image; remove it", pkg)
		}
		rec.Packages = append(rec.Packages, pkg)
	}
	env.Kind, env.Digest = EnvDebian, rec.Digest()
	rec.Name = EnvImagePrefix + EnvDebian + ":" + env.Digest[:12]
	env.Recipe, env.Ref = rec, rec.Name
	return nil
}

func (l *loader) dockerfileEnv(field string, env *Environment, rel string) error {
	if _, err := l.checkFile(field, rel, MaxSuiteFile); err != nil {
		return err
	}
	dir := path.Dir(path.Clean(rel))
	if dir == "." {
		return l.errf(field, "%s is at the top of the suite, so the whole suite (hidden assets too) would be its build context; put it in a directory of its own, e.g. envs/%s/Dockerfile", rel, env.Name)
	}
	env.Kind, env.Dockerfile, env.Context = EnvDockerfile, path.Clean(rel), dir
	return nil
}

func (l *loader) imageEnv(field string, env *Environment, ref string) error {
	if !reImageID.MatchString(ref) && !reImageName.MatchString(ref) {
		return l.errf(field, "%q is not pinned; give an image ID (sha256:<64 hex>) or NAME@sha256:<64 hex>", ref)
	}
	env.Kind, env.Ref = EnvImage, ref
	env.Digest = ref[strings.LastIndex(ref, "sha256:"):]
	return nil
}

// contextDigests names each dockerfile environment's image by a digest over its build
// context, and refuses a context that holds a file some pair reads: the image would carry it.
func (l *loader) contextDigests(s *Suite) error {
	for _, name := range slices.Sorted(maps.Keys(s.Environments)) {
		env := s.Environments[name]
		if env.Kind != EnvDockerfile {
			continue
		}
		field := "environments." + name + ".dockerfile"
		inside := map[string]string{}
		for rel, sum := range s.Files {
			if strings.HasPrefix(rel, env.Context+"/") {
				inside[strings.TrimPrefix(rel, env.Context+"/")] = sum
			}
		}
		for _, p := range s.Pairs {
			for _, f := range []string{p.IssuePath, p.PatchPath, p.TestPatchPath, p.AssetsPath, p.ReferencePath} {
				if f != "" && (path.Clean(f) == env.Context || strings.HasPrefix(path.Clean(f), env.Context+"/")) {
					return l.errf(field, "its build context %s/ holds %s, a file of pair %s; keep environment files in a directory of their own", env.Context, f, p.ID)
				}
			}
		}
		inside[" dockerfile"] = strings.TrimPrefix(env.Dockerfile, env.Context+"/") // which file builds it
		env.Digest = digestMap(inside)
		env.Ref = EnvImagePrefix + EnvDockerfile + ":" + env.Digest[:12]
	}
	return nil
}

// pythonPath checks workspace-relative directories for sys.path: relative, clean, inside.
func (l *loader) pythonPath(field string, list []string) ([]string, error) {
	for i, p := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		bad := p == "" || !utf8.ValidString(p) || strings.ContainsAny(p, "\\\x00\n\r") || path.IsAbs(p) || path.Clean(p) != p || p == "."
		if bad || p == ".." || strings.HasPrefix(p, "../") {
			return nil, l.errf(f, "%q is not a clean relative directory inside the workspace; write it like src or lib/python", p)
		}
		if slices.Index(list, p) != i {
			return nil, l.errf(f, "%q is listed twice; list each directory once", p)
		}
	}
	return list, nil
}

// argvs checks a list of commands (setup, post).
func (l *loader) argvs(field string, list [][]string) error {
	for i, argv := range list {
		if len(argv) == 0 || argv[0] == "" {
			return l.errf(fmt.Sprintf("%s[%d]", field, i), "is empty; give an argv such as [\"make\", \"build\"]")
		}
	}
	return nil
}

// pairEnvironment picks a pair's environment: its own, else its repository's.
func (l *loader) pairEnvironment(field string, r *PairDoc, s *Suite) (string, error) {
	name := r.Environment
	if name == "" {
		return s.repoEnv[r.Repository], nil // checked with the repositories
	}
	if _, ok := s.Environments[name]; !ok {
		return "", l.errf(field, "%q is not in environments (known: %s)", name, knownNames(s.Environments))
	}
	return name, nil
}

func knownNames(m map[string]*Environment) string {
	if len(m) == 0 {
		return "none; add an environments section"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}
