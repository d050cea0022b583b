package junit

import (
	"github.com/tender-grader/tender/internal/golden"

	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromGoTestJSONReal(t *testing.T) {
	out, err := FromGoTestJSON(bytes.NewReader(readTestdata(t, "gotest.jsonl")))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "gotest.golden.xml", out)

	rep, err := Parse(out, Options{Runner: RunnerGo})
	if err != nil {
		t.Fatal(err)
	}
	want := []brief{
		{"example.com/sample/broken.TestMain", Failed},
		{"example.com/sample/calc.TestAdd", Passed},
		{"example.com/sample/calc.TestAddWrong", Failed},
		{"example.com/sample/calc.TestSkipped", Skipped},
		{"example.com/sample/calc.TestTable", Failed},
		{"example.com/sample/calc.TestTable/one_plus_one", Passed},
		{"example.com/sample/calc.TestTable/two_plus_three", Passed},
		{"example.com/sample/calc.TestTable/wrong", Failed},
		{"example.com/sample/calc.TestNested", Passed},
		{"example.com/sample/calc.TestNested/outer", Passed},
		{"example.com/sample/calc.TestNested/outer/inner", Passed},
		{"example.com/sample/calc.TestNested/outer/skip", Skipped},
		{"example.com/sample/calc.TestParallel", Passed},
		{"example.com/sample/calc.TestParallel/a", Passed},
		{"example.com/sample/calc.TestParallel/b", Passed},
		{"example.com/sample/panics.TestBeforePanic", Passed},
		{"example.com/sample/panics.TestPanics", Failed},
	}
	if diff := cmp.Diff(want, briefs(rep)); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if m := rep.Mismatches(); len(m) != 0 {
		t.Errorf("our own JUnit does not add up: %+v", m)
	}
	if c := rep.Cases[0]; !strings.Contains(c.Message, packageFailMsg) {
		t.Errorf("build failure message = %q", c.Message)
	}
	if !bytes.Contains(out, []byte("cannot use")) {
		t.Error("the build failure's compiler output is not in the report")
	}
	if c := rep.Cases[3]; c.Message != "calc_test.go:18: not on this platform" {
		t.Errorf("skip message = %q", c.Message)
	}
}

func TestFromGoTestJSONCases(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []brief
	}{
		{
			name: "test never finished",
			input: `{"Action":"run","Package":"p","Test":"TestHang"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"panic: test timed out after 1s\n"}
{"Action":"fail","Package":"p","Elapsed":1}`,
			want: []brief{{"p.TestHang", Errored}},
		},
		{
			name: "package fails with every test passing",
			input: `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Output":"TestMain exited 3\n"}
{"Action":"fail","Package":"p"}`,
			want: []brief{{"p.TestA", Passed}, {"p.TestMain", Failed}},
		},
		{
			name:  "non-JSON lines ignored",
			input: "# building\n{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"TestA\"}\nok p\n",
			want:  []brief{{"p.TestA", Passed}},
		},
		{
			name:  "markup in names and output is escaped",
			input: `{"Action":"fail","Package":"p","Test":"TestX/<a>&\"b\"","Output":""}` + "\n" + `{"Action":"output","Package":"p","Test":"TestX/<a>&\"b\"","Output":"]]></failure><!DOCTYPE x>\u0000\n"}`,
			want:  []brief{{`p.TestX/<a>&"b"`, Failed}},
		},
		{name: "empty input", input: "", want: []brief{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := FromGoTestJSON(strings.NewReader(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Parse(out, Options{Runner: RunnerGo})
			if err != nil {
				t.Fatalf("Parse of our own output: %v\n%s", err, out)
			}
			if diff := cmp.Diff(tt.want, briefs(rep)); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
			if m := rep.Mismatches(); len(m) != 0 {
				t.Errorf("mismatches %+v", m)
			}
		})
	}
}

func TestFromGoTestJSONRefuses(t *testing.T) {
	tests := []struct{ name, input string }{
		{"broken JSON", `{"Action":"pass",`},
		{"line over the cap", `{"Output":"` + strings.Repeat("x", maxGoLine) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := FromGoTestJSON(strings.NewReader(tt.input)); !errors.Is(err, ErrGoTestJSON) {
				t.Fatalf("err = %v, want ErrGoTestJSON", err)
			}
		})
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	var tl tail
	tl.write(strings.Repeat("a", maxCaseOutput))
	tl.write("END")
	s := tl.String()
	if !strings.HasPrefix(s, "[earlier output dropped]") || !strings.HasSuffix(s, "aEND") {
		t.Errorf("tail = %.40q…%q", s, s[len(s)-10:])
	}
	if n := len(tl.kept()); n != maxCaseOutput {
		t.Errorf("kept %d bytes, want %d", n, maxCaseOutput)
	}
	for range 3 * maxCaseOutput {
		tl.write("x")
	}
	if s := tl.String(); len(tl.buf) >= 2*maxCaseOutput || !strings.HasSuffix(s, "xxx") ||
		len(s) != maxCaseOutput+len("[earlier output dropped]\n") {
		t.Errorf("after many small writes: buffer %d bytes, string %d bytes", len(tl.buf), len(s))
	}
}
