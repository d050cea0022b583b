package suite

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestImportSection: the keys tender import writes load back as written, and each way they
// could lie about the instance set is refused, naming the key.
func TestImportSection(t *testing.T) {
	section := func(s string) string { return strings.Replace(goodSuite, "pairs:", s+"pairs:", 1) }
	written := section("model: m-x\nswebench:\n  no_prediction: [a-1]\n  not_imported: [a-2]\n")
	s, err := Load(writeLoadSuite(t, written, nil), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sw := s.Import.SWEBench; s.Import.Model != "m-x" || sw == nil ||
		!slices.Equal(sw.NoPrediction, []string{"a-1"}) ||
		!slices.Equal(sw.NotImported, []string{"a-2"}) {
		t.Errorf("import section %+v", s.Import)
	}
	for _, tt := range []struct{ name, section, field, want string }{
		{"model over a line", "model: \"a\\nb\"\n", "model", "must be one line of at most 300 bytes"},
		{"model too long", "model: " + strings.Repeat("m", 301) + "\n", "model", "at most 300 bytes"},
		{"bad id", "swebench:\n  no_prediction: [\"../x\"]\n", "swebench.no_prediction[0]",
			`"../x" is not a valid instance id`},
		{"a pair", "swebench:\n  not_imported: [b, p1]\n", "swebench.not_imported[1]", `"p1" is also a pair`},
		{"in both lists", "swebench:\n  no_prediction: [a]\n  not_imported: [a]\n", "swebench.not_imported[0]",
			`"a" is also in swebench.no_prediction`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writeLoadSuite(t, section(tt.section), nil), LoadOptions{})
			var le *LoadError
			if !errors.As(err, &le) || le.File != SuiteFile || le.Field != tt.field ||
				!strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %s: %s: ...%s", err, SuiteFile, tt.field, tt.want)
			}
		})
	}
}
