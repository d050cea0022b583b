// Package pyboot runs pytest inside a verifier through Tender's bootstrap (the Python of boot/), and
// reads back what the bootstrap reported: where it put the forgery sentinels, the tripwires
// the code under test hit, and how the test process ended. It decides whether a pytest
// report can be believed; it runs nothing itself and never trusts a line of the verifier's
// output that does not carry the check's nonce.
//
// The protocol: the bootstrap reads a JSON Config on its standard input (the required test
// IDs never appear on a command line or in a file); its parent process, which never runs the
// candidate's code, writes "TENDER-CONTROL <nonce> <kind> <json>" lines to the verifier's
// stdout: one plan, any hits, one end. The test run's own output goes to stderr.
package pyboot

import (
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// bootFiles are the bootstrap's Python files (boot/main.py says what each holds). Only boot/ is
// embedded: the host tests in pytests/ never reach the verifier.
//
//go:embed boot/*.py
var bootFiles embed.FS

// bootOrder is the order the files are joined in: one flat source, whose definitions come
// before start.py calls main().
var bootOrder = []string{"main.py", "control.py", "sentinels.py", "child.py", "tripwires.py", "start.py"}

// bootstrap is the source the verifier runs with python3 -c.
var bootstrap = joinBoot()

func joinBoot() string {
	var b strings.Builder
	for i, name := range bootOrder {
		data, err := bootFiles.ReadFile("boot/" + name)
		if err != nil {
			panic(err) // every name of bootOrder is embedded; TestBootSource checks both ways
		}
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.Write(data)
	}
	return b.String()
}

// Sentinel counts asked of the bootstrap for each check. It makes fewer when the pair's
// tests offer fewer (a mutant needs a top-level equality assertion against a literal).
const (
	Twins     = 2
	Mutants   = 3
	Nears     = 6
	Negations = 3
)

// Config is what the bootstrap reads on its standard input.
type Config struct {
	Nonce   string   `json:"nonce"`
	IDs     []string `json:"ids"`
	Twins   int      `json:"twins"`
	Mutants int      `json:"mutants"`
	Near    int      `json:"near"`
	Negated int      `json:"negated"`
	// NegatedAfter puts each negation right after its original instead of at random: in the
	// regression check, where a test that cannot run twice must run first to keep its verdict.
	NegatedAfter bool     `json:"negated_after,omitempty"`
	Plugins      []string `json:"plugins,omitempty"`
	PythonPath   []string `json:"python_path,omitempty"`
}

// NewConfig makes the configuration of one check, with a fresh nonce.
func NewConfig(ids, plugins, pythonPath []string) Config {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return Config{Nonce: hex.EncodeToString(b), IDs: ids, Twins: Twins, Mutants: Mutants, Near: Nears, Negated: Negations, Plugins: plugins, PythonPath: pythonPath}
}

// Stdin is the configuration as the bootstrap reads it.
func (c Config) Stdin() []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // strings and ints always marshal
	}
	return b
}

// Command is the verifier's argv: the bootstrap under python -I (no PYTHON* variable, no
// user site, no script directory on sys.path) and -B (no bytecode written).
func Command() []string {
	return []string{"python3", "-I", "-B", "-c", bootstrap}
}
