package suite

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/netproxy"
)

// EnvironmentDoc is one entry of tender.yaml's environments: how its verifier image is made
// (exactly one of Debian, Dockerfile, Image) and the verifier settings it replaces. A nil
// PythonPath, Setup, Plugins or Ini keeps the suite's; an empty one clears it.
type EnvironmentDoc struct {
	Debian     *DebianDoc  `yaml:"debian,omitempty"`
	Dockerfile string      `yaml:"dockerfile,omitempty"`
	Image      string      `yaml:"image,omitempty"`
	PythonPath *[]string   `yaml:"python_path,omitempty"`
	Setup      *[][]string `yaml:"setup,omitempty"`
	// Plugins are the plugin modules of the image pytest loads (-p NAME); Ini the ini options it
	// is given (-o KEY=VALUE), such as a plugin's mode that a project sets in its setup.cfg.
	Plugins *[]string          `yaml:"plugins,omitempty"`
	Ini     *map[string]string `yaml:"ini,omitempty"`
	// From names the environment a dockerfile environment builds on: Tender makes that image
	// first and passes its ID as the build argument TENDER_FROM (ARG TENDER_FROM, then
	// FROM ${TENDER_FROM}).
	From string `yaml:"from,omitempty"`
	// Network lets a dockerfile environment's build fetch from the hosts it allows, through
	// Tender's recording proxy and nothing else.
	Network *NetworkDoc `yaml:"network,omitempty"`
	// ImageTemplate names a prebuilt image per pair, with Digests (pair ID -> sha256:...);
	// see prebuilt.go. Python is the image's test interpreter (default python3), ProjectCopy
	// the directory where the image keeps a copy of the project (an editable install's), which
	// the bootstrap takes off sys.path.
	ImageTemplate string            `yaml:"image_template,omitempty"`
	Digests       map[string]string `yaml:"digests,omitempty"`
	Python        string            `yaml:"python,omitempty"`
	ProjectCopy   string            `yaml:"project_copy,omitempty"`
}

