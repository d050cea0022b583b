package swebench

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"gopkg.in/ini.v1"
)

// What `tender env infer` reads of a repository: the requirements it declares, never by
// running anything. pyproject.toml is parsed with go-toml, setup.cfg and tox.ini with ini.v1,
// requirements*.txt line by line, and setup.py statically: only literal lists and strings of
// install_requires, tests_require, extras_require and python_requires are read (a value that
// is not a literal is named as unread, never evaluated).

// requirement is one declared dependency.
type requirement struct {
	Name   string // normalized: lower case, runs of "-_." as "-"
	Marker string // the PEP 508 marker, or a poetry python constraint as "python_version ..."
	From   string // where it was declared
}

// declared is everything read from a repository's files.
type declared struct {
	Reqs           []requirement
	RequiresPython []string          // each constraint found, with where
	Ini            map[string]string // the project's own pytest ini options
	SrcLayout      bool              // a package directory configured (or found) under src/
	Unread         []string          // what was seen and could not be read statically
}

var (
	reReqName  = regexp.MustCompile(`^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$`)
	reNameRuns = regexp.MustCompile(`[-_.]+`)
)

func normalizeName(n string) string {
	return reNameRuns.ReplaceAllString(strings.ToLower(n), "-")
}

// parseRequirement reads one PEP 508 line: "name[extras] spec; marker". Options (-r, -e, --x),
// URLs and paths are not requirements of a name and give ok false.
func parseRequirement(line, from string) (requirement, bool) {
	line = strings.TrimSpace(strings.SplitN(line, " #", 2)[0])
	if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "-") || strings.Contains(line, "://") ||
		strings.HasPrefix(line, ".") || strings.HasPrefix(line, "/") {
		return requirement{}, false
	}
	spec, marker, _ := strings.Cut(line, ";")
	g := reReqName.FindStringSubmatch(spec)
	if g == nil || strings.Contains(g[3], "@") {
		return requirement{}, false
	}
	return requirement{Name: normalizeName(g[1]), Marker: strings.TrimSpace(marker), From: from}, true
}

func (d *declared) addLines(lines []string, from string) {
	for _, l := range lines {
		if r, ok := parseRequirement(l, from); ok {
			d.Reqs = append(d.Reqs, r)
		}
	}
}

// extraWanted reports whether an extra's requirements are the tests' too: every extra but
// those of documentation, linting, typing and release tooling.
func extraWanted(name string) bool {
	n := normalizeName(name)
	for _, skip := range []string{"doc", "lint", "typing", "mypy", "type", "release", "build", "style", "format"} {
		if strings.HasPrefix(n, skip) {
			return false
		}
	}
	return true
}

// readPyproject reads [project] (PEP 621) and [tool.poetry], and [tool.pytest.ini_options].
func (d *declared) readPyproject(data []byte) error {
	var doc struct {
		Project struct {
			Dependencies   []string            `toml:"dependencies"`
			Optional       map[string][]string `toml:"optional-dependencies"`
			RequiresPython string              `toml:"requires-python"`
		} `toml:"project"`
		Tool struct {
			Poetry struct {
				Dependencies    map[string]any `toml:"dependencies"`
				DevDependencies map[string]any `toml:"dev-dependencies"`
				Group           map[string]struct {
					Dependencies map[string]any `toml:"dependencies"`
				} `toml:"group"`
				Packages []map[string]any `toml:"packages"`
			} `toml:"poetry"`
			Pytest struct {
				IniOptions map[string]any `toml:"ini_options"`
			} `toml:"pytest"`
			Setuptools struct {
				PackageDir map[string]string `toml:"package-dir"`
				Packages   any               `toml:"packages"`
			} `toml:"setuptools"`
		} `toml:"tool"`
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("pyproject.toml: %v", err)
	}
	p := doc.Project
	d.addLines(p.Dependencies, "pyproject.toml [project] dependencies")
	for _, extra := range sortedKeys(p.Optional) {
		if extraWanted(extra) {
			d.addLines(p.Optional[extra], "pyproject.toml [project.optional-dependencies] "+extra)
		}
	}
	if p.RequiresPython != "" {
		d.RequiresPython = append(d.RequiresPython, p.RequiresPython+" (pyproject.toml requires-python)")
	}
	po := doc.Tool.Poetry
	d.addPoetry(po.Dependencies, "pyproject.toml [tool.poetry.dependencies]")
	d.addPoetry(po.DevDependencies, "pyproject.toml [tool.poetry.dev-dependencies]")
	for _, g := range sortedKeys(po.Group) {
		if extraWanted(g) {
			d.addPoetry(po.Group[g].Dependencies, "pyproject.toml [tool.poetry.group."+g+".dependencies]")
		}
	}
	for _, pkg := range po.Packages {
		if pkg["from"] == "src" {
			d.SrcLayout = true
		}
	}
	if doc.Tool.Setuptools.PackageDir[""] == "src" {
		d.SrcLayout = true
	}
	for _, k := range sortedKeys(doc.Tool.Pytest.IniOptions) {
		if s, ok := doc.Tool.Pytest.IniOptions[k].(string); ok {
			d.setIni(k, s)
		} else if b, ok := doc.Tool.Pytest.IniOptions[k].(bool); ok {
			d.setIni(k, fmt.Sprint(b))
		}
	}
	return nil
}

