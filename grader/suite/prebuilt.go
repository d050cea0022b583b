package suite

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Prebuilt instance images: an environment whose image differs per pair, named by a template
// (image_template: "REGISTRY/sweb.eval.x86_64.{instance}@sha256:{digest}") and a digest per
// pair (digests: {PAIR_ID: sha256:...}), as SWE-bench's harness names its instance images.
// Such images keep the project at its own place with an editable install (/testbed) and the
// test interpreter in an environment of its own (a conda env's bin/python): python names the
// interpreter, and project_copy the image's copy of the project, which the pytest bootstrap
// takes off sys.path so that the workspace's code is what the tests import.
//
// The loader turns the template into one environment per pair that uses it, named
// TEMPLATE@PAIR (a name no suite can give, as '@' is not allowed in one), each pinned to its
// image like an image environment; the pair runs in that one. The image must be on the engine:
// it is never pulled.

// EnvImageTemplate is the kind of an environment named by image_template, and of the
// per-pair environments made from it.
const EnvImageTemplate = "image_template"

var (
	reTemplate   = regexp.MustCompile(`^[a-z0-9{][a-z0-9._/:{}-]{0,254}@(sha256:)?\{digest\}$`)
	rePlaceholer = regexp.MustCompile(`\{[^{}]*\}`)
	reDigest     = regexp.MustCompile(`^(sha256:)?([0-9a-f]{64})$`)
	// reInterpreter is an absolute path without spaces, quotes or glob characters.
	reInterpreter = regexp.MustCompile(`^(/[A-Za-z0-9._+-]+)+$`)
)

// templatePlaceholders are what an image_template may hold besides {digest}: the pair's id in
// lower case (the harness's local tag), and the same with "__" spelled "_1776_" (the name of
// its published images).
var templatePlaceholders = []string{"{instance}", "{instance_1776}", "{digest}"}

// templateEnv reads an image_template environment and its digests.
func (l *loader) templateEnv(field string, env *Environment, r EnvironmentDoc) error {
	if !reTemplate.MatchString(r.ImageTemplate) {
		return l.errf(field+".image_template", "%q is not an image name ending in @sha256:{digest}; write it like "+
			"registry.example/sweb.eval.x86_64.{instance}@sha256:{digest}", r.ImageTemplate)
	}
	for _, ph := range rePlaceholer.FindAllString(r.ImageTemplate, -1) {
		if !slices.Contains(templatePlaceholders, ph) {
			return l.errf(field+".image_template", "%s is not a placeholder; use {instance}, {instance_1776} and {digest}",
				ph)
		}
	}
	if len(r.Digests) == 0 {
		return l.errf(field+".digests", "is missing; give each pair's image digest, {PAIR_ID: sha256:<64 hex>}")
	}
	env.Digests = map[string]string{}
	for _, id := range slices.Sorted(maps.Keys(r.Digests)) {
		g := reDigest.FindStringSubmatch(r.Digests[id])
		if g == nil {
			return l.errf(field+".digests."+id, "%q is not a digest; write sha256:<64 hex>", r.Digests[id])
		}
		env.Digests[id] = "sha256:" + g[2]
	}
	env.Kind, env.Template, env.Ref = EnvImageTemplate, r.ImageTemplate, r.ImageTemplate
	return nil
}

// interpreterSettings reads python and project_copy.
func (l *loader) interpreterSettings(field string, env *Environment, r EnvironmentDoc, runner string) error {
	if r.Python != "" {
		if !reInterpreter.MatchString(r.Python) || path.Clean(r.Python) != r.Python {
			return l.errf(field+".python", "%q is not a clean absolute path; give the interpreter's path, such as "+
				"/opt/miniconda3/envs/testbed/bin/python", r.Python)
		}
		env.Python = r.Python
	}
	if r.ProjectCopy != "" {
		if !reInterpreter.MatchString(r.ProjectCopy) || path.Clean(r.ProjectCopy) != r.ProjectCopy {
			return l.errf(field+".project_copy", "%q is not a clean absolute directory other than /; give where the "+
				"image keeps its copy of the project, such as /testbed", r.ProjectCopy)
		}
		env.ProjectCopy = r.ProjectCopy
	}
	if runner != RunnerPytest && (env.Python != "" || env.ProjectCopy != "") {
		return l.errf(field, "python and project_copy are for runner: pytest only (the bootstrap uses them); remove them")
	}
	return nil
}

// instanceImages gives each pair of an image_template environment an environment of its own,
// pinned to its image.
func (l *loader) instanceImages(s *Suite) error {
	for i, p := range s.Pairs {
		tmpl := s.Environments[p.Environment]
		if tmpl == nil || tmpl.Template == "" {
			continue
		}
		digest, ok := tmpl.Digests[p.ID]
		if !ok {
			return l.errf(fmt.Sprintf("pairs[%d]", i), "runs in environment %s, whose digests have no entry for %s; "+
				"add %s: sha256:<64 hex> to environments.%s.digests", tmpl.Name, p.ID, p.ID, tmpl.Name)
		}
		env := *tmpl
		env.Name, env.Template, env.Digests, env.Instance = tmpl.Name+"@"+p.ID, "", nil, p.ID
		env.Ref, env.Digest = expandTemplate(tmpl.Template, p.ID, digest), digest
		if !reImageName.MatchString(env.Ref) {
			return l.errf(fmt.Sprintf("pairs[%d]", i), "environment %s names the image %q for it, which is not an "+
				"image name (lower-case letters, digits, '.', '_', '-', '/', ':'); change image_template", tmpl.Name,
				env.Ref)
		}
		s.Environments[env.Name] = &env
		p.Environment = env.Name
	}
	return nil
}

// expandTemplate names a pair's image.
func expandTemplate(tmpl, id, digest string) string {
	low := strings.ToLower(id)
	hex := strings.TrimPrefix(digest, "sha256:")
	r := strings.NewReplacer("{instance_1776}", strings.ReplaceAll(low, "__", "_1776_"), "{instance}", low,
		"sha256:{digest}", "sha256:"+hex, "{digest}", "sha256:"+hex)
	return r.Replace(tmpl)
}
