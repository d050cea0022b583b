package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// The bundle layout. report owns it: every other package asks these names and functions, and
// never spells a bundle path itself. Names are bundle-relative and slash-separated.
const (
	ResultsJSONL    = "results.jsonl"
	ResultsJSON     = "results.json"
	SWEBenchSummary = "swebench-summary.json"
	TenderJUnit     = "tender-results.xml"
	SummaryMarkdown = "summary.md"
	PairsDir        = "pairs"
	PairReport      = "report.json"
	// ValidationJSON is what `tender validate --run --out DIR` writes: one entry an instance.
	ValidationJSON = "validation.json"
	// EnvironmentsDir holds, per environment, how its image was made where the image alone
	// does not show it: environments/<name>/.
	EnvironmentsDir = "environments"
)

// ErrUnsafePairID marks a pair ID that cannot name a directory safely.
var ErrUnsafePairID = errors.New("report: unsafe pair id")

var reID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidID is the one rule for the names Tender turns into directories and labels: suite
// names, repository IDs, pair IDs and SWE-bench instance IDs. 1-128 letters, digits, '.', '_'
// or '-', starting with a letter or digit, so "." and ".." and hidden names are out.
func ValidID(s string) bool { return reID.MatchString(s) }

func checkPairID(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("%w: %q", ErrUnsafePairID, id)
	}
	return nil
}

// PairDir is the directory of a pair's files: pairs/<id>.
func PairDir(id string) string { return path.Join(PairsDir, id) }

// CheckLog is the bounded output of one check of a pair: pairs/<id>/<check>.log.
func CheckLog(id, check string) string { return path.Join(PairDir(id), check+".log") }

// CheckJUnit is the raw report of one check of a pair: pairs/<id>/<check>.junit.xml.
func CheckJUnit(id, check string) string { return path.Join(PairDir(id), check+".junit.xml") }

// BaselineJSON is the baseline collection of a pair's instance (base commit with the test
// patch, no candidate code): pairs/<id>/baseline.json.
func BaselineJSON(id string) string { return path.Join(PairDir(id), "baseline.json") }

// BaselineLog is the baseline collection's bounded output: pairs/<id>/baseline.log.
func BaselineLog(id string) string { return path.Join(PairDir(id), "baseline.log") }

// BuildNetworkJSON is the record of what an environment's image build fetched through its
// allowlist (the image's tender.build.network label): environments/<name>/build-network.json.
func BuildNetworkJSON(env string) string {
	return path.Join(EnvironmentsDir, env, "build-network.json")
}

// WriteBuildNetwork writes an environment's build record (JSON) into the bundle directory dir,
// indented for people, replacing one a resumed run wrote.
func WriteBuildNetwork(dir, env string, record []byte) error {
	if !ValidID(env) {
		return fmt.Errorf("report: environment name %q cannot name a directory", env)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, record, "", "  "); err != nil {
		return fmt.Errorf("report: the build record of environment %s is not JSON: %w", env, err)
	}
	b.WriteByte('\n')
	name := filepath.Join(dir, filepath.FromSlash(BuildNetworkJSON(env)))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// sharedFile reports whether a bundle file describes the batch's environments rather than a
// pair: shards that graded with the same images hold the same one.
func sharedFile(name string) bool { return strings.HasPrefix(name, EnvironmentsDir+"/") }

// Aggregates are the batch-level files rewritten when shards are merged; every file under
// PairsDir belongs to one pair and is copied as it is.
func Aggregates() []string {
	return []string{ResultsJSON, ResultsJSONL, SummaryMarkdown, SWEBenchSummary, TenderJUnit}
}

// maxResultsJSON caps what ReadResultsJSON reads: a bundle may come from elsewhere.
const maxResultsJSON = 256 << 20

// ReadResultsJSON reads dir/results.json strictly: one JSON document, no unknown fields, the
// schema this build writes, and pair IDs that are safe directory names.
func ReadResultsJSON(dir string) (Results, error) {
	var res Results
	name := filepath.Join(dir, ResultsJSON)
	f, err := os.Open(name)
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrResults, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxResultsJSON+1))
	if err != nil {
		return res, fmt.Errorf("%w: %s: %w", ErrResults, name, err)
	}
	if len(b) > maxResultsJSON {
		return res, fmt.Errorf("%w: %s is over %d bytes", ErrResults, name, maxResultsJSON)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return res, fmt.Errorf("%w: %s: %w", ErrResults, name, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return res, fmt.Errorf("%w: %s holds more than one JSON document", ErrResults, name)
	}
	if res.Schema != SchemaVersion {
		return res, fmt.Errorf("%w: %s has schema %q; this build reads %q", ErrResults, name, res.Schema, SchemaVersion)
	}
	for _, p := range res.Pairs {
		if err := checkPairID(p.ID); err != nil {
			return res, fmt.Errorf("%w: %s: %w", ErrResults, name, err)
		}
	}
	return res, nil
}
