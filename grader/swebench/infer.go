package swebench

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/suite"
)

// DebianIndex says which Debian packages exist, for `tender env infer`: Has returns the names
// of pkgs that the index has. Where says what was asked ("apt-cache on this host, Debian
// bookworm"); an index that cannot tell (no apt-cache) has Where "" and Has nil.
type DebianIndex struct {
	Where string
	Has   func(pkgs []string) (map[string]bool, error)
}

// Proposal is what `tender env infer` proposes for a repository at a commit: an environment
// for the --env spec, and the lines that explain it (requirements found, what Debian lacks).
type Proposal struct {
	Env   suite.EnvironmentDoc
	Lacks []string // requirements no Debian package was found for
	Notes []string
}

// debianPythons are the Debian suites the mirror serves, with their python3.
var debianPythons = []struct{ suite, version string }{{"bookworm", "3.11"}, {"bullseye", "3.9"}}

// toolReqs are requirements the tests do not need: the runner, coverage, linters, packaging.
var toolReqs = []string{"pytest", "pytest-cov", "coverage", "pytest-xdist", "tox", "pre-commit", "flake8", "black",
	"mypy", "pylint", "isort", "wheel", "setuptools-scm", "twine", "build", "codecov", "coveralls", "check-manifest",
	"sphinx", "pytest-runner", "bump2version", "ruff", "types-setuptools"}

// isTool reports whether a requirement is a tool the tests do not import.
func isTool(name string) bool {
	return slices.Contains(toolReqs, name) || strings.HasPrefix(name, "flake8") || strings.HasPrefix(name, "types-") ||
		strings.HasPrefix(name, "mypy")
}

// debianAliases are distributions whose Debian package is not python3-NAME (Debian's names).
var debianAliases = map[string]string{
	"pyyaml": "python3-yaml", "pillow": "python3-pil", "beautifulsoup4": "python3-bs4",
	"scikit-learn": "python3-sklearn", "attrs": "python3-attr", "pytz": "python3-tz", "pyjwt": "python3-jwt",
	"pyerfa": "python3-erfa", "diff-cover": "diff-cover", "protobuf": "python3-protobuf",
	"opencv-python": "python3-opencv", "typing": "", "enum34": "", "dataclasses": "", "futures": "",
	"importlib-resources": "python3-importlib-resources", "tomli": "python3-tomli",
}

// Infer reads the declared requirements of a repository at a commit (gitsafe: a snapshot,
// never the clone's own .git; nothing is run) and proposes an environment.
func Infer(ctx context.Context, r *gitsafe.Repo, commit string, deb DebianIndex) (Proposal, error) {
	files, err := r.ListFiles(ctx, commit)
	if err != nil {
		return Proposal{}, err
	}
	var d declared
	read := func(name string) []byte {
		data, err := r.ReadFile(ctx, commit, name)
		if err != nil {
			d.Unread = append(d.Unread, name+": "+err.Error())
		}
		return data
	}
	var tree []string
	for _, f := range files {
		tree = append(tree, f.Path)
	}
	for _, name := range tree {
		switch {
		case name == "pyproject.toml":
			if err := d.readPyproject(read(name)); err != nil {
				d.Unread = append(d.Unread, err.Error())
			}
		case name == "setup.cfg":
			if err := d.readSetupCfg(read(name)); err != nil {
				d.Unread = append(d.Unread, err.Error())
			}
		case name == "tox.ini":
			if err := d.readToxIni(read(name)); err != nil {
				d.Unread = append(d.Unread, err.Error())
			}
		case name == "setup.py":
			d.readSetupPy(read(name))
		case isRequirementsFile(name):
			d.readRequirementsTxt(name, read(name))
		}
	}
	if !d.SrcLayout {
		d.SrcLayout = srcPackage(tree)
	}
	return propose(d, deb)
}

func isRequirementsFile(name string) bool {
	base := path.Base(name)
	dir := path.Dir(name)
	return strings.HasSuffix(base, ".txt") && (dir == "." && strings.HasPrefix(base, "requirements") ||
		dir == "requirements")
}

// srcPackage reports whether the tree keeps a package under src/ (src/NAME/__init__.py).
func srcPackage(tree []string) bool {
	return slices.ContainsFunc(tree, func(p string) bool {
		parts := strings.Split(p, "/")
		return len(parts) == 3 && parts[0] == "src" && parts[2] == "__init__.py"
	})
}

