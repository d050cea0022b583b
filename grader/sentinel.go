package grader

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/junit"
)

// sentinels are two hidden tests with random, ordinary-looking names, chosen per check: one
// must pass and one must fail. Code under test that flips results from inside the test process
// cannot tell them from the required tests, so a flipped or missing sentinel shows the report
// was forged.
type sentinels struct {
	file     string // workspace-relative
	passName string
	failName string
	value    int64
}

var sentinelWords = []string{"parse", "format", "total", "round", "value", "merge", "split", "order",
	"count", "limit", "range", "scale", "empty", "large", "small", "nested", "unicode", "default",
	"repeat", "negative", "boundary", "config", "cache", "lookup", "render", "encode", "decode"}

func pick(words []string) string {
	n, err := rand.Int(rand.Reader, big.NewInt(int64(len(words))))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return words[n.Int64()]
}

func randomName() string {
	return pick(sentinelWords) + "_" + pick(sentinelWords) + "_" + pick(sentinelWords)
}

// newSentinels picks names that collide with nothing in the tree, in the directory of the
// first required test file so that the same conftest applies to them.
func newSentinels(tree string, ids []string) (*sentinels, error) {
	dir := "tests"
	if len(ids) > 0 {
		file, _, _ := strings.Cut(ids[0], "::")
		if d := path.Dir(file); strings.HasSuffix(file, ".py") && filepath.IsLocal(d) {
			dir = d
		}
	}
	for range 100 {
		s := &sentinels{file: path.Join(dir, "test_"+randomName()+".py"), passName: "test_" + randomName(), failName: "test_" + randomName()}
		n, _ := rand.Int(rand.Reader, big.NewInt(1000))
		s.value = n.Int64() + 2
		if s.passName == s.failName {
			continue
		}
		if _, err := os.Lstat(filepath.Join(tree, filepath.FromSlash(s.file))); os.IsNotExist(err) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no free sentinel name in %s", dir)
}

func (s *sentinels) write(tree string) error {
	src := fmt.Sprintf(`def _expected():
    return %d


def %s():
    assert _expected() == %d


def %s():
    assert _expected() == %d
`, s.value, s.passName, s.value, s.failName, s.value+1)
	return writeFile(filepath.Join(tree, filepath.FromSlash(s.file)), []byte(src), 0o644)
}

func (s *sentinels) ids() []string {
	return []string{s.file + "::" + s.passName, s.file + "::" + s.failName}
}

// verify checks the sentinels in a parsed report and returns the reasons when they show the
// report was forged: a flipped or missing sentinel, or an exit code of 0 although the failing
// sentinel failed. A collection or usage error (exit code above 1) is left to Reconcile: the
// check fails on its own.
func (s *sentinels) verify(rep *junit.Report, exit int) []report.Reason {
	if exit > 1 {
		return nil
	}
	passID, failID := s.ids()[0], s.ids()[1]
	var passSeen, failSeen int
	var passOK, failOK bool
	for _, c := range rep.Cases {
		switch c.ID {
		case passID:
			passSeen++
			passOK = c.Status == junit.Passed
		case failID:
			failSeen++
			failOK = c.Status == junit.Failed
		}
	}
	var why []string
	if passSeen != 1 || failSeen != 1 {
		why = append(why, "a sentinel test is missing from the report or reported twice")
	}
	if failSeen == 1 && !failOK {
		why = append(why, "the sentinel that must fail was not reported as failed")
	}
	if passSeen == 1 && !passOK {
		why = append(why, "the sentinel that must pass was not reported as passed")
	}
	if failOK && exit == 0 {
		why = append(why, "the runner exited 0 although a test failed")
	}
	if len(why) == 0 {
		return nil
	}
	return []report.Reason{{Code: report.CodeReportForged, Detail: strings.Join(why, "; ")}}
}

// redact hides the sentinels from logs that may be shown as candidate feedback: their names
// are replaced, and pytest's failure section and summary line for them are dropped.
func (s *sentinels) redact(b []byte) []byte {
	if s == nil {
		return b
	}
	const hidden = "<hidden>"
	r := strings.NewReplacer(s.file, hidden, s.passName, hidden, s.failName, hidden)
	var out []string
	skipping := false
	for _, line := range strings.SplitAfter(r.Replace(string(b)), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "___") || strings.HasPrefix(trimmed, "===") || strings.HasPrefix(trimmed, "---") {
			skipping = strings.HasPrefix(trimmed, "___") && strings.Contains(trimmed, hidden)
		}
		if skipping || strings.HasPrefix(trimmed, "FAILED "+hidden) {
			continue
		}
		out = append(out, line)
	}
	return []byte(strings.Join(out, ""))
}
