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
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// bootFiles are the bootstrap's Python files (boot/main.py says what each holds). Only boot/ is
// embedded: the host tests in pytests/ never reach the verifier.
//
//go:embed boot/*.py
var bootFiles embed.FS

// bootOrder is the order the bootstrap's files are joined in: one flat source, whose
// definitions come before start.py calls main(). planterOrder is the planter's, whose
// plantstart.py calls plant_main().
var (
	bootOrder = []string{"main.py", "control.py", "held.py", "asker.py", "stdlib.py", "child.py", "project_copy.py",
		"tripwires.py", "values.py", "start.py"}
	planterOrder = []string{"held.py", "sentinels.py", "plant.py", "plantstart.py"}
)

// bootstrap is the source the verifier runs, through loader, with python3 -c; planter the
// planter's.
var (
	bootstrap = join(bootOrder)
	loader    = load(bootstrap)
	planter   = join(planterOrder)
)

// load is the -c argument that runs src: src zlib-compressed in base64, compiled as "<string>"
// as -c's own source is. Linux takes at most 128 KiB (MAX_ARG_STRLEN) in one argument string;
// the joined source is near that, and a suite's post commands quote the whole argv into one sh
// -c string, so the source cannot travel as it is. base64 holds no quote and no backslash.
func load(src string) string {
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	w.Write([]byte(src)) // a bytes.Buffer takes every write
	w.Close()
	return "import zlib, binascii\nexec(compile(zlib.decompress(binascii.a2b_base64(b'" +
		base64.StdEncoding.EncodeToString(z.Bytes()) + "')), '<string>', 'exec'))\n"
}

func join(order []string) string {
	var b strings.Builder
	for i, name := range order {
		data, err := bootFiles.ReadFile("boot/" + name)
		if err != nil {
			panic(err) // every name of the orders is embedded; TestBootSource checks both ways
		}
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.Write(data)
	}
	return b.String()
}

// Copies asked of the planter for each required test whose assertions are not all held (one
// whose every assertion is held gets none): Twins twins and a negation.
const (
	Twins     = 1
	Negations = 1
)

// PlantInput is what the planter reads on its standard input: the required test IDs, and the
// copies to make of each.
type PlantInput struct {
	IDs     []string `json:"ids"`
	Twins   int      `json:"twins"`
	Negated int      `json:"negated"`
}

// PlantFiles are the planter step's files (sandbox.Step.Files): its source, and its input as
// "stdin". Without copies the planter makes no twin and no negation (the held comparisons are
// planted all the same): validation's checks on the base commit.
func PlantFiles(ids []string, copies bool) map[string][]byte {
	in := PlantInput{IDs: ids}
	if copies {
		in.Twins, in.Negated = Twins, Negations
	}
	data, err := json.Marshal(in)
	if err != nil {
		panic(err) // strings and ints always marshal
	}
	return map[string][]byte{"plant.py": []byte(planter), "stdin": data}
}

