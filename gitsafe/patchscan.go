package gitsafe

import (
	"bytes"
	"regexp"
	"strconv"
)

// fileHeader is where one file of a patch starts, and whether it is a git
// ("diff --git") or a traditional ("---"/"+++") header.
type fileHeader struct {
	line  int
	git   bool
	names []string // raw header lines that carry a path
}

// nameLines are header lines that carry a path in a git diff.
var nameLines = []string{"diff --git ", "--- ", "+++ ", "rename from ", "rename to ", "copy from ", "copy to "}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// scanFileHeaders finds the file headers of a patch the way go-gitdiff
// does: "diff --git " lines, and "--- "/"+++ " pairs followed by "@@ -",
// skipping hunk bodies so that a removed line starting with "-- " is not
// taken for a header.
func scanFileHeaders(data []byte) []fileHeader {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out []fileHeader
	inGit := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case bytes.HasPrefix(l, []byte("diff --git ")):
			out = append(out, fileHeader{line: i + 1, git: true})
			inGit = true
		case bytes.HasPrefix(l, []byte("@@ -")):
			i = skipHunk(lines, i)
			inGit = false
		case !inGit && isTraditionalHeader(lines, i):
			out = append(out, fileHeader{line: i + 1, names: []string{string(lines[i]), string(lines[i+1])}})
			i++
			continue
		}
		if inGit && len(out) > 0 && isNameLine(l) {
			last := &out[len(out)-1]
			last.names = append(last.names, string(l))
		}
	}
	return out
}

func isNameLine(l []byte) bool {
	for _, p := range nameLines {
		if bytes.HasPrefix(l, []byte(p)) {
			return true
		}
	}
	return false
}

func isTraditionalHeader(lines [][]byte, i int) bool {
	return i+2 < len(lines) &&
		bytes.HasPrefix(lines[i], []byte("--- ")) &&
		bytes.HasPrefix(lines[i+1], []byte("+++ ")) &&
		bytes.HasPrefix(lines[i+2], []byte("@@ -"))
}

// skipHunk returns the index of the last line of the hunk starting at i.
func skipHunk(lines [][]byte, i int) int {
	m := hunkHeader.FindSubmatch(lines[i])
	if m == nil {
		return i
	}
	oldN, newN := hunkCount(m[2]), hunkCount(m[4])
	j := i + 1
	for ; j < len(lines) && (oldN > 0 || newN > 0); j++ {
		switch c := firstByte(lines[j]); c {
		case ' ', '\n', '\r':
			oldN--
			newN--
		case '-':
			oldN--
		case '+':
			newN--
		case '\\':
		default:
			return j - 1
		}
	}
	for j < len(lines) && firstByte(lines[j]) == '\\' {
		j++
	}
	return j - 1
}

func hunkCount(b []byte) int {
	if len(b) == 0 {
		return 1
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return 0
	}
	return n
}

func firstByte(l []byte) byte {
	if len(l) == 0 {
		return 0
	}
	return l[0]
}
