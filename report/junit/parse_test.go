package junit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// brief is the part of a case the tables check.
type brief struct {
	ID     string
	Status Status
}

func briefs(r *Report) []brief {
	out := make([]brief, len(r.Cases))
	for i, c := range r.Cases {
		out[i] = brief{c.ID, c.Status}
	}
	return out
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pytestFiles(t testing.TB) []string {
	return strings.Fields(string(readTestdata(t, "pytest-files.txt")))
}

// The cases of testdata/pytest-xunit*.xml, written by a real pytest 7.2.1 run.
var pytestCases = []brief{
	{"tests/test_broken_import.py", Errored},
	{"tests/test_calc.py::test_add", Passed},
	{"tests/test_calc.py::test_add_wrong", Failed},
	{"tests/test_calc.py::test_add_param[1-1-2]", Passed},
	{"tests/test_calc.py::test_add_param[2-3-5]", Passed},
	{"tests/test_calc.py::test_add_param[x-y-xy]", Passed},
	{"tests/test_calc.py::test_odd_params[a/b.py]", Passed},
	{"tests/test_calc.py::test_odd_params[c::d]", Passed},
	{"tests/test_calc.py::test_odd_params[e[f]]", Passed},
	{"tests/test_calc.py::test_skipped", Skipped},
	{"tests/test_calc.py::test_xfail", XFail},
	{"tests/test_calc.py::test_xpass_strict", XPass},
	{"tests/test_calc.py::test_xpass_lenient", Passed}, // pytest writes a non-strict xpass as a pass
	{"tests/test_calc.py::test_fixture_error", Errored},
	{"tests/test_calc.py::TestCalc::test_in_class", Passed},
	{"tests/test_calc.py::TestCalc::test_class_param[0]", Passed},
	{"tests/test_calc.py::TestCalc::test_class_param[1]", Passed},
	{"tests/test_calc.py::TestCalc::TestNested::test_nested", Passed},
	{"tests/test_teardown.py::test_passes_then_teardown_error", Errored},
	{"tests/test_teardown.py::test_fails_then_teardown_error", Failed},
	{"tests/test_teardown.py::test_fails_then_teardown_error", Errored},
	{"tests/pkg.v2/test_dots.py::test_in_dotted_dir", Passed},
}

func TestParseReports(t *testing.T) {
	tests := []struct {
		name       string
		file       string
		opts       Options
		want       []brief
		mismatches []Mismatch
	}{
		// xunit1 carries file attributes; xunit2 needs the workspace's file list.
		{
			name: "pytest xunit1 (real)",
			file: "pytest-xunit1.xml",
			opts: Options{Runner: RunnerPytest},
			want: pytestCases,
		},
		{
			name: "pytest xunit2 (real)",
			file: "pytest-xunit2.xml",
			opts: Options{Runner: RunnerPytest, Files: pytestFiles(t)},
			want: pytestCases,
		},
		{
			name: "gotestsum (real)", file: "gotestsum.xml", opts: Options{Runner: RunnerGo},
			want: []brief{
				{"TestMain", Failed},
				{"example.com/sample/calc.TestAddWrong", Failed},
				{"example.com/sample/calc.TestTable/wrong", Failed},
				{"example.com/sample/calc.TestTable", Failed},
				{"example.com/sample/calc.TestSkipped", Skipped},
				{"example.com/sample/calc.TestNested/outer/skip", Skipped},
				{"example.com/sample/calc.TestAdd", Passed},
				{"example.com/sample/calc.TestTable/one_plus_one", Passed},
				{"example.com/sample/calc.TestTable/two_plus_three", Passed},
				{"example.com/sample/calc.TestNested/outer/inner", Passed},
				{"example.com/sample/calc.TestNested/outer", Passed},
				{"example.com/sample/calc.TestNested", Passed},
				{"example.com/sample/calc.TestParallel/a", Passed},
				{"example.com/sample/calc.TestParallel/b", Passed},
				{"example.com/sample/calc.TestParallel", Passed},
				{"example.com/sample/panics.TestPanics", Failed},
				{"example.com/sample/panics.TestBeforePanic", Passed},
			},
			// gotestsum leaves its synthetic TestMain case for a build failure out of the
			// suite's totals, and counts the build error at the root only.
			mismatches: []Mismatch{
				{Suite: 0, Field: "tests", Declared: 16, Counted: 17},
				{Suite: 0, Field: "errors", Declared: 1, Counted: 0},
				{Suite: 2, Field: "tests", Declared: 0, Counted: 1},
				{Suite: 2, Field: "failures", Declared: 0, Counted: 1},
			},
		},
		{
			name: "go-junit-report", file: "go-junit-report.xml", opts: Options{Runner: RunnerGo},
			want: []brief{
				{"example.com/sample/calc.TestAdd", Passed},
				{"example.com/sample/calc.TestAddWrong", Failed},
				{"example.com/sample/calc.TestSkipped", Skipped},
				{"example.com/sample/calc.TestTable/one_plus_one", Passed},
			},
		},
		{
			name: "surefire with reruns", file: "surefire.xml",
			want: []brief{
				{"com.example.CalcTest::addsNumbers", Passed},
				{"com.example.CalcTest::flakyNetwork", Passed},
				{"com.example.CalcTest::divides[2]", Failed},
				{"com.example.CalcTest::readsConfig", Errored},
				{"com.example.CalcTest::windowsOnly", Skipped},
			},
		},
		{
			name: "jest-junit", file: "jest-junit.xml", opts: Options{Runner: RunnerCommand},
			want: []brief{
				{"math utils adds::math utils adds", Passed},
				{"math utils subtracts::math utils subtracts", Failed},
				{"math utils multiplies::math utils multiplies", Skipped},
				{"math utils divides::math utils divides", Passed},
			},
		},
		{
			name: "nested testsuites", file: "nested.xml",
			want: []brief{
				{"parser.lexer::tokens", Passed},
				{"parser::empty input", Failed},
				{"parser::unicode", Skipped},
				{"cli::help", Passed},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Parse(readTestdata(t, tt.file), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, briefs(rep)); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.mismatches, rep.Mismatches()); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
			if !rep.DeclaresTests() {
				t.Error("DeclaresTests() = false")
			}
		})
	}
}

