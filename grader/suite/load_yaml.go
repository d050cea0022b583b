package suite

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// plainTags are the only tags tender.yaml may carry, implicitly or written out. Anything
// else (!!binary, !!timestamp, a local !tag) decodes into something other than what is
// written, and is refused.
var plainTags = map[string]bool{"!!str": true, "!!int": true, "!!float": true, "!!bool": true,
	"!!null": true, "!!seq": true, "!!map": true, "!!merge": true}

// checkNodes walks the document for values that decode without error but cannot mean what
// they say: an explicit tag other than the plain ones, a number that is not finite, and a NUL
// anywhere. It names the field of the first one.
func (l *loader) checkNodes(n *yaml.Node, field string) error {
	if n.Kind == yaml.AliasNode {
		return nil // its anchor was checked where it stands
	}
	if n.Style&yaml.TaggedStyle != 0 && !plainTags[n.ShortTag()] {
		return l.errf(field, "line %d: the tag %q is not allowed; write the value plainly", n.Line, n.Tag)
	}
	if n.Kind == yaml.ScalarNode {
		if strings.ContainsRune(n.Value, 0) {
			return l.errf(field, "line %d: holds a NUL character; remove it", n.Line)
		}
		if n.ShortTag() == "!!float" && !finite(n.Value) {
			return l.errf(field, "line %d: %s is not a finite number; give a number such as 1 or 0.5", n.Line, n.Value)
		}
	}
	for i := 0; i < len(n.Content); i++ {
		c, f := n.Content[i], fmt.Sprintf("%s[%d]", field, i)
		switch n.Kind {
		case yaml.DocumentNode:
			f = field
		case yaml.MappingNode:
			if err := l.checkNodes(c, joinField(field, c.Value)); err != nil { // the key
				return err
			}
			if i++; i == len(n.Content) {
				return nil
			}
			c, f = n.Content[i], joinField(field, c.Value)
		}
		if err := l.checkNodes(c, f); err != nil {
			return err
		}
	}
	return nil
}

func joinField(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// finite reports whether a YAML float is a finite float64 (.nan, .inf and 1e999 are not).
func finite(v string) bool {
	s := strings.ToLower(strings.TrimLeft(v, "+-"))
	if s == ".nan" || s == ".inf" {
		return false
	}
	_, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
	return err == nil
}

var reTypeErr = regexp.MustCompile("^line (\\d+): cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")

// typeError rewrites one of yaml.v3's type errors ("line 10: cannot unmarshal !!seq into
// string") for the person who wrote the file: the field, what was there and what was wanted,
// in words. The field is that of the value on that line whose kind matches.
func typeError(msg string, doc *yaml.Node) (field, text string, ok bool) {
	g := reTypeErr.FindStringSubmatch(msg)
	if g == nil {
		return "", msg, false
	}
	line, _ := strconv.Atoi(g[1])
	got := kindWords[g[2]]
	if got == "" {
		got = "a value"
	}
	if g[3] != "" {
		got += " (" + strconv.Quote(g[3]) + ")"
	}
	field = fieldAt(doc, "", line, g[2])
	return field, fmt.Sprintf("line %d: got %s, want %s", line, got, goTypeWords(g[4])), true
}

var kindWords = map[string]string{"!!seq": "a list", "!!map": "a mapping", "!!str": "a string",
	"!!int": "a whole number", "!!float": "a number", "!!bool": "true or false", "!!null": "nothing"}

// goTypeWords names a Go type of the suite's documents the way the README does.
func goTypeWords(t string) string {
	t = strings.TrimPrefix(t, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map[") || strings.HasPrefix(t, "suite."):
		return "a mapping"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	}
	return "another kind of value"
}

// fieldAt finds the field of the first value on line whose tag is tag.
func fieldAt(n *yaml.Node, field string, line int, tag string) string {
	if n.Line == line && n.ShortTag() == tag && n.Kind != yaml.DocumentNode {
		return field
	}
	for i := 0; i < len(n.Content); i++ {
		c, f := n.Content[i], fmt.Sprintf("%s[%d]", field, i)
		switch n.Kind {
		case yaml.DocumentNode:
			f = field
		case yaml.MappingNode:
			if i++; i == len(n.Content) {
				return ""
			}
			c, f = n.Content[i], joinField(field, c.Value)
		}
		if got := fieldAt(c, f, line, tag); got != "" {
			return got
		}
	}
	return ""
}

// maxYAMLKey is the longest key the YAML parser takes: yaml.v3 reads a key only within 1024
// characters of its start, and past that says "could not find expected ':'" or worse.
const maxYAMLKey = 1024

// LongKey finds the first line of a YAML document whose key is longer than the parser takes,
// and the key's length in bytes; line is 0 when there is none. Only a document that failed to
// parse needs it: the parser's own message names neither the key nor the limit.
func LongKey(data []byte) (line, n int) {
	for i, text := range bytes.Split(data, []byte("\n")) {
		if len(text) <= maxYAMLKey {
			continue
		}
		rest := bytes.TrimLeft(text, " \t")
		for bytes.HasPrefix(rest, []byte("- ")) || bytes.HasPrefix(rest, []byte("? ")) {
			rest = bytes.TrimLeft(rest[2:], " \t")
		}
		if bytes.HasPrefix(rest, []byte("#")) {
			continue
		}
		k := bytes.Index(rest, []byte(": "))
		if k < 0 && bytes.HasSuffix(bytes.TrimRight(rest, " \t\r"), []byte(":")) {
			k = len(bytes.TrimRight(rest, " \t\r")) - 1
		}
		if k > maxYAMLKey {
			return i + 1, k
		}
	}
	return 0, 0
}

// LongKeyError is the one line for a key LongKey found.
func LongKeyError(line, n int) string {
	return fmt.Sprintf("line %d: a key is %d bytes long, and YAML takes keys of at most %d characters; shorten it",
		line, n, maxYAMLKey)
}
