package restore

import (
	"bytes"
	"fmt"

	"github.com/tender-grader/tender/report"
)

// configFile is one mixed-purpose config at the repository root and how to reset its
// test-runner section.
type configFile struct {
	name    string // path at the root
	section string // as shown in Outcome.Sections
	// hasSection reports whether data (one version of the file) has a test-runner section.
	hasSection func(data []byte) (bool, error)
	// reset returns cand with its test-runner section replaced by base's (base nil: no file in
	// the base), or a problem that makes the file unverifiable.
	reset func(base, cand []byte) ([]byte, string)
}

var configFiles = []configFile{
	{name: "pyproject.toml", section: "[tool.pytest*]", hasSection: tomlHasPytest, reset: resetTOML},
	{name: "setup.cfg", section: "[tool:pytest]", hasSection: iniHas("tool:pytest"), reset: iniReset("tool:pytest")},
	{name: "tox.ini", section: "[pytest]", hasSection: iniHas("pytest"), reset: iniReset("pytest")},
}

func (r *run) resetConfigs() error {
	for _, c := range configFiles {
		if err := r.resetConfig(c); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) resetConfig(c configFile) error {
	var base []byte
	if r.baseSet[c.name] {
		b, err := r.base.ReadFile(c.name)
		if err != nil {
			return fmt.Errorf("reading base file %s: %w", c.name, err)
		}
		base = b
	}
	fi, err := r.ws.lstat(c.name)
	if err != nil {
		return err
	}
	switch {
	case fi == nil && base == nil:
		return nil
	case fi == nil:
		return r.deletedConfig(c, base)
	case !fi.Mode().IsRegular():
		r.unverifiable(c, fmt.Sprintf("the candidate left a %s at %s", kindOf(fi.Mode()), c.name))
		return nil
	}
	cand, err := r.ws.root.ReadFile(c.name)
	if err != nil {
		return err
	}
	if base != nil && bytes.Equal(base, cand) {
		return nil
	}
	out, problem := c.reset(base, cand)
	if problem != "" {
		r.unverifiable(c, problem)
		return nil
	}
	if bytes.Equal(out, cand) {
		return nil
	}
	if err := r.ws.writeFile(c.name, out, fi.Mode().Perm()); err != nil {
		return fmt.Errorf("writing %s: %w", c.name, err)
	}
	r.out.Sections = append(r.out.Sections, c.name+" "+c.section)
	return nil
}

// deletedConfig: the candidate deleted the file. Fine unless the base had the section.
func (r *run) deletedConfig(c configFile, base []byte) error {
	has, err := c.hasSection(base)
	switch {
	case err != nil:
		r.unverifiable(c, fmt.Sprintf("the candidate deleted %s and the base file does not parse (%v)", c.name, err))
	case has:
		r.unverifiable(c, fmt.Sprintf("the candidate deleted %s, whose base has a %s section", c.name, c.section))
	}
	return nil
}

func (r *run) unverifiable(c configFile, detail string) {
	r.violate(
		report.CodeConfigUnverifiable,
		c.name,
		fmt.Sprintf("%s %s cannot be reset verifiably: %s", c.name, c.section, detail),
	)
}