// propose turns what was declared into an environment.
func propose(d declared, deb DebianIndex) (Proposal, error) {
	var p Proposal
	suiteName, python := chooseSuite(d.RequiresPython, &p)
	reqs := map[string]requirement{}
	for _, r := range d.Reqs {
		if _, seen := reqs[r.Name]; seen || isTool(r.Name) {
			continue
		}
		if !markerHolds(r.Marker, python) {
			p.Notes = append(p.Notes, fmt.Sprintf("%s (from %s): skipped, its marker (%s) does not hold on Python %s",
				r.Name, r.From, r.Marker, python))
			continue
		}
		reqs[r.Name] = r
	}
	names := sortedKeys(reqs)
	var plugins []string
	ini := map[string]string{}
	candidates := map[string][]string{}
	var all []string
	for _, n := range names {
		if pl, ok := knownPlugins[n]; ok {
			plugins = append(plugins, pl.Module)
			candidates[n] = []string{pl.Debian}
			for _, k := range pl.Ini {
				if v, ok := d.Ini[k]; ok {
					ini[k] = v
				}
			}
			for k, v := range pl.Defaults {
				ini[k] = v
			}
		} else {
			candidates[n] = debianCandidates(n)
			if strings.HasPrefix(n, "pytest-") {
				p.Notes = append(p.Notes, n+" is a pytest plugin Tender does not know: if the tests need it, name "+
					"the module of its pytest11 entry point in plugins")
			}
		}
		all = append(all, candidates[n]...)
	}
	if v, ok := d.Ini["xfail_strict"]; ok {
		ini["xfail_strict"] = v
	}
	has, err := debianHas(deb, all)
	if err != nil {
		return p, err
	}
	var pkgs []string
	for _, n := range names {
		pkg := ""
		for _, c := range candidates[n] {
			if has == nil || has[c] {
				pkg = c
				break
			}
		}
		switch {
		case len(candidates[n]) == 0:
			p.Notes = append(p.Notes, n+": not needed on Python 3 (from "+reqs[n].From+")")
		case pkg == "":
			p.Lacks = append(p.Lacks, n)
			p.Notes = append(p.Notes, fmt.Sprintf("%s (from %s): Debian has none of %s", n, reqs[n].From,
				strings.Join(candidates[n], ", ")))
		default:
			if !slices.Contains(pkgs, pkg) {
				pkgs = append(pkgs, pkg)
			}
			p.Notes = append(p.Notes, fmt.Sprintf("%s (from %s): %s", n, reqs[n].From, pkg))
		}
	}
	p.Env = suite.EnvironmentDoc{Debian: &suite.DebianDoc{Packages: pkgs}}
	if suiteName != "bookworm" {
		p.Env.Debian.Suite = suiteName
	}
	if len(plugins) > 0 {
		p.Env.Plugins = &plugins
	}
	if len(ini) > 0 {
		p.Env.Ini = &ini
	}
	if d.SrcLayout {
		p.Env.PythonPath = &[]string{"src"}
		p.Notes = append(p.Notes, "the package is under src/: python_path [src]")
	}
	if has == nil {
		p.Notes = append(p.Notes, "which Debian packages exist was not checked (no apt-cache on this host): "+
			"each name is Debian's usual python3-NAME")
	} else {
		p.Notes = append(p.Notes, "Debian packages checked with "+deb.Where)
	}
	for _, u := range d.Unread {
		p.Notes = append(p.Notes, "not read: "+u)
	}
	return p, nil
}

// debianCandidates are the Debian names a distribution may have, most likely first.
func debianCandidates(n string) []string {
	if alias, ok := debianAliases[n]; ok {
		if alias == "" {
			return nil // a backport of the standard library
		}
		return []string{alias}
	}
	out := []string{"python3-" + n}
	if rest, ok := strings.CutPrefix(n, "python-"); ok && rest != "" {
		out = []string{"python3-" + rest, "python3-" + n} // python-dateutil is python3-dateutil
	} else if rest, ok := strings.CutPrefix(n, "py"); ok && rest != "" {
		out = append(out, "python3-"+rest)
	}
	if i := strings.Index(n, "-"); i > 0 {
		out = append(out, "python3-"+n[:i]+"."+n[i+1:]) // namespace packages: sphinxcontrib.applehelp
	}
	return out
}

func debianHas(deb DebianIndex, pkgs []string) (map[string]bool, error) {
	if deb.Has == nil || len(pkgs) == 0 {
		if deb.Has == nil {
			return nil, nil
		}
		return map[string]bool{}, nil
	}
	return deb.Has(pkgs)
}

