package suite

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
	v := Verifier{
		Image:   r.Image,
		Runner:  r.Runner,
		Command: r.Command,
		Setup:   r.Setup,
		Post:    r.Post,
		CPUs:    r.CPUs,
		Pids:    r.Pids,
		Env:     r.Env,
		PassEnv: r.PassEnv,
		Plugins: r.Plugins,
		Ini:     r.Ini,
		Timeout: DefaultTimeout,
		Memory:  DefaultMemory,
		Disk:    DefaultDisk,
	}
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
			return v, l.errf(
				"verifier.command",
				"is missing; runner: command needs an argv that writes JUnit to {junit}",
			)
		}
	default:
		return v, l.errf("verifier.runner", "%q is not a runner; use pytest, go or command", v.Runner)
	}
	if err := l.argvs("verifier.setup", v.Setup); err != nil {
		return v, err
	}
	if err := l.argvs("verifier.post", v.Post); err != nil {
		return v, err
	}
	var err error
	if v.PythonPath, err = l.pythonPath("verifier.python_path", r.PythonPath); err != nil {
		return v, err
	}
	if len(v.PythonPath) > 0 && v.Runner != RunnerPytest {
		return v, l.errf("verifier.python_path", "is for runner: pytest only (the bootstrap applies it); remove it")
	}
	if r.Timeout != "" {
		if v.Timeout, err = time.ParseDuration(r.Timeout); err != nil || v.Timeout < time.Second ||
			v.Timeout > 24*time.Hour {
			return v, l.errf(
				"verifier.timeout",
				"%q is not a duration between 1s and 24h; write it like 120s or 5m",
				r.Timeout,
			)
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
			return l.errf(
				"verifier.env."+k,
				"is not a usable variable name (letters, digits, '_'; TENDER_* is reserved)",
			)
		}
		if err := l.pythonVar("verifier.env."+k, k, v.Runner); err != nil {
			return err
		}
	}
	for i, k := range v.PassEnv {
		if !reEnv.MatchString(k) || strings.HasPrefix(k, "TENDER_") {
			return l.errf(
				fmt.Sprintf("verifier.pass_env[%d]", i),
				"%q is not a usable variable name (TENDER_* is reserved)",
				k,
			)
		}
		if err := l.pythonVar(fmt.Sprintf("verifier.pass_env[%d]", i), k, v.Runner); err != nil {
			return err
		}
	}
	if err := l.plugins("verifier.plugins", v.Plugins, v.Runner); err != nil {
		return err
	}
	return l.ini("verifier.ini", v.Ini, v.Runner)
}

// pythonVar refuses PYTHON* variables for the pytest runner: the bootstrap runs under
// python3 -I, which ignores them, so a suite that sets one would be silently wrong.
func (l *loader) pythonVar(field, k, runner string) error {
	if runner != RunnerPytest || !strings.HasPrefix(strings.ToUpper(k), "PYTHON") {
		return nil
	}
	if strings.EqualFold(k, "PYTHONPATH") {
		return l.errf(
			field,
			"is ignored (Python runs with -I); list the directories in verifier.python_path instead, e.g. python_path: [src]",
		)
	}
	return l.errf(
		field,
		"is ignored or overridden: Tender sets the interpreter's flags itself (-I, -B); remove it (for sys.path use verifier.python_path)",
	)
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
