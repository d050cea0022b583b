package suite

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

// buildSuite has a chain of environments: base (debian) <- mid (dockerfile, with network)
// <- top (dockerfile); the pair runs in top.
const buildSuite = `name: t
version: "1"
environments:
  base:
    debian: {packages: [python3-pip]}
  mid:
    dockerfile: envs/mid/Dockerfile
    from: base
    network:
      allow: [127.0.0.1:8080, pypi.org]
  top:
    dockerfile: envs/top/Dockerfile
    from: mid
repositories:
  r: {fast_export: repos/r.fi, environment: top}
pairs:
  - id: p1
    repository: r
    base_commit: 0123456789abcdef0123456789abcdef01234567
    issue: pairs/p1/issue.md
    patch: pairs/p1/patch.diff
    fail_to_pass: ["tests/test_a.py::test_a"]
`

const fromDockerfile = "ARG TENDER_FROM\nFROM ${TENDER_FROM}\nRUN pip install tinypkg\n"

var buildFiles = map[string]string{
	"envs/mid/Dockerfile": fromDockerfile,
	"envs/top/Dockerfile": "# syntax\nARG TENDER_FROM=unused\nfrom $TENDER_FROM AS stage\nCOPY x /x\n",
	"envs/top/x":          "1\n",
}

func withFiles(over map[string]string) map[string]string {
	out := maps.Clone(buildFiles)
	maps.Copy(out, over)
	return out
}