// addPoetry reads a poetry dependency table: name -> "^1.2" or {version, python, markers}.
func (d *declared) addPoetry(deps map[string]any, from string) {
	for _, name := range sortedKeys(deps) {
		if strings.EqualFold(name, "python") {
			if s, ok := deps[name].(string); ok {
				d.RequiresPython = append(d.RequiresPython, s+" ("+from+" python)")
			}
			continue
		}
		r := requirement{Name: normalizeName(name), From: from}
		if t, ok := deps[name].(map[string]any); ok {
			if py, ok := t["python"].(string); ok {
				r.Marker = "poetry-python " + py
			} else if m, ok := t["markers"].(string); ok {
				r.Marker = m
			}
		}
		d.Reqs = append(d.Reqs, r)
	}
}

// iniLoad parses setup.cfg or tox.ini the way Python's configparser reads them.
var iniLoad = ini.LoadOptions{IgnoreInlineComment: true, AllowPythonMultilineValues: true, AllowNonUniqueSections: false,
	Insensitive: false, KeyValueDelimiters: "=:", SkipUnrecognizableLines: true}

func splitLines(v string) []string {
	var out []string
	for _, l := range strings.Split(v, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// readSetupCfg reads [options], [options.extras_require] and [tool:pytest].
func (d *declared) readSetupCfg(data []byte) error {
	f, err := ini.LoadSources(iniLoad, data)
	if err != nil {
		return fmt.Errorf("setup.cfg: %v", err)
	}
	opts := f.Section("options")
	d.addLines(splitLines(opts.Key("install_requires").String()), "setup.cfg install_requires")
	d.addLines(splitLines(opts.Key("tests_require").String()), "setup.cfg tests_require")
	if py := strings.TrimSpace(opts.Key("python_requires").String()); py != "" {
		d.RequiresPython = append(d.RequiresPython, py+" (setup.cfg python_requires)")
	}
	if pd := opts.Key("package_dir").String(); strings.Contains(strings.ReplaceAll(pd, " ", ""), "=src") {
		d.SrcLayout = true
	}
	for _, k := range f.Section("options.extras_require").Keys() {
		if extraWanted(k.Name()) {
			d.addLines(splitLines(k.String()), "setup.cfg extras_require "+k.Name())
		}
	}
	d.readIniSection(f, "tool:pytest")
	return nil
}

// readToxIni reads [testenv] deps and [pytest].
func (d *declared) readToxIni(data []byte) error {
	f, err := ini.LoadSources(iniLoad, data)
	if err != nil {
		return fmt.Errorf("tox.ini: %v", err)
	}
	if s, err := f.GetSection("testenv"); err == nil {
		d.addLines(splitLines(s.Key("deps").String()), "tox.ini [testenv] deps")
	}
	d.readIniSection(f, "pytest")
	return nil
}

func (d *declared) readIniSection(f *ini.File, name string) {
	s, err := f.GetSection(name)
	if err != nil {
		return
	}
	for _, k := range s.Keys() {
		d.setIni(k.Name(), strings.TrimSpace(k.String()))
	}
}

func (d *declared) setIni(k, v string) {
	if d.Ini == nil {
		d.Ini = map[string]string{}
	}
	if _, ok := d.Ini[k]; !ok {
		d.Ini[k] = v
	}
}

// readRequirementsTxt reads one requirements file.
func (d *declared) readRequirementsTxt(name string, data []byte) {
	d.addLines(strings.Split(string(data), "\n"), name)
}

var (
	reSetupKw   = regexp.MustCompile(`\b(install_requires|tests_require|extras_require|python_requires|package_dir)\s*=\s*`)
	reStringLit = regexp.MustCompile(`(?s)"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'`)
)

// readSetupPy reads setup.py without running it: the keyword arguments of interest whose value
// is a literal ([...], {...}, a string), or a name assigned a literal at the top of the file.
func (d *declared) readSetupPy(data []byte) {
	src := string(data)
	for _, m := range reSetupKw.FindAllStringSubmatchIndex(src, -1) {
		kw := src[m[2]:m[3]]
		val, ok := literalAt(src, m[1])
		if !ok {
			if name := identAt(src, m[1]); name != "" {
				val, ok = assignedLiteral(src, name)
			}
		}
		if !ok {
			d.Unread = append(d.Unread, "setup.py "+kw+" (not a literal; read it yourself)")
			continue
		}
		strs := stringLiterals(val)
		switch kw {
		case "python_requires":
			if len(strs) > 0 {
				d.RequiresPython = append(d.RequiresPython, strs[0]+" (setup.py python_requires)")
			}
		case "package_dir":
			if slices.Contains(strs, "src") {
				d.SrcLayout = true
			}
		case "extras_require":
			d.readExtrasLiteral(val)
		default:
			d.addLines(strs, "setup.py "+kw)
		}
	}
}

// readExtrasLiteral reads {"name": [...], ...}, skipping the extras extraWanted refuses.
func (d *declared) readExtrasLiteral(val string) {
	re := regexp.MustCompile(`(?s)["']([^"']+)["']\s*:\s*(\[[^\]]*\])`)
	for _, g := range re.FindAllStringSubmatch(val, -1) {
		if extraWanted(g[1]) {
			d.addLines(stringLiterals(g[2]), "setup.py extras_require "+g[1])
		}
	}
}

// literalAt returns the bracketed or quoted literal that starts at i.
func literalAt(src string, i int) (string, bool) {
	if i >= len(src) {
		return "", false
	}
	switch src[i] {
	case '"', '\'':
		if loc := reStringLit.FindStringIndex(src[i:]); loc != nil && loc[0] == 0 {
			return src[i : i+loc[1]], true
		}
	case '[', '{', '(':
		return balanced(src, i)
	}
	return "", false
}

// balanced returns src[i:j+1] where j closes the bracket at i, skipping string literals; a
// literal holding anything but strings, brackets, commas, colons and comments is refused.
func balanced(src string, i int) (string, bool) {
	depth := 0
	for j := i; j < len(src); j++ {
		switch c := src[j]; c {
		case '"', '\'':
			loc := reStringLit.FindStringIndex(src[j:])
			if loc == nil || loc[0] != 0 {
				return "", false
			}
			j += loc[1] - 1
		case '#':
			for j < len(src) && src[j] != '\n' {
				j++
			}
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			if depth--; depth == 0 {
				return src[i : j+1], true
			}
		case ',', ':', ' ', '\t', '\n', '\r':
		default:
			return "", false // a name, a call, an expression: not a literal
		}
	}
	return "", false
}

var reIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)

func identAt(src string, i int) string {
	name := reIdent.FindString(src[i:])
	if rest := src[i+len(name):]; strings.HasPrefix(strings.TrimLeft(rest, " "), "(") ||
		strings.HasPrefix(rest, ".") || strings.HasPrefix(strings.TrimLeft(rest, " "), "+") {
		return "" // a call, an attribute or an expression
	}
	return name
}

// assignedLiteral finds "NAME = <literal>" at the start of a line.
func assignedLiteral(src, name string) (string, bool) {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s*=\s*`)
	loc := re.FindStringIndex(src)
	if loc == nil {
		return "", false
	}
	return literalAt(src, loc[1])
}

func stringLiterals(s string) []string {
	var out []string
	for _, g := range reStringLit.FindAllStringSubmatch(s, -1) {
		out = append(out, g[1]+g[2])
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
