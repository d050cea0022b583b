package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ErrNoMirror means the machine's apt sources name no Debian mirror for the recipe's suite.
var ErrNoMirror = errors.New("no apt mirror for the suite")

// DebianSuites are the Debian releases whose mirror is any Debian mirror's: a machine whose apt
// sources name one release's entry can build an image of another from the same URI.
var DebianSuites = map[string]bool{"buster": true, "bullseye": true, "bookworm": true, "trixie": true,
	"forky": true, "sid": true, "stable": true, "oldstable": true, "testing": true, "unstable": true}

// isDebianRelease reports whether an apt entry's suite is a Debian release (not its -updates or
// -security pockets, which live elsewhere).
func isDebianRelease(suite string) bool { return DebianSuites[suite] }

// AptSource is one "deb" entry of the machine's apt sources.
type AptSource struct {
	URI        string
	Suites     []string
	Components []string
	SignedBy   string // keyring path, empty when the entry names none
	File       string // where the entry was read, for error messages
}

// FindMirror reads the apt sources under root (normally "/") and returns the first "deb"
// entry that carries suite with the main component. The mirror is never hard-coded: a
// machine that can install packages already names one.
func FindMirror(root, suite string) (AptSource, error) {
	sources, err := ReadAptSources(root)
	if err != nil {
		return AptSource{}, err
	}
	for _, s := range sources {
		if slices.Contains(s.Suites, suite) && slices.Contains(s.Components, "main") {
			return s, nil
		}
	}
	// A Debian mirror serves every Debian release: an entry for one (bookworm) names the mirror
	// of another (bullseye) as well, with the same keyring.
	if DebianSuites[suite] {
		for _, s := range sources {
			if slices.Contains(s.Components, "main") && slices.ContainsFunc(s.Suites, isDebianRelease) {
				s.Suites = []string{suite}
				return s, nil
			}
		}
	}
	return AptSource{}, fmt.Errorf(
		"%w %q in %s/etc/apt/sources.list{,.d/*.list,.d/*.sources}%s: pass --mirror URL (a Debian mirror that has %s) and --keyring FILE (e.g. /usr/share/keyrings/debian-archive-keyring.gpg from the debian-archive-keyring package), or add a deb entry for it",
		ErrNoMirror,
		suite,
		strings.TrimSuffix(root, "/"),
		whatIsListed(root),
		suite,
	)
}

var (
	reListURI   = regexp.MustCompile(`(?m)^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)`)
	reDeb822URI = regexp.MustCompile(`(?mi)^(URIs|Suites):[ \t]*(.*)$`)
)

// whatIsListed says what the apt sources list instead, for the error: on GitHub's Ubuntu
// runners that is Ubuntu suites behind mirror+file: URIs, which debootstrap cannot use.
func whatIsListed(root string) string {
	var files []string
	files = append(files, filepath.Join(root, "etc/apt/sources.list"))
	more, _ := filepath.Glob(filepath.Join(root, "etc/apt/sources.list.d/*"))
	files = append(files, more...)
	suites, uris := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		if !strings.HasSuffix(f, ".list") && !strings.HasSuffix(f, ".sources") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, g := range reListURI.FindAllStringSubmatch(string(data), -1) {
			uris[g[1]], suites[g[2]] = !usableURI(g[1]), true
		}
		for _, g := range reDeb822URI.FindAllStringSubmatch(string(data), -1) {
			for _, v := range strings.Fields(g[2]) {
				if strings.EqualFold(g[1], "URIs") {
					uris[v] = !usableURI(v)
				} else {
					suites[v] = true
				}
			}
		}
	}
	if len(suites) == 0 {
		return " (no deb entries)"
	}
	msg := " (they list " + strings.Join(slices.Sorted(maps.Keys(suites)), ", ")
	for _, u := range slices.Sorted(maps.Keys(uris)) {
		if uris[u] {
			msg += "; " + u + " is not a URI debootstrap can use"
			break
		}
	}
	return msg + ")"
}

