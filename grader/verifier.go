package grader

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Verifier defaults.
const (
	DefaultImage   = "tender-verifier/pytest"
	DefaultTimeout = 120 * time.Second
	DefaultCPUs    = 1.0
	DefaultMemory  = 1 << 30
	DefaultPids    = 256
	DefaultDisk    = 256 << 20
)

func (l *loader) verifier(r VerifierDoc) (Verifier, error) {
	v := Verifier{Image: r.Image, Runner: r.Runner, Command: r.Command, Setup: r.Setup, Post: r.Post, CPUs: r.CPUs, Pids: r.Pids,
		Env: r.Env, PassEnv: r.PassEnv, Plugins: r.Plugins, Timeout: DefaultTimeout, Memory: DefaultMemory, Disk: DefaultDisk}
	if v.Runner == "" {
		v.Runner = RunnerPytest
	}
	if v.Image == "" {
		v.Image = DefaultImage
		if v.Runner == RunnerGo {
			v.Image = "tender-verifier/go"
		}
	}
	switch v.Runner {
	case RunnerPytest, RunnerGo:
		if len(v.Command) > 0 {
			return v, l.errf("verifier.command", "is only for runner: command; remove it or set runner: command")
		}
	case RunnerCommand:
		if len(v.Command) == 0 {
			return v, l.errf("verifier.command", "is missing; runner: command needs an argv that writes JUnit to {junit}")
		}
	default:
		return v, l.errf("verifier.runner", "%q is not a runner; use pytest, go or command", v.Runner)
	}
	for field, list := range map[string][][]string{"verifier.setup": v.Setup, "verifier.post": v.Post} {
		for i, argv := range list {
			if len(argv) == 0 || argv[0] == "" {
				return v, l.errf(fmt.Sprintf("%s[%d]", field, i), "is empty; give an argv such as [\"make\", \"build\"]")
			}
		}
	}
	var err error
	if r.Timeout != "" {
		if v.Timeout, err = time.ParseDuration(r.Timeout); err != nil || v.Timeout < time.Second || v.Timeout > 24*time.Hour {
			return v, l.errf("verifier.timeout", "%q is not a duration between 1s and 24h; write it like 120s or 5m", r.Timeout)
		}
	}
	if v.CPUs == 0 {
		v.CPUs = DefaultCPUs
	}
	if !(v.CPUs >= 0.1 && v.CPUs <= 64) { // NaN too
		return v, l.errf("verifier.cpus", "%v is out of range; give a number of CPUs from 0.1 to 64", v.CPUs)
	}
	if v.Pids == 0 {
		v.Pids = DefaultPids
	}
	if v.Pids < 16 || v.Pids > 65536 {
		return v, l.errf("verifier.pids", "%d is out of range; give a process limit from 16 to 65536", v.Pids)
	}
	if v.Memory, err = l.size("verifier.memory", r.Memory, DefaultMemory, 32<<20); err != nil {
		return v, err
	}
	if v.Disk, err = l.size("verifier.disk", r.Disk, DefaultDisk, 16<<20); err != nil {
		return v, err
	}
	return v, l.checkEnv(v)
}

func (l *loader) checkEnv(v Verifier) error {
	for _, k := range slices.Sorted(maps.Keys(v.Env)) {
		if !reEnv.MatchString(k) || strings.HasPrefix(k, "TENDER_") {
			return l.errf("verifier.env."+k, "is not a usable variable name (letters, digits, '_'; TENDER_* is reserved)")
		}
	}
	for i, k := range v.PassEnv {
		if !reEnv.MatchString(k) || strings.HasPrefix(k, "TENDER_") {
			return l.errf(fmt.Sprintf("verifier.pass_env[%d]", i), "%q is not a usable variable name (TENDER_* is reserved)", k)
		}
	}
	for i, p := range v.Plugins {
		if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`).MatchString(p) {
			return l.errf(fmt.Sprintf("verifier.plugins[%d]", i), "%q is not a plugin module name", p)
		}
	}
	return nil
}

var reSize = regexp.MustCompile(`^([0-9]+)\s*(|B|KiB|MiB|GiB|K|M|G|KB|MB|GB)$`)

// size parses "512MiB", "1GiB", "1G" (powers of 1024) or a plain byte count.
func (l *loader) size(field, s string, def, min int64) (int64, error) {
	if s == "" {
		return def, nil
	}
	g := reSize.FindStringSubmatch(strings.TrimSpace(s))
	if g == nil {
		return 0, l.errf(field, "%q is not a size; write it like 512MiB or 1GiB", s)
	}
	n, err := strconv.ParseInt(g[1], 10, 64)
	shift := map[string]uint{"": 0, "B": 0, "K": 10, "KB": 10, "KiB": 10, "M": 20, "MB": 20, "MiB": 20, "G": 30, "GB": 30, "GiB": 30}[g[2]]
	if err != nil || n > (1<<62)>>shift || n<<shift < min {
		return 0, l.errf(field, "%q is out of range; give at least %d MiB", s, min>>20)
	}
	return n << shift, nil
}