func TestParseDetails(t *testing.T) {
	opts := Options{Runner: RunnerPytest, Files: pytestFiles(t)}
	rep, err := Parse(readTestdata(t, "pytest-xunit1.xml"), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := rep.Cases[2]
	want := Case{
		ID: "tests/test_calc.py::test_add_wrong", ClassName: "tests.test_calc", Name: "test_add_wrong",
		File: "tests/test_calc.py", Line: 12, Status: Failed, Time: got.Time, Suite: 1,
		Message: "AssertionError: one plus two\nassert 3 == 4\n +  where 3 = add(1, 2)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("case (-want +got):\n%s", diff)
	}
	sf, err := Parse(readTestdata(t, "surefire.xml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := sf.Cases[1]; !c.Flaky || c.Status != Passed {
		t.Errorf("flakyFailure case = %+v, want a flaky pass", c)
	}
	if c := sf.Cases[2]; c.Flaky || c.Message != "expected: <2> but was: <3>" {
		t.Errorf("failure with rerunFailure = %+v", c)
	}
}

func TestParsePytestIDs(t *testing.T) {
	tests := []struct {
		name, classname, caseName, file string
		files                           []string
		want                            string
	}{
		{"module function", "tests.test_x", "test_y", "", []string{"tests/test_x.py"}, "tests/test_x.py::test_y"},
		{
			"class and param",
			"tests.test_x.TestC",
			"test_y[a.b/c::d]",
			"",
			[]string{"tests/test_x.py"},
			"tests/test_x.py::TestC::test_y[a.b/c::d]",
		},
		{
			"nested class",
			"tests.test_x.TestC.TestD",
			"test_y",
			"",
			[]string{"tests/test_x.py"},
			"tests/test_x.py::TestC::TestD::test_y",
		},
		{
			"dotted directory",
			"tests.pkg.v2.test_dots",
			"test_z",
			"",
			[]string{"tests/pkg.v2/test_dots.py", "tests/pkg/v3/test_dots.py"},
			"tests/pkg.v2/test_dots.py::test_z",
		},
		{"dotted directory vs slash", "a.b.test_m", "test_z", "", []string{"a/b/test_m.py"}, "a/b/test_m.py::test_z"},
		{"same dotted form: byte order decides", "a.b", "test_z", "", []string{"a/b.py", "a.b.py"}, "a.b.py::test_z"},
		{
			"longest module wins",
			"tests.test_x.TestC",
			"test_y",
			"",
			[]string{"tests/test_x.py", "tests/test_x/TestC.py"},
			"tests/test_x/TestC.py::test_y",
		},
		{
			"xunit1 file attribute",
			"tests.pkg.v2.test_dots",
			"test_z",
			"tests/pkg.v2/test_dots.py",
			nil,
			"tests/pkg.v2/test_dots.py::test_z",
		},
		{
			"inherited test: file attribute of the base ignored",
			"tests.test_child.TestChild",
			"test_base",
			"tests/base.py",
			[]string{"tests/test_child.py", "tests/base.py"},
			"tests/test_child.py::TestChild::test_base",
		},
		{
			"no file list: test_ module guessed",
			"tests.test_x.TestC",
			"test_y",
			"",
			nil,
			"tests/test_x.py::TestC::test_y",
		},
		{"no file list: _test module guessed", "pkg.calc_test", "test_y", "", nil, "pkg/calc_test.py::test_y"},
		{"no file list, no test module", "pkg.checks", "test_y", "", nil, "pkg/checks.py::test_y"},
		{"collection error", "", "tests.test_broken", "", []string{"tests/test_broken.py"}, "tests/test_broken.py"},
		{
			"doctest in a text file",
			"docs.usage.txt",
			"usage.txt",
			"",
			[]string{"docs/usage.txt"},
			"docs/usage.txt::usage.txt",
		},
		{
			"unsafe entries in the file list are ignored",
			"x.test_a",
			"t",
			"",
			[]string{"../x/test_a.py", "/x/test_a.py"},
			"x/test_a.py::t",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			b.WriteString(`<testsuite tests="1"><testcase classname="`)
			xmlEscape(&b, tt.classname)
			b.WriteString(`" name="`)
			xmlEscape(&b, tt.caseName)
			b.WriteString(`"`)
			if tt.file != "" {
				b.WriteString(` file="` + tt.file + `"`)
			}
			b.WriteString(`/></testsuite>`)
			rep, err := Parse(b.Bytes(), Options{Runner: RunnerPytest, Files: tt.files})
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Cases[0].ID; got != tt.want {
				t.Errorf("ID = %q, want %q", got, tt.want)
			}
		})
	}
}

func xmlEscape(b *bytes.Buffer, s string) {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", `"`, "&quot;")
	b.WriteString(r.Replace(s))
}

func TestParseIDForms(t *testing.T) {
	doc := []byte(`<testsuite tests="3"><testcase classname="pkg/a" name="TestX/sub"/>` +
		`<testcase classname="" name="bare"/><testcase classname="only" name=""/></testsuite>`)
	tests := []struct {
		runner Runner
		want   []string
	}{
		{RunnerGo, []string{"pkg/a.TestX/sub", "bare", "only"}},
		{RunnerCommand, []string{"pkg/a::TestX/sub", "bare", "only"}},
		{"", []string{"pkg/a::TestX/sub", "bare", "only"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.runner), func(t *testing.T) {
			rep, err := Parse(doc, Options{Runner: tt.runner})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range rep.Cases {
				got = append(got, c.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("IDs (-want +got):\n%s", diff)
			}
		})
	}
}

const canaryMarker = "TENDER-CANARY-7f3a91"

// refusalCases are the inputs Parse must refuse, each with the error it must wrap. They also
// seed the fuzzer.
func refusalCases(canaryPath string) []struct {
	name string
	data string
	opts Options
	want error
} {
	return []struct {
		name string
		data string
		opts Options
		want error
	}{
		{
			"external entity (XXE) reading a canary file",
			`<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file://` + canaryPath + `">]><testsuite><testcase name="&x;"/></testsuite>`,
			Options{},
			ErrDoctype,
		},
		{
			"billion laughs",
			`<!DOCTYPE l [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><testsuite name="&b;"/>`,
			Options{},
			ErrDoctype,
		},
		{"bare doctype", `<!DOCTYPE testsuite><testsuite/>`, Options{}, ErrDoctype},
		{"entity declaration outside a doctype", `<!ENTITY x "y"><testsuite/>`, Options{}, ErrEntity},
		{
			"undeclared entity in text",
			`<testsuite><testcase name="a"><failure>&nbsp;</failure></testcase></testsuite>`,
			Options{},
			ErrEntity,
		},
		{"undeclared entity in attribute", `<testsuite><testcase name="a&copy;"/></testsuite>`, Options{}, ErrEntity},
		{"entity without semicolon", `<testsuite name="a &amp b"/>`, Options{}, ErrEntity},
		{"over the cap", `<testsuite><testcase name="a"/></testsuite>`, Options{MaxBytes: 16}, ErrTooLarge},
		{"empty", ``, Options{}, ErrEmpty},
		{"only whitespace", " \n\t", Options{}, ErrEmpty},
		{"not junit", `<html><body/></html>`, Options{}, ErrNotJUnit},
		{"no element", `<?xml version="1.0"?><!-- nothing -->`, Options{}, ErrNotJUnit},
		{"unclosed", `<testsuite><testcase name="a">`, Options{}, ErrMalformed},
		{"truncated mid-tag", `<testsuites><testsuite name="x" tests="1"><testca`, Options{}, ErrMalformed},
		{"count is not a number", `<testsuite tests="many"/>`, Options{}, ErrTotals},
		{"negative count", `<testsuite tests="-1"/>`, Options{}, ErrTotals},
		{"count too large for an int", `<testsuite tests="99999999999999999999"/>`, Options{}, ErrTotals},
		{"second root", `<testsuite/><testsuite/>`, Options{}, ErrMalformed},
		{"text after root", `<testsuite/>junk`, Options{}, ErrMalformed},
		{"declared encoding Tender does not read", `<?xml version="1.0" encoding="windows-1252"?><testsuite/>`,
			Options{}, ErrEncoding},
		{"declared encoding that is no encoding", `<?xml version="1.0" encoding="x-made-up"?><testsuite/>`,
			Options{}, ErrEncoding},
		{"UTF-16 big-endian", "\xfe\xff\x00<\x00t\x00/\x00>", Options{}, ErrEncoding},
		{"UTF-16 little-endian", "\xff\xfe<\x00t\x00/\x00>\x00", Options{}, ErrEncoding},
		{"declared US-ASCII holding other bytes",
			"<?xml version=\"1.0\" encoding=\"US-ASCII\"?><testsuite name=\"\xe9\"/>", Options{}, ErrEncoding},
		{"invalid UTF-8", "<testsuite name=\"\xe9\"/>", Options{}, ErrMalformed},
		{"NUL character reference", `<testsuite name="&#0;"/>`, Options{}, ErrMalformed},
		{"too deep", strings.Repeat("<testsuite>", 100) + strings.Repeat("</testsuite>", 100), Options{}, ErrTooDeep},
	}
}