// ReadAptSources returns every enabled "deb" entry with an http, https or file URI, in the
// order apt reads them: sources.list, then sources.list.d files by name.
func ReadAptSources(root string) ([]AptSource, error) {
	var out []AptSource
	main := filepath.Join(root, "etc/apt/sources.list")
	if data, err := os.ReadFile(main); err == nil {
		out = append(out, parseOneLine(string(data), main)...)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read apt sources: %w", err)
	}
	dir := filepath.Join(root, "etc/apt/sources.list.d")
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read apt sources: %w", err)
	}
	for _, e := range entries {
		more, err := readSourceFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

func readSourceFile(path string) ([]AptSource, error) {
	var parse func(string, string) []AptSource
	switch {
	case strings.HasSuffix(path, ".sources"):
		parse = parseDeb822
	case strings.HasSuffix(path, ".list"):
		parse = parseOneLine
	default:
		return nil, nil // apt ignores other names, e.g. *.disabled
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read apt sources: %w", err)
	}
	return parse(string(data), path), nil
}

// parseOneLine reads "deb [opts] uri suite component..." lines.
func parseOneLine(text, file string) []AptSource {
	var out []AptSource
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 3 || fields[0] != "deb" {
			continue
		}
		s := AptSource{File: file}
		rest := fields[1:]
		if strings.HasPrefix(rest[0], "[") {
			rest = takeOptions(rest, &s)
		}
		if len(rest) < 2 || !usableURI(rest[0]) {
			continue
		}
		s.URI, s.Suites, s.Components = rest[0], rest[1:2], rest[2:]
		out = append(out, s)
	}
	return out
}

// takeOptions consumes a "[key=value ...]" block and keeps signed-by.
func takeOptions(fields []string, s *AptSource) []string {
	for i, f := range fields {
		f = strings.Trim(f, "[]")
		if k, v, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "signed-by") {
			s.SignedBy = v
		}
		if strings.HasSuffix(fields[i], "]") {
			return fields[i+1:]
		}
	}
	return nil
}

// parseDeb822 reads paragraphs of "Field: value" lines separated by blank lines.
func parseDeb822(text, file string) []AptSource {
	var out []AptSource
	for _, para := range splitParagraphs(text) {
		if s, ok := deb822Entry(para, file); ok {
			out = append(out, s...)
		}
	}
	return out
}

func splitParagraphs(text string) []map[string]string {
	var paras []map[string]string
	cur := map[string]string{}
	last := ""
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, cur)
		}
		cur, last = map[string]string{}, ""
	}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case strings.HasPrefix(line, "#"):
		case line[0] == ' ' || line[0] == '\t':
			if last != "" {
				cur[last] += " " + strings.TrimSpace(line)
			}
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			last = strings.ToLower(strings.TrimSpace(k))
			cur[last] = strings.TrimSpace(v)
		}
	}
	flush()
	return paras
}

func deb822Entry(p map[string]string, file string) ([]AptSource, bool) {
	if !slices.Contains(strings.Fields(p["types"]), "deb") {
		return nil, false
	}
	if strings.EqualFold(strings.TrimSpace(p["enabled"]), "no") {
		return nil, false
	}
	var out []AptSource
	for _, uri := range strings.Fields(p["uris"]) {
		if !usableURI(uri) {
			continue
		}
		out = append(out, AptSource{
			URI: uri, Suites: strings.Fields(p["suites"]), Components: strings.Fields(p["components"]),
			SignedBy: keyringPath(p["signed-by"]), File: file,
		})
	}
	return out, len(out) > 0
}

// keyringPath keeps Signed-By only when it names a file; an inline key block is ignored.
func keyringPath(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " \t") {
		return v
	}
	return ""
}

func usableURI(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" && u.Scheme != "file" {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "file"
}
