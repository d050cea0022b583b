package swebench

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

// record is one instance line with the given fields replaced (a value of "" drops the key).
func record(fields map[string]string) string {
	base := map[string]string{
		"instance_id": `"acme__calc-1"`, "repo": `"acme/calc"`, "base_commit": `"` + commit + `"`,
		"patch": `""`, "test_patch": `""`, "problem_statement": `"it breaks"`,
		"FAIL_TO_PASS": `["t.py::test_a"]`, "PASS_TO_PASS": `[]`, "version": `"0.3"`,
	}
	for k, v := range fields {
		base[k] = v
	}
	var parts []string
	for _, k := range []string{"instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement",
		"FAIL_TO_PASS", "PASS_TO_PASS", "version"} {
		if base[k] != "" {
			parts = append(parts, `"`+k+`": `+base[k])
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// TestReadInstances reads both layouts the datasets come in, with both spellings of a test
// list and of a version, and keeps every field Tender uses.
func TestReadInstances(t *testing.T) {
	second := record(map[string]string{"instance_id": `"acme__calc-2"`, "FAIL_TO_PASS": `"[\"t.py::test_b\"]"`,
		"PASS_TO_PASS": `""`, "version": `2.10`})
	for name, input := range map[string]string{
		"jsonl with blank lines": "\n" + record(nil) + "\n\n" + second + "\n",
		"json array":             " [" + record(nil) + ",\n" + second + "]\n",
	} {
		t.Run(name, func(t *testing.T) {
			good, bad, err := ReadInstances(strings.NewReader(input))
			if err != nil || len(bad) != 0 {
				t.Fatalf("err %v, bad %v", err, bad)
			}
			want := []Instance{
				{InstanceID: "acme__calc-1", Repo: "acme/calc", BaseCommit: commit, ProblemStatement: "it breaks",
					FailToPass: TestList{"t.py::test_a"}, PassToPass: TestList{}, Version: "0.3"},
				{InstanceID: "acme__calc-2", Repo: "acme/calc", BaseCommit: commit, ProblemStatement: "it breaks",
					FailToPass: TestList{"t.py::test_b"}, Version: "2.10"},
			}
			if diff := cmp.Diff(want, good); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadInstancesBadRecords: a record that cannot be imported is returned with its number
// and, when it has a usable one, its id; the records around it are read.
func TestReadInstancesBadRecords(t *testing.T) {
	for _, tt := range []struct {
		name   string
		fields map[string]string
		id     string
		want   string
	}{
		{"not json", nil, "", "unexpected end of JSON input"},
		{"unusable id", map[string]string{"instance_id": `"../x"`}, "", `instance_id "../x" is not usable as a pair id`},
		{"repo not owner/name", map[string]string{"repo": `"calc"`}, "acme__calc-1", `repo "calc" is not OWNER/NAME`},
		{"short commit", map[string]string{"base_commit": `"abc"`}, "acme__calc-1", "base_commit \"abc\" is not 40"},
		{"empty FAIL_TO_PASS", map[string]string{"FAIL_TO_PASS": `"[]"`}, "acme__calc-1", "FAIL_TO_PASS is empty"},
		{"test list not a list", map[string]string{"FAIL_TO_PASS": `7`}, "acme__calc-1", "a test list must be a JSON list"},
		{"test list string not a list", map[string]string{"FAIL_TO_PASS": `"t.py::x"`}, "acme__calc-1",
			"does not hold a JSON list of strings"},
		{"version an object", map[string]string{"version": `{}`}, "acme__calc-1", `version must be a string such as "2.14"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			line := record(tt.fields)
			if tt.fields == nil {
				line = `{"instance_id": "acme__calc-1"` // cut short
			}
			other := record(map[string]string{"instance_id": `"acme__calc-9"`})
			good, bad, err := ReadInstances(strings.NewReader(other + "\n" + line + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			if len(good) != 1 || good[0].InstanceID != "acme__calc-9" {
				t.Errorf("good records %+v, want the other record alone", good)
			}
			if len(bad) != 1 {
				t.Fatalf("bad records %v, want one", bad)
			}
			b := bad[0]
			if b.N != 2 || !errors.Is(b, ErrBadRecord) || !strings.Contains(b.Error(), tt.want) {
				t.Errorf("bad record %q (n %d), want record 2 saying %q", b.Error(), b.N, tt.want)
			}
			if tt.id != "" && b.ID != "acme__calc-1" {
				t.Errorf("id %q, want acme__calc-1", b.ID)
			}
			if prefix := "record 2 (acme__calc-1): "; tt.id != "" && !strings.HasPrefix(b.Error(), prefix) ||
				tt.id == "" && !strings.HasPrefix(b.Error(), "record 2: ") {
				t.Errorf("error %q does not start with the record and its id", b.Error())
			}
			if errors.Unwrap(b) != b.Err {
				t.Error("a RecordError does not unwrap to its error")
			}
		})
	}
}

func TestReadInstancesDuplicateAndFileErrors(t *testing.T) {
	good, bad, err := ReadInstances(strings.NewReader(record(nil) + "\n" + record(nil) + "\n"))
	if err != nil || len(good) != 1 || len(bad) != 1 || !strings.Contains(bad[0].Error(), "appears twice") ||
		bad[0].ID != "acme__calc-1" {
		t.Errorf("a second record of an id: good %d, bad %v, err %v", len(good), bad, err)
	}
	for name, input := range map[string]string{
		"empty file":          " \n\t",
		"bad array":           "[" + record(nil) + ",",
		"more after an array": "[" + record(nil) + "] {}",
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := ReadInstances(strings.NewReader(input)); !errors.Is(err, ErrBadRecord) {
				t.Errorf("err %v, want ErrBadRecord", err)
			}
		})
	}
	if _, _, err := ReadInstances(strings.NewReader(strings.Repeat("x", 65<<20))); err == nil {
		t.Error("a line over the scanner's cap read without an error")
	}
}

func TestReadPredictions(t *testing.T) {
	preds, err := ReadPredictions(strings.NewReader(`[{"instance_id": "a-1", "model_patch": "diff",
		"model_name_or_path": "m"}, {"instance_id": "a-2", "model_patch": null}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != 2 || *preds["a-1"].ModelPatch != "diff" || preds["a-1"].ModelNameOrPath != "m" ||
		preds["a-2"].ModelPatch != nil {
		t.Errorf("predictions %+v", preds)
	}
	for _, tt := range []struct{ name, input, want string }{
		{"not json", "{\n", "prediction 1: bad SWE-bench record"},
		{"unusable id", `{"instance_id": ""}`, `prediction 1: bad SWE-bench record: instance_id "" is not usable`},
		{"twice", `{"instance_id": "a-1"}` + "\n" + `{"instance_id": "a-1"}`,
			`prediction 2: bad SWE-bench record: instance_id "a-1" appears twice`},
		{"empty", "", "the file is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadPredictions(strings.NewReader(tt.input))
			if !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want ErrBadRecord saying %q", err, tt.want)
			}
		})
	}
}

func TestRepoID(t *testing.T) {
	if got := RepoID("acme/calc"); got != "acme__calc" {
		t.Errorf("RepoID = %q", got)
	}
	if got := RepoID("acme__calc"); got != "acme__calc" {
		t.Errorf("RepoID of an ID = %q, want it unchanged", got)
	}
}