func TestParseRefuses(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "canary.txt")
	if err := os.WriteFile(canary, []byte(canaryMarker), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range refusalCases(canary) {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Parse([]byte(tt.data), tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse error = %v, want %v", err, tt.want)
			}
			if rep != nil {
				t.Errorf("Parse returned a report with its error: %+v", rep)
			}
			if strings.Contains(err.Error(), canaryMarker) {
				t.Errorf("error text carries the canary: %v", err)
			}
		})
	}
}

func TestParseAcceptsPredefinedEntities(t *testing.T) {
	doc := `<testsuite tests="1"><testcase classname="c" name="&lt;&gt;&amp;&apos;&quot;&#65;&#x42;">` +
		`<failure><![CDATA[a & b <c>]]></failure></testcase></testsuite>`
	rep, err := Parse([]byte(doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.Cases[0].Name, `<>&'"AB`; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	if got, want := rep.Cases[0].Message, "a & b <c>"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}

func TestParseDefaultCap(t *testing.T) {
	big := bytes.Repeat([]byte(" "), DefaultMaxBytes+1)
	copy(big, "<testsuite/>")
	if _, err := Parse(big, Options{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Parse of %d bytes = %v, want ErrTooLarge", len(big), err)
	}
	if _, err := Parse(big[:DefaultMaxBytes], Options{}); err != nil {
		t.Fatalf("Parse at exactly the cap = %v", err)
	}
}

// endless is a reader that never ends; ParseReader must stop at the cap.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.n += int64(len(p))
	return len(p), nil
}

func TestParseReaderStopsAtCap(t *testing.T) {
	r := &endless{}
	_, err := ParseReader(r, Options{MaxBytes: 1 << 20})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ParseReader = %v, want ErrTooLarge", err)
	}
	if r.n > 2<<20 {
		t.Errorf("read %d bytes for a 1 MiB cap", r.n)
	}
	rep, err := ParseReader(strings.NewReader(`<testsuite tests="1"><testcase name="a"/></testsuite>`), Options{})
	if err != nil || len(rep.Cases) != 1 {
		t.Fatalf("ParseReader = %v, %v", rep, err)
	}
}

func TestTotals(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []Mismatch
		decl bool
	}{
		{
			"adds up",
			`<testsuite tests="2" failures="1"><testcase name="a"/><testcase name="b"><failure/></testcase></testsuite>`,
			nil,
			true,
		},
		{"a case too many", `<testsuite tests="1"><testcase name="a"/><testcase name="b"/></testsuite>`,
			[]Mismatch{{Suite: 0, Field: "tests", Declared: 1, Counted: 2}}, true},
		{"hidden failure", `<testsuite tests="1" failures="0"><testcase name="a"><failure/></testcase></testsuite>`,
			[]Mismatch{{Suite: 0, Field: "failures", Declared: 0, Counted: 1}}, true},
		{
			"errors and skips",
			`<testsuite tests="2" errors="0" skipped="0"><testcase name="a"><error/></testcase><testcase name="b"><skipped/></testcase></testsuite>`,
			[]Mismatch{
				{Suite: 0, Field: "errors", Declared: 0, Counted: 1},
				{Suite: 0, Field: "skipped", Declared: 0, Counted: 1},
			},
			true,
		},
		{
			"case outside any suite",
			`<testsuites><testsuite tests="1"><testcase name="a"/></testsuite><testcase name="stray"/></testsuites>`,
			[]Mismatch{{Suite: 0, Field: "tests", Declared: 1, Counted: 2}},
			true,
		},
		{
			"inner suite wrong, outer right",
			`<testsuites tests="2"><testsuite tests="2"><testcase name="a"/></testsuite><testcase name="b"/></testsuites>`,
			[]Mismatch{{Suite: 1, Field: "tests", Declared: 2, Counted: 1}},
			true,
		},
		{"nothing declared", `<testsuites><testsuite><testcase name="a"/></testsuite></testsuites>`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Parse([]byte(tt.doc), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, rep.Mismatches()); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
			if got := rep.DeclaresTests(); got != tt.decl {
				t.Errorf("DeclaresTests() = %v, want %v", got, tt.decl)
			}
		})
	}
}

// TestParseHostileClassnames would take hours if resolving a pytest classname were quadratic
// in its number of dots, or if it split every long classname.
func TestParseHostileClassnames(t *testing.T) {
	dots := strings.Repeat("a.", 1<<20) + "test_x"
	doc := `<testsuite tests="2"><testcase classname="` + dots + `" name="t"/>` +
		`<testcase classname="` + strings.Repeat("a.", 2000) + `test_x" name="t"/></testsuite>`
	files := []string{strings.Repeat("a/", 2000) + "test_x.py", "b.py"}
	rep, err := Parse([]byte(doc), Options{Runner: RunnerPytest, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Cases[0].ID; got != dots+"::t" {
		t.Errorf("over-long classname: ID of %d bytes, want it kept whole", len(got))
	}
	if got, want := rep.Cases[1].ID, files[0]+"::t"; got != want {
		t.Errorf("ID = %.40q…, want %.40q…", got, want)
	}
}