// NetworkDoc is the network of an image build: the hosts it may fetch from.
type NetworkDoc struct {
	Allow []string `yaml:"allow,omitempty"` // host, host:port, address or address:port
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
	Name        string
	Kind        string
	Recipe      sandbox.Recipe // debian: the built-in pytest recipe plus the packages
	Dockerfile  string         // dockerfile: suite-relative; its directory is the build context
	Context     string         // dockerfile: suite-relative directory ("." never: see dockerfile)
	Digest      string         // recipe digest (debian), context digest (dockerfile), or the pinned digest (image)
	Ref         string
	PythonPath  []string
	Setup       [][]string
	Plugins     []string
	Ini         map[string]string
	Python      string             // the test interpreter; "" is python3
	ProjectCopy string             // the image's copy of the project, taken off sys.path
	Template    string             // image_template: the template; "" once made per pair
	Digests     map[string]string  // image_template: pair ID -> sha256:<hex>
	Instance    string             // the pair a per-pair environment of a template is for
	From        string             // dockerfile: the environment it builds on, or ""
	Network     netproxy.Allowlist // dockerfile: the hosts its build may fetch from; nil: no network
	setPath     bool
	setSetup    bool
	setPlugins  bool
	setIni      bool

	// Set once before grading starts, by whoever prepares the images (the CLI):
	ImageID string // the prepared image; verifiers run it by ID
	Failed  string // why the image could not be prepared; the pairs of this environment are error
	// NetworkRecord is the record of what the image's build fetched (netproxy.Record as JSON,
	// read from the image's label), for the bundle; empty without network.
	NetworkRecord []byte
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
// python path, setup, plugins and ini options when it has one. Everything that starts a pair's verifier uses it.
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
	if env.setPlugins {
		v.Plugins = env.Plugins
	}
	if env.setIni {
		v.Ini = env.Ini
	}
	if env.Python != "" {
		v.Python = env.Python
	}
	if env.ProjectCopy != "" {
		v.ProjectCopy = env.ProjectCopy
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
	for _, name := range slices.Sorted(maps.Keys(out)) {
		if err := l.checkFrom(out, out[name]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkFrom checks that an environment's from names another environment, and that no chain
// of them comes back to where it started.
func (l *loader) checkFrom(envs map[string]*Environment, env *Environment) error {
	if env.From == "" {
		return nil
	}
	field := "environments." + env.Name + ".from"
	if _, ok := envs[env.From]; !ok {
		return l.errf(field, "%q is not in environments (known: %s)", env.From, knownNames(envs))
	}
	chain := []string{env.Name}
	for e := envs[env.From]; e != nil; e = envs[e.From] {
		chain = append(chain, e.Name)
		if e == env {
			return l.errf(
				field,
				"%s build on each other in a cycle; one of them must start from an image instead",
				strings.Join(chain, " -> "),
			)
		}
		if len(chain) > len(envs) {
			break // a cycle that does not pass through env: its own members report it
		}
	}
	return nil
}

// BuildOrder returns envs and every environment they build on (from), each once, bases
// before the environments built on them, by name otherwise. The loader refused cycles.
func (s *Suite) BuildOrder(envs []*Environment) []*Environment {
	var out []*Environment
	seen := map[string]bool{}
	var visit func(e *Environment)
	visit = func(e *Environment) {
		if e == nil || seen[e.Name] {
			return
		}
		seen[e.Name] = true
		visit(s.Environments[e.From])
		out = append(out, e)
	}
	sorted := slices.Clone(envs)
	slices.SortFunc(sorted, func(a, b *Environment) int { return strings.Compare(a.Name, b.Name) })
	for _, e := range sorted {
		visit(e)
	}
	return out
}

func (l *loader) environment(field, name string, r EnvironmentDoc, runner string) (*Environment, error) {
	if !report.ValidID(name) {
		return nil, l.errf(field, "is not a valid environment name; use letters, digits, '.', '_' or '-'")
	}
	env := &Environment{Name: name}
	if err := l.envKind(field, r, runner); err != nil {
		return nil, err
	}
	var err error
	switch {
	case r.Debian != nil:
		err = l.debianEnv(field+".debian", env, *r.Debian)
	case r.Dockerfile != "":
		err = l.dockerfileEnv(field+".dockerfile", env, r.Dockerfile, r.From)
	case r.ImageTemplate != "":
		err = l.templateEnv(field, env, r)
	default:
		err = l.imageEnv(field+".image", env, r.Image)
	}
	if err != nil {
		return nil, err
	}
	if err := l.envBuild(field, env, r); err != nil {
		return nil, err
	}
	return env, l.envSettings(field, env, r, runner)
}

// envBuild reads how a dockerfile environment's build reaches outside its context: the
// environment it starts from, and its network.
func (l *loader) envBuild(field string, env *Environment, r EnvironmentDoc) error {
	if r.Dockerfile == "" {
		key := ""
		switch {
		case r.From != "":
			key = "from"
		case r.Network != nil:
			key = "network"
		default:
			return nil
		}
		return l.errf(field+"."+key, "is for dockerfile environments (a debian or image environment "+
			"is not built through the engine); remove it, or write a Dockerfile")
	}
	if r.From != "" {
		if r.From == env.Name {
			return l.errf(field+".from", "names the environment itself; name the environment it builds on")
		}
		env.From = r.From
	}
	if r.Network == nil {
		return nil
	}
	if len(r.Network.Allow) == 0 {
		return l.errf(field+".network.allow", "is empty; list the hosts the build fetches from "+
			"(e.g. [pypi.org, files.pythonhosted.org]), or remove network")
	}
	allow, err := netproxy.ParseAllowlist(r.Network.Allow)
	if err != nil {
		return l.errf(field+".network.allow", "%v", err)
	}
	env.Network = allow
	return nil
}

// envKind checks that an environment says how its image is made, once.
func (l *loader) envKind(field string, r EnvironmentDoc, runner string) error {
	n := 0
	for _, set := range []bool{r.Debian != nil, r.Dockerfile != "", r.Image != "", r.ImageTemplate != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return l.errf(field, "sets %d of debian, dockerfile, image and image_template; set exactly one", n)
	}
	if r.Digests != nil && r.ImageTemplate == "" {
		return l.errf(field+".digests", "is for image_template only; remove it, or name the images with image_template")
	}
	if runner != RunnerPytest && r.Debian != nil {
		return l.errf(
			field+".debian",
			"adds packages to the pytest image, but the suite's runner is %s; use dockerfile or image",
			runner,
		)
	}
	return nil
}

// envSettings reads the verifier settings an environment replaces.
func (l *loader) envSettings(field string, env *Environment, r EnvironmentDoc, runner string) error {
	if err := l.interpreterSettings(field, env, r, runner); err != nil {
		return err
	}
	var err error
	if r.PythonPath != nil {
		env.setPath = true
		if env.PythonPath, err = l.pythonPath(field+".python_path", *r.PythonPath); err != nil {
			return err
		}
		if len(env.PythonPath) > 0 && runner != RunnerPytest {
			return l.errf(field+".python_path", "is for runner: pytest only (the bootstrap applies it); remove it")
		}
	}
	if r.Setup != nil {
		env.setSetup, env.Setup = true, *r.Setup
		if err := l.argvs(field+".setup", env.Setup); err != nil {
			return err
		}
	}
	if r.Plugins != nil {
		env.setPlugins, env.Plugins = true, *r.Plugins
		if err := l.plugins(field+".plugins", env.Plugins, runner); err != nil {
			return err
		}
	}
	if r.Ini != nil {
		env.setIni, env.Ini = true, *r.Ini
		if err := l.ini(field+".ini", env.Ini, runner); err != nil {
			return err
		}
	}
	return nil
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
			return l.errf(
				fmt.Sprintf("%s.packages[%d]", field, i),
				"%q is not a Debian package name (lowercase letters, digits, '+', '-', '.')",
				pkg,
			)
		}
		if slices.Contains(rec.Packages, pkg) {
			return l.errf(
				fmt.Sprintf("%s.packages[%d]", field, i),
				"%q is listed twice or is already in the pytest image; remove it",
				pkg,
			)
		}
		rec.Packages = append(rec.Packages, pkg)
	}
	env.Kind, env.Digest = EnvDebian, rec.Digest()
	rec.Name = EnvImagePrefix + EnvDebian + ":" + env.Digest[:12]
	env.Recipe, env.Ref = rec, rec.Name
	return nil
}

var (
	reFromArg    = regexp.MustCompile(`(?im)^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*\$\{?TENDER_FROM\}?(?:[ \t]|$)`)
	reDeclareArg = regexp.MustCompile(`(?im)^[ \t]*ARG[ \t]+TENDER_FROM(?:[ \t=]|$)`)
)

// checkFromArg checks that a Dockerfile starts from TENDER_FROM exactly when its environment
// names a from.
func (l *loader) checkFromArg(field, rel string, data []byte, from string) error {
	uses := reFromArg.Match(data)
	switch {
	case from != "" && (!uses || !reDeclareArg.Match(data)):
		return l.errf(
			field,
			"%s does not start from the environment it names (from: %s); write ARG TENDER_FROM, then "+
				"FROM ${TENDER_FROM} (Tender passes that image's ID)",
			rel,
			from,
		)
	case from == "" && uses:
		return l.errf(field, "%s starts FROM ${TENDER_FROM}, but the environment names no from; add "+
			"from: with the environment it builds on", rel)
	}
	return nil
}

func (l *loader) dockerfileEnv(field string, env *Environment, rel, from string) error {
	data, err := l.readFile(field, rel, MaxSuiteFile)
	if err != nil {
		return err
	}
	if err := l.checkFromArg(field, rel, data, from); err != nil {
		return err
	}
	dir := path.Dir(path.Clean(rel))
	if dir == "." {
		return l.errf(
			field,
			"%s is at the top of the suite, so the whole suite (hidden assets too) would be its build context; put it in a directory of its own, e.g. envs/%s/Dockerfile",
			rel,
			env.Name,
		)
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
// The digest also covers the base's digest (from) and the allowlist (network), so a change to
// either names a new image.
func (l *loader) contextDigests(s *Suite) error {
	for _, env := range s.BuildOrder(slices.Collect(maps.Values(s.Environments))) {
		if env.Kind != EnvDockerfile {
			continue
		}
		name := env.Name
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
					return l.errf(
						field,
						"its build context %s/ holds %s, a file of pair %s; keep environment files in a directory of their own",
						env.Context,
						f,
						p.ID,
					)
				}
			}
		}
		inside[" dockerfile"] = strings.TrimPrefix(env.Dockerfile, env.Context+"/") // which file builds it
		if env.From != "" {
			inside[" from"] = s.Environments[env.From].Digest // computed first: BuildOrder
		}
		if env.Network != nil {
			inside[" network"] = strings.Join(env.Network.Strings(), " ")
		}
		env.Digest = digestMap(inside)
		env.Ref = EnvImagePrefix + EnvDockerfile + ":" + env.Digest[:12]
	}
	return nil
}

// pythonPath checks workspace-relative directories for sys.path: relative, clean, inside.
func (l *loader) pythonPath(field string, list []string) ([]string, error) {
	for i, p := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		bad := p == "" || !utf8.ValidString(p) || strings.ContainsAny(p, "\\\x00\n\r") || path.IsAbs(p) ||
			path.Clean(p) != p ||
			p == "."
		if bad || p == ".." || strings.HasPrefix(p, "../") {
			return nil, l.errf(
				f,
				"%q is not a clean relative directory inside the workspace; write it like src or lib/python",
				p,
			)
		}
		if strings.Contains(p, ":") {
			return nil, l.errf(f, "%q holds a ':', which would split it in two in the PYTHONPATH a test's subprocesses "+
				"get; rename the directory", p)
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

// ContextSize adds up the sizes of the regular files under dir, without reading them, and
// stops once the sum is over MaxEnvContext.
func ContextSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > MaxEnvContext {
			return fs.SkipAll
		}
		return nil
	})
	return total, err
}

// ContextTooLarge says what to do about a build context over MaxEnvContext.
func ContextTooLarge(context string) string {
	return fmt.Sprintf(
		"the build context %s holds more than %d GiB, Tender's cap for one (MaxEnvContext); keep only what "+
			"the image needs in that directory, or let the build download the rest through an allowlist "+
			"(network:, see docs/suite-format.md#build-network)",
		context,
		MaxEnvContext>>30,
	)
}

// contextSizes refuses a dockerfile environment whose build context is over MaxEnvContext.
func (l *loader) contextSizes(s *Suite) error {
	for _, name := range slices.Sorted(maps.Keys(s.Environments)) {
		env := s.Environments[name]
		if env.Kind != EnvDockerfile {
			continue
		}
		n, err := ContextSize(filepath.Join(l.dir, filepath.FromSlash(env.Context)))
		if err != nil {
			return l.errf("environments."+name+".dockerfile", "its build context %s/ cannot be read: %v",
				env.Context, pathErr(err))
		}
		if n > MaxEnvContext {
			return l.errf("environments."+name+".dockerfile", "%s", ContextTooLarge(env.Context+"/"))
		}
	}
	return nil
}
