package junit

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"testing"
)

// bigPytestReport repeats the test cases of the real pytest report n times, renamed so every
// ID is distinct, inside one suite that declares matching totals.
func bigPytestReport(b *testing.B, n int) []byte {
	real := readTestdata(b, "pytest-xunit2.xml")
	cases := regexp.MustCompile(`(?s)<testcase .*</testcase>|<testcase [^>]*/>`).FindAll(real, -1)
	var body bytes.Buffer
	for i := range n {
		for _, c := range cases {
			body.Write(bytes.Replace(c, []byte(`name="`), fmt.Appendf(nil, `name="r%d_`, i), 1))
		}
	}
	return fmt.Appendf(
		nil,
		`<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">%s</testsuite></testsuites>`,
		body.Bytes(),
	)
}

// BenchmarkParse compares Parse with a bare encoding/xml token walk over the same bytes,
// the least any parser built on encoding/xml must do.
func BenchmarkParse(b *testing.B) {
	data := bigPytestReport(b, 500)
	files := pytestFiles(b)
	b.Run("baseline-xml-tokens", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			dec := xml.NewDecoder(bytes.NewReader(data))
			for {
				if _, err := dec.Token(); err != nil {
					if !errors.Is(err, io.EOF) {
						b.Fatal(err)
					}
					break
				}
			}
		}
	})
	b.Run("Parse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := Parse(data, Options{Runner: RunnerPytest, Files: files}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
