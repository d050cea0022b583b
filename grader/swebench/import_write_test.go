package swebench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
)

// TestImportWritesBigSuitesAsPairsFile: import keeps a small suite's pairs in tender.yaml and
// moves a big one's to pairs.jsonl, so that what it writes stays under the manifest's cap.
func TestImportWritesBigSuitesAsPairsFile(t *testing.T) {
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = strings.Repeat("tests/test_module.py::TestClass::test_a_long_name_", 2) + string(rune('a'+i%26))
	}
	for _, tc := range []struct {
		pairs    int
		wantFile bool
	}{{3, false}, {2000, true}} {
		doc := suite.SuiteDoc{Name: "big", Version: "1"}
		for i := 0; i < tc.pairs; i++ {
			doc.Pairs = append(
				doc.Pairs,
				suite.PairDoc{ID: strings.Repeat("x", 8) + string(rune('a'+i%26)), PassToPass: &ids},
			)
		}
		dir := t.TempDir()
		if err := writeSuiteDoc(dir, doc); err != nil {
			t.Fatal(err)
		}
		manifest, err := os.ReadFile(filepath.Join(dir, suite.SuiteFile))
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(filepath.Join(dir, importPairsFile))
		if hasFile := statErr == nil; hasFile != tc.wantFile || len(manifest) > suite.MaxSuiteFile ||
			strings.Contains(string(manifest), "pairs_file:") != tc.wantFile {
			t.Errorf(
				"%d pairs: pairs file %v (want %v), tender.yaml %d bytes",
				tc.pairs,
				hasFile,
				tc.wantFile,
				len(manifest),
			)
		}
	}
}