// TestLoadEnvironmentsOnEnvironments: a dockerfile environment names the one it builds on
// and its network; the build order puts bases first; the image name of an environment
// follows its base's recipe and its allowlist, so a change to either names a new image.
func TestLoadEnvironmentsOnEnvironments(t *testing.T) {
	s, err := Load(writeLoadSuite(t, buildSuite, buildFiles), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base, mid, top := s.Environments["base"], s.Environments["mid"], s.Environments["top"]
	if mid.From != "base" || top.From != "mid" || top.Network != nil ||
		strings.Join(mid.Network.Strings(), " ") != "127.0.0.1:8080 pypi.org" {
		t.Errorf("mid %+v\ntop %+v", mid, top)
	}
	var order []string
	for _, e := range s.BuildOrder([]*Environment{top}) {
		order = append(order, e.Name)
	}
	if strings.Join(order, " ") != "base mid top" {
		t.Errorf("BuildOrder(top) = %v, want base mid top", order)
	}
	if got := s.UsedEnvironments(s.Pairs); len(got) != 1 || got[0] != top {
		t.Errorf("used environments %v: want top alone (its bases are built for it, not used)", got)
	}
	for _, tt := range []struct {
		name, manifest string
		changed        []string // environments whose image must be renamed
	}{
		{"base packages", strings.Replace(buildSuite, "python3-pip", "python3-pip, python3-venv", 1),
			[]string{"base", "mid", "top"}},
		{"allowlist", strings.Replace(buildSuite, "pypi.org]", "pypi.org, files.pythonhosted.org]", 1),
			[]string{"mid", "top"}},
	} {
		s2, err := Load(writeLoadSuite(t, tt.manifest, buildFiles), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for name, e := range s.Environments {
			renamed := s2.Environments[name].Ref != e.Ref
			if want := strings.Contains(strings.Join(tt.changed, " "), name); renamed != want {
				t.Errorf("a change to the %s: %s renamed = %v, want %v", tt.name, name, renamed, want)
			}
		}
		if s2.Pairs[0].InputDigest == s.Pairs[0].InputDigest {
			t.Errorf("a change to the %s kept the pair's input digest: --resume would not notice", tt.name)
		}
	}
	if base.Ref == mid.Ref || mid.Ref == top.Ref {
		t.Error("environments share image names")
	}
}

// TestMalformedBuildLinks: a bad from or network is one line naming its field.
func TestMalformedBuildLinks(t *testing.T) {
	sub := func(old, new string) string { return strings.Replace(buildSuite, old, new, 1) }
	tests := []struct {
		name, manifest string
		files          map[string]string
		field          string
		want           []string
	}{
		{"unknown from", sub("from: base", "from: nope"), nil, "environments.mid.from",
			[]string{`"nope" is not in environments (known: base, mid, top)`}},
		{"from itself", sub("from: mid", "from: top"), nil, "environments.top.from",
			[]string{"names the environment itself"}},
		{"cycle", sub("from: base", "from: top"), nil, "environments.mid.from",
			[]string{"mid -> top -> mid build on each other in a cycle"}},
		{"from on debian", sub("python3-pip]}", "python3-pip]}\n    from: top"), nil, "environments.base.from",
			[]string{"is for dockerfile environments"}},
		{"network on an image", sub("  base:\n    debian: {packages: [python3-pip]}",
			"  base:\n    image: "+pinnedID+"\n    network: {allow: [pypi.org]}"), nil, "environments.base.network",
			[]string{"is for dockerfile environments"}},
		{"empty allowlist", sub("allow: [127.0.0.1:8080, pypi.org]", "allow: []"), nil,
			"environments.mid.network.allow", []string{"is empty; list the hosts"}},
		{"bad host", sub("allow: [127.0.0.1:8080, pypi.org]", "allow: [\"https://pypi.org/simple\"]"), nil,
			"environments.mid.network.allow", []string{"[0]", "no scheme", "such as pypi.org"}},
		{"repeated host", sub("allow: [127.0.0.1:8080, pypi.org]", "allow: [pypi.org, PyPI.org]"), nil,
			"environments.mid.network.allow", []string{"[1]", "twice"}},
		{"from without the argument", buildSuite,
			map[string]string{"envs/mid/Dockerfile": "FROM tender-verifier/pytest\n"}, "environments.mid.dockerfile",
			[]string{"does not start from the environment it names (from: base)", "ARG TENDER_FROM"}},
		{"argument never declared", buildSuite,
			map[string]string{"envs/mid/Dockerfile": "FROM ${TENDER_FROM}\n"}, "environments.mid.dockerfile",
			[]string{"does not start from the environment it names"}},
		{"argument without from", sub("    from: mid\n", ""), nil, "environments.top.dockerfile",
			[]string{"starts FROM ${TENDER_FROM}, but the environment names no from"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := loadNoPanic(t, writeLoadSuite(t, tt.manifest, withFiles(tt.files)))
			var le *LoadError
			if !errors.Is(err, ErrBadSuite) || !errors.As(err, &le) || le.Field != tt.field ||
				strings.Contains(err.Error(), "\n") {
				t.Fatalf("Load: %v (%#v); want one line for field %q", err, le, tt.field)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestEnvSpecBuildKeys: an import's env spec may give a network, and may not name another
// environment (the import names them).
func TestEnvSpecBuildKeys(t *testing.T) {
	doc := EnvironmentDoc{Dockerfile: "envs/x/Dockerfile", Network: &NetworkDoc{Allow: []string{"pypi.org"}}}
	if err := CheckEnvironmentDoc("spec.yaml", "acme/calc version \"1\"", doc); err != nil {
		t.Errorf("a network in a spec: %v", err)
	}
	doc.From = "base"
	if err := CheckEnvironmentDoc("spec.yaml", "e", doc); err == nil || !strings.Contains(err.Error(), "e.from") {
		t.Errorf("a from in a spec: %v; want it refused, naming the field", err)
	}
	doc = EnvironmentDoc{Image: pinnedID, Network: &NetworkDoc{Allow: []string{"pypi.org"}}}
	if err := CheckEnvironmentDoc("spec.yaml", "e", doc); err == nil || !strings.Contains(err.Error(), "e.network") {
		t.Errorf("a network on an image in a spec: %v; want it refused", err)
	}
}
