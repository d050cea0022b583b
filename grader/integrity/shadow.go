package integrity

import "strings"

// Shadowing modules. Tender runs pytest with -P/-I and the workspace appended to sys.path, so
// none of these can win an import today; they are rejected anyway because any one of them
// wins the moment a runner, a plugin or pytest's own rootdir insertion (importmode=prepend puts
// test directories first) puts its directory ahead of site-packages, and a patch that adds
// them has no business doing so. Names are compared in the canonical fold form (case, Unicode
// normalization, ignorables) with trailing dots and spaces trimmed, at any depth.
//
// What is deliberately NOT flagged, because ordinary projects have it:
//   - pytest_*.py and */pytest_plugin.py: libraries ship their own pytest plugins, and with
//     autoload off and Tender's own -c config a plugin module is only loaded when the suite
//     names it;
//   - pytest.ini, tox.ini, setup.cfg, pyproject.toml: Tender's own -c means pytest reads none
//     of them, and restore resets their test-runner sections anyway;
//   - .gitignore, .gitattributes, .gitmodules: plain files; git never acts on them in a
//     workspace Tender materialized (gitsafe rejects submodule entries in the tree).
//
// Known cost: a suite that grades pytest, pluggy or py themselves would see their own source
// (src/_pytest/...) flagged; such a suite needs an allowance this package does not offer yet.

// shadowModules are module names that must not appear as a module file or a package directory.
var shadowModules = map[string]bool{
	"pytest":        true,
	"_pytest":       true,
	"py":            true,
	"pluggy":        true,
	"sitecustomize": true,
	"usercustomize": true,
}

// importableExt are the extensions under which a module file is importable, or (pyc/pyo)
// loaded in place of the source.
var importableExt = map[string]bool{"py": true, "pyc": true, "pyo": true, "pyw": true, "so": true, "pyd": true}

// shadowReason returns a description of why path would shadow test tooling, or "".
// underRestored is consulted for conftest.py only: a conftest under a restored path is reset.
func shadowReason(path string, underRestored func(string) bool) string {
	comps := strings.Split(canonicalPath(path), "/")
	for i, c := range comps {
		c = strings.TrimRight(c, ". ")
		isDir := i < len(comps)-1
		if why := componentShadow(c, isDir); why != "" {
			return why
		}
	}
	if last := strings.TrimRight(comps[len(comps)-1], ". "); last == "conftest.py" && !underRestored(path) {
		return "conftest.py outside restored_paths would load hooks into the test run"
	}
	return ""
}

// componentShadow judges one canonical path component.
func componentShadow(c string, isDir bool) string {
	module, ext, hasExt := strings.Cut(c, ".")
	lastExt := ext
	if i := strings.LastIndexByte(ext, '.'); i >= 0 {
		lastExt = ext[i+1:]
	}
	switch {
	case isDir && c == "__pycache__":
		return "__pycache__/ holds bytecode that can be loaded instead of the reviewed source"
	case isDir && shadowModules[c]:
		return "package " + c + "/ would shadow the installed " + c
	case isDir && (strings.HasSuffix(c, ".dist-info") || strings.HasSuffix(c, ".egg-info")):
		return "distribution metadata " + c + "/ on sys.path can declare entry points and versions"
	case isDir:
		return ""
	case hasExt && shadowModules[module] && importableExt[lastExt]:
		return "module " + c + " would shadow the installed " + module
	case lastExt == "pth" || lastExt == "egg-link":
		return c + " is processed as a path configuration file in a site directory"
	case lastExt == "pyc" || lastExt == "pyo":
		return c + " is bytecode; an unchecked-hash .pyc is loaded instead of the source"
	case lastExt == "so" || lastExt == "pyd":
		return c + " is a compiled extension; beside a .py of the same name it wins the import"
	}
	return ""
}