// Modules are the files of test IDs (what comes before "::"), sorted and once each: the
// modules the planter rewrites, which a backend must write as Tender's own user
// (sandbox.Spec.Evaluator) for the planter to be able to.
func Modules(ids []string) []string {
	var out []string
	for _, id := range ids {
		file, _, _ := strings.Cut(id, "::")
		out = append(out, file)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// PlantCommand is the planter step's argv: its source under the image's test interpreter with
// -I -B, run as Tender's own user in the verifier; {step} and {workspace} are the backend's.
func PlantCommand(python string) []string {
	return []string{python, "-I", "-B", "{step}/plant.py", "{workspace}"}
}

// Planted is what the planter wrote: the plan Tender keeps, and what only the bootstrap's
// parent may hold besides (the held literals).
type Planted struct {
	Plan *Plan
	// Error is the stage the planter gave up at, when it did ("stage plan").
	Error string
	held  json.RawMessage
	ids   []string
	paths []string
	files []string
}

// ParsePlant reads the planter's output. An output that does not parse is an error: the
// planter ran as Tender's user, and nothing else wrote there.
func ParsePlant(out []byte) (*Planted, error) {
	var raw struct {
		Public  *Plan `json:"public"`
		Private struct {
			Held json.RawMessage `json:"held"`
		} `json:"private"`
		IDs   []string                      `json:"ids"`
		Paths []string                      `json:"paths"`
		Files []string                      `json:"files"`
		Error *struct{ Stage, Type string } `json:"error"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, fmt.Errorf("the planter's output does not parse: %w", err)
	}
	if raw.Error != nil {
		return &Planted{Error: "stage " + raw.Error.Stage + " (" + raw.Error.Type + ")"}, nil
	}
	if raw.Public == nil || raw.Public.V != 2 {
		return nil, fmt.Errorf("the planter's output has no plan of version 2")
	}
	return &Planted{Plan: raw.Public, held: raw.Private.Held, ids: raw.IDs, paths: raw.Paths, files: raw.Files}, nil
}

// Config is what the bootstrap reads on its standard input.
type Config struct {
	Nonce string `json:"nonce"`
	// IDs are the tests to run: the required ones and the planter's copies.
	IDs     []string `json:"ids"`
	Plugins []string `json:"plugins,omitempty"`
	// PythonPath are workspace-relative directories appended to sys.path; Paths absolute ones
	// the planter found (the test modules' base directories, as pytest's append mode has them).
	PythonPath []string `json:"python_path,omitempty"`
	Paths      []string `json:"paths,omitempty"`
	// Watch are the test modules the tripwires watch.
	Watch []string `json:"watch,omitempty"`
	// Held are the held literals, by token: the parent compares with them.
	Held json.RawMessage `json:"held,omitempty"`
	// PytestOptions are the suite's ini options, -o KEY=VALUE pairs, put after Tender's own.
	PytestOptions []string `json:"pytest_options,omitempty"`
	// ProjectCopy is the image's own copy of the project (an editable install's /testbed),
	// which the child takes off sys.path before anything else is imported (project_copy.py).
	ProjectCopy string `json:"project_copy,omitempty"`
}

// NewConfig makes the configuration of one check, with a fresh nonce; Plant completes it.
func NewConfig(ids, plugins, pythonPath []string) Config {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return Config{Nonce: hex.EncodeToString(b), IDs: ids, Plugins: plugins, PythonPath: pythonPath}
}

// WithPlant is the configuration with what the planter did: its copies to run, the paths it
// found, the modules to watch and the held literals.
func (c Config) WithPlant(p *Planted) Config {
	c.IDs = append(slices.Clone(c.IDs), p.ids...)
	c.Paths, c.Watch, c.Held = p.paths, p.files, p.held
	return c
}

// FromPlant is the bootstrap's standard input made from the planter's output: the
// configuration with what the planter did (a sandbox.Step's Stdin). The planter giving up is an
// error: no test may run unplanted.
func (c Config) FromPlant(out []byte) ([]byte, error) {
	p, err := ParsePlant(out)
	if err != nil {
		return nil, err
	}
	if p.Error != "" {
		return nil, fmt.Errorf("the planter could not plant the sentinels (%s)", p.Error)
	}
	return c.WithPlant(p).Stdin(), nil
}

// Stdin is the configuration as the bootstrap reads it.
func (c Config) Stdin() []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // strings and ints always marshal
	}
	return b
}

// Command is the verifier's argv: the bootstrap (its loader) under python3 -I (no PYTHON*
// variable, no user site, no script directory on sys.path) and -B (no bytecode written).
func Command() []string {
	return CommandWith("python3")
}

// CommandWith is Command with the image's test interpreter (a conda environment's python).
func CommandWith(python string) []string {
	return []string{python, "-I", "-B", "-c", loader}
}

// ProjectCopySource is the Python source of drop_project_copy (boot/project_copy.py), for the
// baseline collection, which must import what the checks import.
func ProjectCopySource() string {
	data, err := bootFiles.ReadFile("boot/project_copy.py")
	if err != nil {
		panic(err) // embedded
	}
	return string(data)
}
