package bundle

import (
	"github.com/tender-grader/tender/internal/golden"

	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func indentJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	return append(out.Bytes(), '\n')
}

// TestStatementGolden pins the statement (indented for review; the payload is its compact
// form) and the whole signed envelope, which is deterministic with a fixed key and clock.
func TestStatementGolden(t *testing.T) {
	dir, m := sealedBundle(t, testKey)
	golden.Check(t, "statement.golden.json", indentJSON(t, m.Statement))
	var compact bytes.Buffer
	want, _ := os.ReadFile(filepath.Join("testdata", "statement.golden.json"))
	if err := json.Compact(&compact, want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(compact.Bytes(), m.Statement) {
		t.Fatal("the compacted golden statement is not byte-identical to the payload")
	}
	env, err := os.ReadFile(filepath.Join(dir, EnvelopeName))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "envelope.golden.json", env)
}

// TestSealDeterministic: the same files and inputs give byte-identical envelopes with the
// same clock, and statements that differ only in the documented volatile fields otherwise.
func TestSealDeterministic(t *testing.T) {
	dir := fixtureBundle(t)
	first, err := Seal(dir, testInputs(), testKey, testTime)
	if err != nil {
		t.Fatal(err)
	}
	firstEnv, _ := os.ReadFile(filepath.Join(dir, EnvelopeName))
	for i := 0; i < 5; i++ { // maps iterate in a new order each time
		again, err := Seal(dir, testInputs(), testKey, testTime)
		if err != nil {
			t.Fatal(err)
		}
		env, _ := os.ReadFile(filepath.Join(dir, EnvelopeName))
		if !bytes.Equal(again.Statement, first.Statement) || !bytes.Equal(env, firstEnv) {
			t.Fatalf("seal %d differs from the first with the same clock", i)
		}
	}
	later, err := Seal(fixtureBundle(t), testInputs(), testKey, testTime.Add(90*60e9))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(later.Statement, first.Statement) {
		t.Fatal("a later clock gave the same statement: created is not recorded")
	}
	a, b := withoutVolatile(t, first.Statement), withoutVolatile(t, later.Statement)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("statements differ outside the volatile fields:\n%s", diff)
	}
}

// withoutVolatile decodes a statement and deletes the fields its predicate lists as volatile.
func withoutVolatile(t *testing.T, stmt []byte) map[string]any {
	t.Helper()
	var st map[string]any
	if err := json.Unmarshal(stmt, &st); err != nil {
		t.Fatal(err)
	}
	pred := st["predicate"].(map[string]any)
	for _, f := range pred["volatile"].([]any) {
		delete(pred, f.(string))
	}
	return st
}
