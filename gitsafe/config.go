package gitsafe

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// MaxConfigBytes bounds a source's .git/config. A larger file is refused
// without being read.
const MaxConfigBytes int64 = 1 << 20

// tenderConfig is the whole config of every private copy. Nothing of the
// source's config survives: not its helpers, includes, remotes or hooks.
const tenderConfig = `[core]
	repositoryformatversion = 0
	bare = true
	filemode = true
	logallrefupdates = false
	fsmonitor = false
	hooksPath = /dev/null
	autocrlf = false
	symlinks = false
	untrackedCache = false
	splitIndex = false
	commitGraph = false
	multiPackIndex = false
[gc]
	auto = 0
[maintenance]
	auto = false
[protocol]
	allow = never
`

// checkSourceConfig reads the only facts gitsafe takes from a source's
// config: whether its object format and extensions are ones the private
// copy can hold. Everything else in the file is ignored. Values are read
// the way git reads them: trailing whitespace and CR are dropped, quotes
// removed and section and key names folded to lower case.
func checkSourceConfig(path string, data []byte) error {
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), int(MaxConfigBytes)+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = sectionName(line)
			line = afterSection(line)
		}
		key, value, ok := configEntry(line)
		if !ok {
			continue
		}
		if err := checkConfigEntry(path, section, key, value); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return unsafeRepo(path, "config cannot be read: "+err.Error())
	}
	return nil
}

// partialClone is why a partial clone is refused, and what to do instead.
const partialClone = "this is a partial clone (git clone --filter), whose missing objects git would fetch " +
	"lazily from its remote; make a full clone (git clone without --filter) and give that"

func checkConfigEntry(path, section, key, value string) error {
	v := strings.ToLower(value)
	switch section + "." + key {
	case "extensions.objectformat":
		if v != "sha1" {
			return unsafeRepo(
				path,
				fmt.Sprintf("extensions.objectFormat=%s: only SHA-1 repositories are supported", value),
			)
		}
	case "extensions.partialclone":
		return unsafeRepo(path, "extensions.partialClone: "+partialClone)
	case "remote.promisor", "remote.partialclonefilter":
		if v != "false" && v != "no" && v != "off" && v != "0" {
			return unsafeRepo(path, "remote."+key+": "+partialClone)
		}
	case "extensions.refstorage":
		if v != "files" {
			return unsafeRepo(
				path,
				fmt.Sprintf("extensions.refStorage=%s: only the files ref backend is supported", value),
			)
		}
	case "core.repositoryformatversion":
		if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 1 {
			return unsafeRepo(path, fmt.Sprintf("core.repositoryFormatVersion=%s is not supported", value))
		}
	}
	return nil
}

// sectionName returns the lower-cased section of a header line such as
// [core], [remote "origin"] or [extensions.x] (the part before a dot or
// quote).
func sectionName(line string) string {
	end := strings.IndexByte(line, ']')
	if end < 0 {
		end = len(line)
	}
	name := strings.TrimSpace(line[1:end])
	if i := strings.IndexAny(name, " \t\"."); i >= 0 {
		name = name[:i]
	}
	return strings.ToLower(name)
}

// afterSection returns what follows "]" on a header line; git allows a key
// on the same line ("[core] bare = true").
func afterSection(line string) string {
	if end := strings.IndexByte(line, ']'); end >= 0 {
		return strings.TrimSpace(line[end+1:])
	}
	return ""
}

func configEntry(line string) (key, value string, ok bool) {
	if line == "" || line[0] == '#' || line[0] == ';' {
		return "", "", false
	}
	key, value, found := strings.Cut(line, "=")
	key = strings.ToLower(strings.TrimSpace(key))
	if !found {
		return key, "true", key != ""
	}
	return key, configValue(value), key != ""
}

// configValue strips comments, quotes and surrounding whitespace (CR
// included) from a raw value.
func configValue(raw string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted && (c == '#' || c == ';'):
			return strings.TrimSpace(b.String())
		case c == '\\' && i+1 < len(raw):
			i++
			b.WriteByte(raw[i])
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
