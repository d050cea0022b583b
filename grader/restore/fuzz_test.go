package restore

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzResetTOML: resetTOML never panics, and when it accepts, the result holds exactly the
// base's test-runner tables and resetting it again changes nothing.
func FuzzResetTOML(f *testing.F) {
	for _, tc := range configCases {
		if tc.file == "pyproject.toml" {
			f.Add(baseOf(tc), tc.cand, tc.base == "-")
		}
	}
	f.Fuzz(func(t *testing.T, base, cand string, noBase bool) {
		var b []byte
		if !noBase {
			b = []byte(base)
		}
		out, problem := resetTOML(b, []byte(cand))
		if problem != "" {
			return
		}
		got, err := decodeTOML(out)
		if err != nil {
			t.Fatalf("accepted a result that does not parse: %v\n%s", err, out)
		}
		want := map[string]any{}
		if b != nil {
			want, _ = decodeTOML(b)
		}
		if !equalValue(pytestPart(got), pytestPart(want)) {
			t.Fatalf("result's pytest tables differ from the base's:\n%s", out)
		}
		again, problem := resetTOML(b, out)
		if problem != "" || !bytes.Equal(again, out) {
			t.Fatalf("reset is not idempotent (%s):\n%s\nthen\n%s", problem, out, again)
		}
	})
}

// FuzzResetINI is FuzzResetTOML for tox.ini's [pytest].
func FuzzResetINI(f *testing.F) {
	for _, tc := range configCases {
		if tc.file != "pyproject.toml" {
			f.Add(baseOf(tc), tc.cand, tc.base == "-")
		}
	}
	f.Fuzz(func(t *testing.T, base, cand string, noBase bool) {
		var b []byte
		if !noBase {
			b = []byte(base)
		}
		out, problem := resetINI("pytest", b, []byte(cand))
		if problem != "" {
			return
		}
		got, err := parseINI(out)
		if err != nil {
			t.Fatalf("accepted a result that does not parse: %v\n%s", err, out)
		}
		want := iniDoc{sections: map[string]int{}}
		if b != nil {
			want, _ = parseINI(b)
		}
		gotIn, _ := got.split("pytest")
		wantIn, _ := want.split("pytest")
		if !slices.EqualFunc(gotIn, wantIn, equalEntry) {
			t.Fatalf("result's [pytest] differs from the base's:\n%s", out)
		}
		again, problem := resetINI("pytest", b, out)
		if problem != "" || !bytes.Equal(again, out) {
			t.Fatalf("reset is not idempotent (%s):\n%s\nthen\n%s", problem, out, again)
		}
	})
}

func baseOf(tc configCase) string {
	if tc.base != "" && tc.base != "-" {
		return tc.base
	}
	if f, ok := baseRepo[tc.file]; ok {
		return f.Data
	}
	return ""
}
