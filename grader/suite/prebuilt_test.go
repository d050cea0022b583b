package suite

import (
	"strings"
	"testing"
)

const hexA, hexB = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

// prebuiltSuite has a template environment for two pairs (one named through its repository)
// and a pair in the suite's verifier.
const prebuiltSuite = `name: t
version: "1"
environments:
  sweb:
    image_template: "reg.example/sweb.eval.x86_64.{instance}@sha256:{digest}"
    digests: {Acme__calc-1: "sha256:` + hexA + `", acme__calc-2: "` + hexB + `", unused: "sha256:` + hexB + `"}
    python: /opt/miniconda3/envs/testbed/bin/python
    project_copy: /testbed
    python_path: []
repositories:
  r: {fast_export: repos/r.fi, environment: sweb}
pairs:
  - {id: Acme__calc-1, repository: r, base_commit: 0123456789abcdef0123456789abcdef01234567,
     issue: pairs/p1/issue.md, patch: pairs/p1/patch.diff, fail_to_pass: ["tests/test_a.py::test_a"]}
  - {id: acme__calc-2, repository: r, environment: sweb, base_commit: 0123456789abcdef0123456789abcdef01234567,
     issue: pairs/p1/issue.md, patch: pairs/p1/patch.diff, fail_to_pass: ["tests/test_a.py::test_a"]}
`

// TestLoadPrebuiltImages: each pair of an image_template environment runs in its own image,
// named by the template (the id lower-cased) and pinned to its digest, with the interpreter and
// the project copy; a change of digest changes that pair's input digest only.
func TestLoadPrebuiltImages(t *testing.T) {
	s, err := Load(writeLoadSuite(t, prebuiltSuite, nil), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Acme__calc-1": "reg.example/sweb.eval.x86_64.acme__calc-1@sha256:" + hexA,
		"acme__calc-2": "reg.example/sweb.eval.x86_64.acme__calc-2@sha256:" + hexB,
	}
	for _, p := range s.Pairs {
		v := s.VerifierFor(p)
		env := s.Environments[p.Environment]
		if v.Image != want[p.ID] || p.Environment != "sweb@"+p.ID || env.Kind != EnvImageTemplate ||
			v.Interpreter() != "/opt/miniconda3/envs/testbed/bin/python" || v.ProjectCopy != "/testbed" ||
			s.ImageLabel(p) != want[p.ID] {
			t.Errorf("%s: environment %s, image %s, python %s, copy %s; want %s in its own environment", p.ID,
				p.Environment, v.Image, v.Interpreter(), v.ProjectCopy, want[p.ID])
		}
	}
	if used := s.UsedEnvironments(s.Pairs); len(used) != 2 || used[0].Template != "" {
		t.Errorf("used environments %v: want the two pairs' own", used)
	}
	other, err := Load(writeLoadSuite(t, strings.Replace(prebuiltSuite, `acme__calc-2: "`+hexB, `acme__calc-2: "`+hexA,
		1), nil), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if other.Pairs[0].InputDigest != s.Pairs[0].InputDigest || other.Pairs[1].InputDigest == s.Pairs[1].InputDigest {
		t.Error("a pair's image digest must change its input digest, and only its")
	}
	plain, err := Load(writeLoadSuite(t, goodSuite, nil), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := plain.VerifierFor(plain.Pairs[0]); v.Interpreter() != "python3" || v.ProjectCopy != "" {
		t.Errorf("the default verifier runs %s with copy %q; want python3 and none", v.Interpreter(), v.ProjectCopy)
	}
}

// TestMalformedPrebuiltImages: every bad template, digest, interpreter or copy is one line
// naming its field and the fix.
func TestMalformedPrebuiltImages(t *testing.T) {
	sub := func(old, new string) string { return strings.Replace(prebuiltSuite, old, new, 1) }
	for _, tt := range []struct{ name, manifest, want string }{
		{"no digest placeholder", sub("@sha256:{digest}", "@sha256:"+hexA),
			`environments.sweb.image_template: "reg.example/sweb.eval.x86_64.{instance}@sha256:` + hexA +
				`" is not an image name ending in @sha256:{digest}`},
		{"unknown placeholder", sub("{instance}", "{repo}"), "environments.sweb.image_template: {repo} is not a placeholder"},
		{"upper case", sub("reg.example", "Reg.example"), "is not an image name ending in @sha256:{digest}"},
		{"no digests", strings.Replace(sub(`    digests: {`, `    plugins: {`), "plugins: {Acme", "ini: {Acme", 1), "environments.sweb.digests: is missing; give each pair's image digest"},
		{"bad digest", sub(`"sha256:`+hexA, `"sha256:abc`), `environments.sweb.digests.Acme__calc-1: "sha256:abc" is not a digest`},
		{"pair without digest", sub("Acme__calc-1: ", "Other-1: "),
			"pairs[0]: runs in environment sweb, whose digests have no entry for Acme__calc-1; add Acme__calc-1: sha256:"},
		{"digests without template", sub(`    image_template: "reg.example/sweb.eval.x86_64.{instance}@sha256:{digest}"`,
			"    image: "+pinnedID), "environments.sweb.digests: is for image_template only"},
		{"relative python", sub("/opt/miniconda3/envs/testbed/bin/python", "bin/python"),
			`environments.sweb.python: "bin/python" is not a clean absolute path`},
		{"python with ..", sub("/opt/miniconda3/envs/testbed/bin/python", "/opt/../bin/python"), "is not a clean absolute path"},
		{"python with a space", sub("/opt/miniconda3/envs/testbed/bin/python", `"/opt/x y/python"`), "is not a clean absolute path"},
		{"copy is /", sub("project_copy: /testbed", "project_copy: /"),
			`environments.sweb.project_copy: "/" is not a clean absolute directory other than /`},
		{"copy not clean", sub("project_copy: /testbed", "project_copy: /testbed/"), "is not a clean absolute directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writeLoadSuite(t, tt.manifest, nil), LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %v\nwant one line with %q", err, tt.want)
			}
		})
	}
}
