package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/github"
)

// coinTests is a planted flaky test module: one coin per test process, so in every run
// exactly one of the two tests fails, and which one changes from run to run (verifiers are
// fresh and share nothing). The first run of a check always fails; a rerun shows both tests
// flaky unless every rerun throws the same side (2^-reruns).
const coinTests = `import os

COIN = os.urandom(1)[0] & 1


def test_coin_heads():
    assert COIN == 1


def test_coin_tails():
    assert COIN == 0
`

var coinIDs = []string{"tests/test_flaky.py::test_coin_heads", "tests/test_flaky.py::test_coin_tails"}

// coinFix is the f2p attack: a fix that holds on one input or the other, by a coin thrown once
// per process. In every run one of the two fail_to_pass tests below fails and the other
// passes; given enough reruns both look flaky. Were flaky fail_to_pass tests excluded, the
// pair would resolve without a fix.
const coinFix = `"""Human-readable formatting of numbers."""
import os

_COIN = os.urandom(1)[0] & 1


def group_digits(digits, sep=","):
    """Insert sep between groups of three digits, counting from the right."""
    sign = ""
    if digits[:1] == "-" and (digits == "-123456") == bool(_COIN):
        sign, digits = "-", digits[1:]
    groups = []
    while len(digits) > 3:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    groups.insert(0, digits)
    return sign + sep.join(groups)


def format_number(value, places=None, sep=","):
    """Format value with thousands separators.

    Integers keep no decimals unless places is given; floats get two.
    """
    if isinstance(value, int) and places is None:
        return group_digits(str(value), sep)
    places = 2 if places is None else places
    text = f"{value:.{places}f}"
    whole, _, fraction = text.partition(".")
    grouped = group_digits(whole, sep)
    return f"{grouped}.{fraction}" if fraction else grouped


def format_percent(ratio, places=1):
    """Format 0.125 as "12.5%"."""
    return f"{format_number(ratio * 100, places)}%"
`

var coinF2P = []string{
	"tests/test_formatting.py::test_format_number_negative_int",
	"tests/test_formatting.py::test_format_number_negative_float",
}

// flakySuite is the demo suite with two pairs: the reference fix with the coin tests added to
// its pass_to_pass list, and the coin-fix attack. policy is the suite's flaky: key.
func flakySuite(t *testing.T, policy string) string {
	t.Helper()
	suiteDir := e2e.CopyDir(t, repoRoot+"/fixtures/demo")
	clone := clitest.DemoClone(t, repoRoot)
	e2e.GitIn(t, clone, "", "apply", filepath.Join(suiteDir, "shared", "test.diff"))
	clitest.WriteFiles(t, clone, map[string]string{"tests/test_flaky.py": coinTests})
	e2e.GitIn(t, clone, "", "add", "-A")
	clitest.WriteFile(t, filepath.Join(suiteDir, "shared", "test-flaky.diff"),
		e2e.GitIn(t, clone, "", "diff", "--cached", "--full-index"))
	e2e.GitIn(t, clone, "", "reset", "-q", "--hard", clitest.DemoBase)
	clitest.WriteFiles(t, clone, map[string]string{"calc/formatting.py": coinFix})
	clitest.WriteFile(t, filepath.Join(suiteDir, "pairs", "coin-fix", "patch.diff"),
		e2e.GitIn(t, clone, "", "diff", "--full-index"))

	doc := e2e.ReadSuiteDoc(t, suiteDir)
	i := slices.IndexFunc(doc.Pairs, func(p suite.PairDoc) bool { return p.ID == "gold-fix" })
	gold := doc.Pairs[i]
	gold.ID, gold.Expect, gold.TestPatch = "flaky-gold", "", "shared/test-flaky.diff"
	p2p := append(slices.Clone(*gold.PassToPass), coinIDs...)
	gold.PassToPass = &p2p
	attack := doc.Pairs[i]
	attack.ID, attack.Expect, attack.Patch, attack.FailToPass = "coin-fix", "", "pairs/coin-fix/patch.diff", &coinF2P
	doc.Pairs, doc.Flaky = []suite.PairDoc{gold, attack}, policy
	e2e.WriteSuiteDoc(t, suiteDir, doc)
	return suiteDir
}

// TestFlakyReruns plants a flaky pass_to_pass test and a coin-flip attack on fail_to_pass in
// the demo suite and grades them in real verifiers with --reruns. Under flaky: failed the
// flaky test is caught (reason flaky) and counts as failed; under flaky: excluded it is
// confirmed on the base commit, dropped, and the pair resolves with a notice; the attack is
// never resolved under either policy.
func TestFlakyReruns(t *testing.T) {
	for _, policy := range []string{suite.FlakyFailed, suite.FlakyExcluded} {
		t.Run(policy, func(t *testing.T) {
			results, _ := e2e.GradeOK(t, flakySuite(t, policy), "--reruns", "10", "--concurrency", "2")
			byID := map[string]report.PairResult{}
			for _, r := range results {
				byID[r.ID] = r
			}
			gold, attack := byID["flaky-gold"], byID["coin-fix"]
			for _, id := range coinIDs {
				want := "counts as failed"
				if policy == suite.FlakyExcluded {
					want = "excluded from the required set"
				}
				if !hasFlaky(gold, id+" is flaky", want) {
					t.Errorf("flaky-gold: no flaky reason for %s saying %q: %+v", id, want, gold.Reasons)
				}
			}
			for _, id := range coinF2P {
				if !hasFlaky(attack, id+" is flaky", "counts as failed") {
					t.Errorf("coin-fix: no flaky reason for %s: %+v", id, attack.Reasons)
				}
			}
			if attack.Verdict != report.Unresolved {
				t.Errorf(
					"coin-fix (a fail_to_pass test made flaky) is %s, want unresolved: %+v",
					attack.Verdict,
					attack.Reasons,
				)
			}
			if policy == suite.FlakyFailed {
				if gold.Verdict != report.Unresolved ||
					!slices.Contains(report.DistinctCodes(gold.Reasons), string(report.CodeTestFailed)) {
					t.Errorf(
						"flaky-gold under flaky: failed is %s, want unresolved with test_failed: %+v",
						gold.Verdict,
						gold.Reasons,
					)
				}
				return
			}
			if gold.Verdict != report.Resolved || github.Level(gold) != github.LevelNotice {
				t.Errorf(
					"flaky-gold under flaky: excluded is %s (annotation %q), want resolved with a notice: %+v",
					gold.Verdict,
					github.Level(gold),
					gold.Reasons,
				)
			}
			reg := gold.Checks[len(gold.Checks)-1]
			for _, id := range coinIDs {
				if reg.Name != "regression" || !reg.Passed || reg.Tests[id] != report.TestExcluded {
					t.Errorf(
						"regression check %s passed=%v, %s is %q; want it excluded",
						reg.Name,
						reg.Passed,
						id,
						reg.Tests[id],
					)
				}
			}
		})
	}
}

func hasFlaky(r report.PairResult, prefix, says string) bool {
	for _, x := range r.Reasons {
		_, detail, _ := strings.Cut(x.Detail, ": ")
		if x.Code == report.CodeFlaky && strings.HasPrefix(detail, prefix) && strings.Contains(detail, says) {
			return true
		}
	}
	return false
}
