package restore

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlSection is a "[table]" or "[[array]]" header and the text up to the next header.
type tomlSection struct {
	key    []string
	start  int // offset of the header's line
	pytest bool
}

// isPytestKey: tool.<name>... with name starting "pytest".
func isPytestKey(key []string) bool {
	return len(key) >= 2 && key[0] == "tool" && strings.HasPrefix(key[1], "pytest")
}

// tomlSections locates the table headers of data with go-toml's parser.
func tomlSections(data []byte) ([]tomlSection, error) {
	p := unstable.Parser{}
	p.Reset(data)
	var out []tomlSection
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != unstable.Table && e.Kind != unstable.ArrayTable {
			continue
		}
		var key []string
		first := -1
		for it := e.Key(); it.Next(); {
			n := it.Node()
			if first < 0 {
				first = int(n.Raw.Offset)
			}
			key = append(key, string(n.Data))
		}
		start := bytes.LastIndexByte(data[:first], '\n') + 1
		out = append(out, tomlSection{key: key, start: start, pytest: isPytestKey(key)})
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	return out, nil
}

// tomlChunks splits data into the preamble and one chunk per section.
func tomlChunks(data []byte, secs []tomlSection) (string, []string) {
	if len(secs) == 0 {
		return string(data), nil
	}
	chunks := make([]string, len(secs))
	for i, s := range secs {
		end := len(data)
		if i+1 < len(secs) {
			end = secs[i+1].start
		}
		chunks[i] = string(data[s.start:end])
	}
	return string(data[:secs[0].start]), chunks
}

func tomlHasPytest(data []byte) (bool, error) {
	doc, err := decodeTOML(data)
	if err != nil {
		return false, err
	}
	return len(pytestPart(doc)) > 0, nil
}

// resetTOML splices base's [tool.pytest*] sections into cand in place of cand's own, then
// checks the result by value.
func resetTOML(base, cand []byte) ([]byte, string) {
	candSecs, err := tomlSections(cand)
	if err != nil {
		return nil, "the candidate's file does not parse: " + err.Error()
	}
	var baseText string
	if base != nil {
		baseSecs, err := tomlSections(base)
		if err != nil {
			return nil, "the base file does not parse: " + err.Error()
		}
		_, chunks := tomlChunks(base, baseSecs)
		for i, s := range baseSecs {
			if s.pytest {
				baseText += withNewline(chunks[i])
			}
		}
	}
	out := spliceTOML(cand, candSecs, baseText)
	if problem := verifyTOML(base, cand, out); problem != "" {
		return nil, problem
	}
	return out, ""
}

func spliceTOML(cand []byte, secs []tomlSection, baseText string) []byte {
	pre, chunks := tomlChunks(cand, secs)
	return []byte(splice(pre, chunks, func(i int) bool { return secs[i].pytest }, baseText))
}

// splice rebuilds a config file from its preamble and section chunks: the test-runner
// chunks are replaced by baseText, written once where the first of them stood (or at the
// end when the candidate had none). One function serves TOML and INI files.
func splice(pre string, chunks []string, isRunner func(i int) bool, baseText string) string {
	var b strings.Builder
	b.WriteString(pre)
	inserted := baseText == ""
	for i, c := range chunks {
		if !isRunner(i) {
			b.WriteString(c)
			continue
		}
		if !inserted {
			b.WriteString(baseText)
			inserted = true
		}
	}
	if !inserted {
		if b.Len() > 0 {
			ensureBlankLine(&b)
		}
		b.WriteString(baseText)
	}
	return b.String()
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

func ensureBlankLine(b *strings.Builder) {
	s := b.String()
	if !strings.HasSuffix(s, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// verifyTOML checks out == cand without its pytest part, plus base's pytest part.
func verifyTOML(base, cand, out []byte) string {
	got, err := decodeTOML(out)
	if err != nil {
		return "the reset file does not parse (an odd form of the section?): " + err.Error()
	}
	c, err := decodeTOML(cand)
	if err != nil {
		return "the candidate's file does not parse: " + err.Error()
	}
	b := map[string]any{}
	if base != nil {
		if b, err = decodeTOML(base); err != nil {
			return "the base file does not parse: " + err.Error()
		}
	}
	want := withoutPytest(c)
	if bp := pytestPart(b); len(bp) > 0 {
		tool, _ := want["tool"].(map[string]any)
		if tool == nil {
			tool = map[string]any{}
		}
		for k, v := range bp {
			tool[k] = v
		}
		want["tool"] = tool
	}
	dropEmptyTool(want)
	dropEmptyTool(got)
	if !equalValue(got, want) {
		return "after the reset the test-runner tables are not exactly the base's, or other values changed (is the section written as a dotted key, an inline table or inside [tool]?)"
	}
	return ""
}

func decodeTOML(data []byte) (map[string]any, error) {
	doc := map[string]any{}
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	return doc, nil
}

// pytestPart returns tool.pytest* of doc (shared, not copied).
func pytestPart(doc map[string]any) map[string]any {
	tool, _ := doc["tool"].(map[string]any)
	out := map[string]any{}
	for k, v := range tool {
		if strings.HasPrefix(k, "pytest") {
			out[k] = v
		}
	}
	return out
}

// withoutPytest returns a shallow copy of doc without tool.pytest*.
func withoutPytest(doc map[string]any) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	tool, ok := doc["tool"].(map[string]any)
	if !ok {
		return out
	}
	t := map[string]any{}
	for k, v := range tool {
		if !strings.HasPrefix(k, "pytest") {
			t[k] = v
		}
	}
	out["tool"] = t
	return out
}

func dropEmptyTool(doc map[string]any) {
	if t, ok := doc["tool"].(map[string]any); ok && len(t) == 0 {
		delete(doc, "tool")
	}
}
