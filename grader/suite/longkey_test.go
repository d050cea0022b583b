package suite

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestLongKeyAgreesWithTheParser: LongKey finds a key exactly when yaml.v3 refuses it for its
// length, at the line it is on, whatever the key is written under.
func TestLongKeyAgreesWithTheParser(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line, n   int
	}{
		{"a key at the limit", strings.Repeat("k", 1024) + ": 1\n", 0, 0},
		{"one byte over", strings.Repeat("k", 1025) + ": 1\n", 1, 1025},
		{"nested", "a:\n  b: 1\n  " + strings.Repeat("k", 2000) + ": 2\n", 3, 2000},
		{"in a list", "pairs:\n  - " + strings.Repeat("k", 1500) + ": x\n", 2, 1500},
		{"a key alone on its line", "a:\n  " + strings.Repeat("k", 1100) + ":\n    b: 1\n", 2, 1100},
		{"a long value", "name: " + strings.Repeat("v", 5000) + "\n", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, n := LongKey([]byte(tc.doc))
			if line != tc.line || n != tc.n {
				t.Errorf("LongKey = line %d, %d bytes; want line %d, %d bytes", line, n, tc.line, tc.n)
			}
			var v any
			if err := yaml.Unmarshal([]byte(tc.doc), &v); (err != nil) != (tc.line > 0) {
				t.Errorf("yaml.v3 says %v, but LongKey found line %d", err, line)
			}
		})
	}
}