// chooseSuite picks the first Debian suite whose python3 meets every requires-python
// constraint found.
func chooseSuite(constraints []string, p *Proposal) (string, string) {
	for _, s := range debianPythons {
		ok := true
		for _, c := range constraints {
			spec, _, _ := strings.Cut(c, " (")
			if !versionMatches(spec, s.version) {
				ok = false
				p.Notes = append(p.Notes, fmt.Sprintf("Debian %s's Python %s does not meet %s", s.suite, s.version, c))
			}
		}
		if ok {
			if len(constraints) > 0 {
				p.Notes = append(p.Notes, fmt.Sprintf("Debian %s's Python %s meets %s", s.suite, s.version,
					strings.Join(constraints, ", ")))
			}
			return s.suite, s.version
		}
	}
	p.Notes = append(p.Notes, "no Debian suite the mirror serves has a Python that meets "+
		strings.Join(constraints, ", ")+"; proposing bookworm anyway")
	return "bookworm", "3.11"
}

// markerHolds evaluates the python_version terms of a PEP 508 marker (or a poetry python
// constraint) for the chosen Python; other terms hold (sys_platform is taken as linux).
func markerHolds(marker, python string) bool {
	if marker == "" {
		return true
	}
	if c, ok := strings.CutPrefix(marker, "poetry-python "); ok {
		return versionMatches(c, python)
	}
	for _, alt := range regexp.MustCompile(`\s+or\s+`).Split(marker, -1) {
		all := true
		for _, term := range regexp.MustCompile(`\s+and\s+`).Split(alt, -1) {
			if !termHolds(strings.Trim(term, " ()"), python) {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

var reMarkerTerm = regexp.MustCompile(`^(python_version|python_full_version|sys_platform|platform_system)\s*(==|!=|<=|>=|<|>)\s*["']([^"']*)["']$`)

func termHolds(term, python string) bool {
	g := reMarkerTerm.FindStringSubmatch(term)
	switch {
	case g == nil:
		return true
	case g[1] == "sys_platform" || g[1] == "platform_system":
		v := strings.ToLower(g[3]) == "linux"
		return v == (g[2] == "==")
	}
	return versionMatches(g[2]+g[3], python)
}

// versionMatches checks a version against a constraint: PEP 440 clauses separated by commas
// (>=, <=, >, <, ==, !=, ~=, with .* wildcards), and poetry's ^ and ~ and || alternatives.
func versionMatches(constraint, version string) bool {
	for _, alt := range strings.Split(constraint, "||") {
		all := true
		for _, clause := range strings.FieldsFunc(alt, func(r rune) bool { return r == ',' }) {
			if !clauseMatches(strings.TrimSpace(clause), version) {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

var reClause = regexp.MustCompile(`^(\^|~=|~|==|!=|>=|<=|>|<)?\s*v?([0-9]+(?:\.[0-9]+)*)(\.\*)?$`)

func clauseMatches(clause, version string) bool {
	if clause == "" || clause == "*" {
		return true
	}
	g := reClause.FindStringSubmatch(clause)
	if g == nil {
		return true // an unread clause does not decide
	}
	op, want, wild := g[1], parseVersion(g[2]), g[3] != ""
	have := parseVersion(version)
	cmp := compareVersions(have, want)
	switch op {
	case "", "==":
		if wild {
			return prefixEqual(have, want)
		}
		return cmp == 0
	case "!=":
		return !(wild && prefixEqual(have, want)) && !(cmp == 0 && !wild)
	case ">=":
		return cmp >= 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	case "<":
		return cmp < 0
	case "^": // poetry: same leftmost non-zero
		upper := slices.Clone(want[:1])
		upper[0]++
		return cmp >= 0 && compareVersions(have, upper) < 0
	case "~": // poetry: ~X.Y is >=X.Y,<X.(Y+1); ~X is >=X,<X+1
		upper := slices.Clone(want[:min(len(want), 2)])
		upper[len(upper)-1]++
		return cmp >= 0 && compareVersions(have, upper) < 0
	case "~=": // PEP 440: ~=X.Y is >=X.Y,<X+1
		if len(want) < 2 {
			return cmp >= 0
		}
		upper := slices.Clone(want[:len(want)-1])
		upper[len(upper)-1]++
		return cmp >= 0 && compareVersions(have, upper) < 0
	}
	return true
}

func parseVersion(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ".") {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

func compareVersions(a, b []int) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func prefixEqual(have, want []int) bool {
	return len(have) >= len(want) && slices.Equal(have[:len(want)], want)
}
