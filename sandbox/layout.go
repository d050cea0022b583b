package sandbox

import (
	"sort"
	"strings"
)

// SafePath is the only PATH a verifier sees.
const SafePath = "/usr/local/bin:/usr/bin:/bin"

// Layout is where the Spec's tokens point inside one backend.
type Layout struct {
	Workspace, Tender, JUnit, Assets, Home string
}

// NewLayout puts the JUnit report, the assets and HOME under tender, outside the workspace
// the candidate's tree is written to.
func NewLayout(workspace, tender string) Layout {
	return Layout{
		Workspace: workspace,
		Tender:    tender,
		JUnit:     tender + "/out/junit.xml",
		Assets:    tender + "/assets",
		Home:      tender + "/home",
	}
}

// Expand replaces the tokens in every argv element. It is a plain replace: no shell, no
// globbing, no other variables.
func (l Layout) Expand(argv []string) []string {
	r := strings.NewReplacer("{workspace}", l.Workspace, "{tender}", l.Tender, "{junit}", l.JUnit, "{assets}", l.Assets)
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Replace(a)
	}
	return out
}

// Environ is the complete environment of the command: a safe PATH and HOME, the TENDER_*
// variables, and the suite's own variables, sorted. Nothing comes from the host.
func (l Layout) Environ(extra map[string]string) []string {
	env := []string{
		"PATH=" + SafePath,
		"HOME=" + l.Home,
		"TENDER_WORKSPACE=" + l.Workspace,
		"TENDER_DIR=" + l.Tender,
		"TENDER_JUNIT=" + l.JUnit,
		"TENDER_ASSETS=" + l.Assets,
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}
