package suite

import (
	"fmt"
	"strings"

	"github.com/tender-grader/tender/report"
)

// ImportInfo is what an import records about the instance set beyond its pairs, so that a
// SWE-bench report of the graded suite counts every instance as SWE-bench would.
type ImportInfo struct {
	Model    string       `yaml:"model,omitempty"`
	SWEBench *SWEBenchSet `yaml:"swebench,omitempty"`
}

// SWEBenchSet lists the instances of the imported file that are not pairs.
type SWEBenchSet struct {
	NoPrediction []string `yaml:"no_prediction,omitempty"` // no prediction: SWE-bench's incomplete_ids
	NotImported  []string `yaml:"not_imported,omitempty"`  // skipped with --keep-going: error_ids
}

// importInfo checks the keys tender import writes: the model name is one short line, and an
// instance listed as not a pair is a valid id that is not also a pair's.
func (l *loader) importInfo(in ImportInfo, pairs map[string]int) (ImportInfo, error) {
	if len(in.Model) > 300 || strings.ContainsAny(in.Model, "\r\n") {
		return in, l.errf("model", "must be one line of at most 300 bytes")
	}
	if in.SWEBench == nil {
		return in, nil
	}
	seen := map[string]string{}
	for _, list := range []struct {
		field string
		ids   []string
	}{{"swebench.no_prediction", in.SWEBench.NoPrediction}, {"swebench.not_imported", in.SWEBench.NotImported}} {
		for i, id := range list.ids {
			field := fmt.Sprintf("%s[%d]", list.field, i)
			switch _, isPair := pairs[id]; {
			case !report.ValidID(id):
				return in, l.errf(field, "%q is not a valid instance id", id)
			case isPair:
				return in, l.errf(field, "%q is also a pair; an instance is either graded or listed here", id)
			case seen[id] != "":
				return in, l.errf(field, "%q is also in %s", id, seen[id])
			}
			seen[id] = list.field
		}
	}
	return in, nil
}
