package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tender-grader/tender/internal/clitest"
)

// readOnlyTmpfs mounts an empty tmpfs read-only for the test (Tender's tests run as root; root
// passes mode bits, not a read-only mount). A rw tmpfs remounted read-only keeps what was
// written first: fill, when given, writes it.
func readOnlyTmpfs(t *testing.T, fill func(dir string)) string {
	t.Helper()
	dir := t.TempDir()
	clitest.Must(t, syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0755"))
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	if fill != nil {
		fill(dir)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only (the test needs root): %v", dir, err)
	}
	return dir
}

// badInput is one bad input: the command, and what its one line must say (the file, field or
// flag, and the fix); none of it may appear where absent is.
type badInput struct {
	name   string
	args   []string
	want   []string
	absent []string
}

func checkBadInputs(t *testing.T, cases []badInput) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runTender(t, tc.args...)
			lines := errorLines(stderr)
			if code != exitUsage || len(lines) != 1 {
				t.Fatalf("exit %d, want %d with one line:\n%s", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(lines[0], w) {
					t.Errorf("the line does not say %q:\n%s", w, lines[0])
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(stderr, a) {
					t.Errorf("stderr says %q:\n%s", a, stderr)
				}
			}
			t.Logf("%s", lines[0])
		})
	}
}

// TestOutputsWhereNothingCanBeWritten: an --out or --resume on a kernel file system or a
// read-only mount is refused before anything runs, naming the flag, with no raw mkdir or
// rename line, no temporary directory the operator never named, and no resume hint when
// nothing was recorded.
func TestOutputsWhereNothingCanBeWritten(t *testing.T) {
	ro := readOnlyTmpfs(t, nil)
	bundleRO := readOnlyTmpfs(t, func(dir string) {
		clitest.WriteFile(t, filepath.Join(dir, "b", "results.jsonl"), "")
	})
	shards := shardBundles(t, pubResults("demo", "", mergeIDs(4)...), 2)
	insts := filepath.Join(t.TempDir(), "instances.jsonl")
	clitest.WriteJSONL(t, insts, []map[string]any{importInstance(t, "acme__calc-1", clitest.DemoBase, "0.3")})
	clone := clitest.DemoClone(t, repoRoot)
	demo := repoRoot + "/fixtures/demo"
	imp := func(out string) []string {
		return []string{"import", "swebench", "--instances", insts, "--repo", "acme/calc=" + clone, "--out", out}
	}
	roFix := "cannot write in the directory (read-only file system); choose another place"
	checkBadInputs(t, []badInput{
		{"merge --out in /proc", append([]string{"merge", "--out", "/proc/self/x"}, shards...),
			[]string{"--out /proc/self/x is on a kernel file system", "choose a directory on a disk"},
			[]string{"mkdir"}},
		{"merge --out under a read-only mount", append([]string{"merge", "--out", ro + "/m"}, shards...),
			[]string{"--out " + ro + "/m: cannot make the directory: " + ro +
				" is not writable (read-only file system)"},
			[]string{"mkdir"}},
		{"merge --out a read-only mount", append([]string{"merge", "--out", ro}, shards...),
			[]string{"--out " + ro + ": " + roFix}, []string{"mkdir", "merging"}},
		{"import --out under a read-only mount", imp(ro + "/suite"),
			[]string{"--out " + ro + "/suite: cannot make the directory: " + ro + " is not writable"},
			[]string{".import-", "mkdir"}},
		{"import --out a mount point", imp(ro),
			[]string{"--out " + ro + " is a mount point", "name a new directory inside it"},
			[]string{".import-", "file exists"}},
		{"import --out in /proc", imp("/proc/self/suite"),
			[]string{"--out /proc/self/suite is on a kernel file system"}, nil},
		{"grade --out a read-only mount", []string{"grade", demo, "--out", ro},
			[]string{"--out " + ro + ": " + roFix}, []string{"--resume", "results.jsonl"}},
		{"grade --resume on a read-only mount", []string{"grade", demo, "--resume", bundleRO + "/b"},
			[]string{"--resume " + bundleRO + "/b: cannot write in the directory (read-only file system)",
				"copy the bundle to a place you can write to"}, []string{".tmp"}},
	})
}

// TestFlagsThatNameTheWrongThing: an argument that cannot be used as given is refused, naming
// it and the fix: a bundle merge cannot join, --repo naming a file, --repo without the --suite
// it maps, a --name the suite loader would refuse (not a suite that "does not load").
func TestFlagsThatNameTheWrongThing(t *testing.T) {
	work := t.TempDir()
	insts := filepath.Join(work, "instances.jsonl")
	clitest.WriteJSONL(t, insts, []map[string]any{importInstance(t, "acme__calc-1", clitest.DemoBase, "0.3")})
	clone := clitest.DemoClone(t, repoRoot)
	imp := []string{"import", "swebench", "--instances", insts, "--out", filepath.Join(work, "out")}
	unsharded := sealPubBundle(t, pubResults("demo", "", mergeIDs(2)...), nil)
	checkBadInputs(t, []badInput{
		{"merge an unsharded bundle", []string{"merge", "--out", filepath.Join(work, "merged"), unsharded},
			[]string{"bundle " + unsharded +
				" was graded without --shard; merge joins the bundles of grade --shard k/n"},
			[]string{`shard ""`}},
		{"import --repo a file", append(imp, "--repo", "acme/calc="+insts),
			[]string{"--repo acme__calc=" + insts + ": not a directory; give the path of a local clone"},
			[]string{"lstat"}},
		{"image build --repo without --suite", []string{"image", "build", "--repo", "calc=" + clone},
			[]string{"--repo maps a repository of --suite DIR; give the suite too, or drop --repo"}, nil},
		{"import --name with a slash", append(imp, "--repo", "acme/calc="+clone, "--name", "my suite/1"),
			[]string{`--name "my suite/1": give the suite a name of 1-128 letters`},
			[]string{"a bug in tender import"}},
		{"import --name empty", append(imp, "--repo", "acme/calc="+clone, "--name", ""),
			[]string{`--name "": give the suite a name`}, []string{"a bug in tender import"}},
		{"import --ambiguous-ids unknown", append(imp, "--repo", "acme/calc="+clone, "--ambiguous-ids", "first"),
			[]string{`--ambiguous-ids "first": write error`, "or all"}, []string{"tender.yaml"}},
		{"import --apply unknown", append(imp, "--repo", "acme/calc="+clone, "--apply", "fuzz"),
			[]string{`--apply "fuzz": write strict`, "or swebench"}, []string{"tender.yaml"}},
	})
}

// TestImportRefusesAnInstanceNotTheSuite: an instance that the suite loader would refuse (an
// oversize problem statement, a test listed twice) is that instance's line, "cannot import
// ID: ...", which --keep-going skips; import never blames itself for it.
func TestImportRefusesAnInstanceNotTheSuite(t *testing.T) {
	clone := clitest.DemoClone(t, repoRoot)
	work := t.TempDir()
	big := importInstance(t, "acme__calc-2", clitest.DemoBase, "0.3")
	big["problem_statement"] = strings.Repeat("x", 300<<10)
	twice := importInstance(t, "acme__calc-3", clitest.DemoBase, "0.3")
	twice["FAIL_TO_PASS"] = []string{"tests/test_x.py::test_a", "tests/test_x.py::test_a"}
	insts := filepath.Join(work, "instances.jsonl")
	clitest.WriteJSONL(t, insts,
		[]map[string]any{importInstance(t, "acme__calc-1", clitest.DemoBase, "0.3"), big, twice})
	args := []string{"import", "swebench", "--instances", insts, "--repo", "acme/calc=" + clone}
	_, stderr, code := runTender(t, append(args, "--out", filepath.Join(work, "a"))...)
	want := []string{
		"cannot import acme__calc-2: problem_statement is 307200 bytes, over the suite's cap of 262144 for an issue; " +
			"shorten it, or skip the instance with --keep-going",
		`cannot import acme__calc-3: FAIL_TO_PASS[1]: "tests/test_x.py::test_a" is listed twice; list each test once`,
		"tender: bad suite: 2 instance(s) cannot be imported (listed above); nothing was written",
	}
	lines := errorLines(stderr)
	if code != exitUsage || len(lines) != len(want) {
		t.Fatalf("exit %d, want %d with %d lines:\n%s", code, exitUsage, len(want), stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start %q", i+1, lines[i], w)
		}
	}
	stdout, stderr, code := runTender(t, append(args, "--out", filepath.Join(work, "b"), "--keep-going")...)
	if code != exitOK || !strings.Contains(stdout, "1 pair(s)") ||
		!strings.Contains(stderr, "skipped acme__calc-2: problem_statement") ||
		strings.Contains(stderr, "a bug in tender import") {
		t.Errorf("--keep-going: exit %d, want 0 with acme__calc-2 and -3 skipped\n%s%s", code, stdout, stderr)
	}
}

// TestLinesThatNameTheFieldAndTheFix: malformed files whose parser's own message names no
// field or no fix (a key longer than YAML takes, a line over the scanner's cap, a byte order
// mark, a null record) get one line that does.
func TestLinesThatNameTheFieldAndTheFix(t *testing.T) {
	work := t.TempDir()
	clone := clitest.DemoClone(t, repoRoot)
	longKey := strings.Repeat("k", 900<<10)
	suiteDir := func(name, prepend string, pairs []string) string {
		dir := filepath.Join(work, name)
		clitest.Must(t, os.CopyFS(dir, os.DirFS(repoRoot+"/fixtures/demo")))
		doc := clitest.ReadFile(t, filepath.Join(dir, "tender.yaml"))
		if pairs != nil {
			doc = doc[:strings.Index(doc, "\npairs:")] + "\npairs_file: pairs.jsonl\n"
			clitest.WriteFile(t, filepath.Join(dir, "pairs.jsonl"), strings.Join(pairs, "\n")+"\n")
		}
		doc = strings.Replace(doc, "name: demo\n", "name: demo\n"+prepend, 1)
		clitest.WriteFile(t, filepath.Join(dir, "tender.yaml"), doc)
		return dir
	}
	pair := demoPairLine(t)
	inst := importInstance(t, "acme__calc-1", clitest.DemoBase, "0.3")
	line, err := json.Marshal(inst)
	clitest.Must(t, err)
	file := func(name, content string) string {
		p := filepath.Join(work, name)
		clitest.WriteFile(t, p, content)
		return p
	}
	bomInsts := file("bom.jsonl", "\ufeff"+string(line)+"\n")
	nullInsts := file("null.jsonl", "null\n"+string(line)+"\n")
	hugeInsts := file("huge.jsonl", string(line)+"\n"+`{"instance_id": "x-1", "problem_statement": "`+
		strings.Repeat("x", 65<<20)+`"}`+"\n")
	goodInsts := file("good.jsonl", string(line)+"\n")
	bomPreds := file("bompreds.jsonl", "\ufeff"+`{"instance_id": "acme__calc-1", "model_patch": ""}`+"\n")
	longEnv := file("env.yaml", "acme/calc:\n  "+longKey+": {image: x}\n")
	imp := func(out string, extra ...string) []string {
		return append([]string{"import", "swebench", "--repo", "acme/calc=" + clone, "--out", filepath.Join(work, out)},
			extra...)
	}
	checkBadInputs(t, []badInput{
		{"a 900 KB key in tender.yaml", []string{"validate", suiteDir("longkey", longKey+": 1\n", nil)},
			[]string{"tender.yaml: line 5: a key is 921600 bytes long, " +
				"and YAML takes keys of at most 1024 characters; shorten it"},
			[]string{"could not find expected"}},
		{"a 900 KB key in --env", imp("o1", "--instances", goodInsts, "--env", longEnv),
			[]string{"--env " + longEnv + ": line 2: a key is 921600 bytes long"}, []string{"mapping values"}},
		{"an instances line over the cap", imp("o2", "--instances", hugeInsts),
			[]string{"--instances " + hugeInsts +
				": bad SWE-bench record: line 2 is over 64 MiB, the most one record may take",
				"JSON Lines"}, []string{"bufio.Scanner"}},
		{"a BOM in --instances", imp("o3", "--instances", bomInsts),
			[]string{"--instances " + bomInsts + ": bad SWE-bench record: " +
				"the file starts with a byte order mark (U+FEFF); save it as UTF-8 without a BOM"},
			[]string{"invalid character"}},
		{"a BOM in --predictions", imp("o4", "--instances", goodInsts, "--predictions", bomPreds),
			[]string{"--predictions " + bomPreds + ": bad SWE-bench record: the file starts with a byte order mark"},
			nil},
		{"a BOM in pairs_file", []string{"validate", suiteDir("bompairs", "", []string{"\ufeff" + pair})},
			[]string{"pairs.jsonl: line 1: starts with a byte order mark (U+FEFF); " +
				"save the file as UTF-8 without a BOM"},
			[]string{"invalid character"}},
		{"a null line in pairs_file", []string{"validate", suiteDir("nullpair", "", []string{pair, "null"})},
			[]string{"pairs.jsonl: line 2: is null; write one pair object a line"}, []string{`is ""`}},
		{"a pairs_file line over the cap", []string{"validate", suiteDir("longpair", "",
			[]string{pair, `{"id": "` + strings.Repeat("x", 1<<20) + `"}`})},
			[]string{"pairs.jsonl: line 2: is over 1048576 bytes, the most one pair may take"},
			[]string{"bufio.Scanner"}},
	})
	// A null record is that record's line, which --keep-going may skip.
	_, stderr, code := runTender(t, imp("o5", "--instances", nullInsts)...)
	want := "cannot import instances record 1: bad SWE-bench record: the record is null"
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("a null instance: exit %d\n%s", code, stderr)
	}
}

// demoPairLine is the demo suite's first pair as one pairs_file line.
func demoPairLine(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"id": "gold-fix", "repository": "calc", "base_commit": clitest.DemoBase,
		"issue": "pairs/gold-fix/issue.md", "patch": "pairs/gold-fix/patch.diff",
		"fail_to_pass": []string{"tests/test_formatting.py::test_group_digits_negative"}})
	clitest.Must(t, err)
	return string(b)
}

// TestPartialCloneSaysWhatToDo: a partial clone is refused whichever trace of it is seen
// first (its config, or a promisor pack once the config is cleaned), with the cause and the
// fix.
func TestPartialCloneSaysWhatToDo(t *testing.T) {
	clone := clitest.DemoClone(t, repoRoot)
	work := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok && args[0] == "config" && ee.ExitCode() == 5 {
			return // --unset of a key this git version does not write
		}
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(clone, "config", "uploadpack.allowFilter", "true")
	git(clone, "branch", "-f", "main", clitest.DemoBase)
	partial := filepath.Join(work, "partial")
	git(work, "clone", "-q", "--filter=blob:none", "file://"+clone, partial)
	cleaned := filepath.Join(work, "cleaned")
	git(work, "clone", "-q", "--filter=blob:none", "file://"+clone, cleaned)
	for _, key := range []string{"remote.origin.promisor", "remote.origin.partialclonefilter",
		"extensions.partialclone"} {
		git(cleaned, "config", "--unset", key)
	}
	insts := filepath.Join(work, "instances.jsonl")
	clitest.WriteJSONL(t, insts, []map[string]any{importInstance(t, "acme__calc-1", clitest.DemoBase, "0.3")})
	fix := "this is a partial clone (git clone --filter), whose missing objects git would fetch lazily " +
		"from its remote; make a full clone (git clone without --filter) and give that"
	imp := func(repo, out string) []string {
		return []string{"import", "swebench", "--instances", insts, "--repo", "acme/calc=" + repo,
			"--out", filepath.Join(work, out)}
	}
	checkBadInputs(t, []badInput{
		{"its config", imp(partial, "o1"), []string{"--repo acme__calc=" + partial, "/.git/config", fix}, nil},
		{"a promisor pack", imp(cleaned, "o2"),
			[]string{"--repo acme__calc=" + cleaned, ".promisor\": a promisor pack: " + fix}, nil},
	})
}

// TestInterruptedBeforeGradingIsNotTheEngine: a signal that arrives while the backend is being
// opened (the context is cancelled before the engine answers) is one line saying that nothing
// was recorded, with exit 130, never a Docker error.
func TestInterruptedBeforeGradingIsNotTheEngine(t *testing.T) {
	for _, resume := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "out")
		args := []string{"grade", repoRoot + "/fixtures/demo", "--out", out}
		want := "tender: interrupted before grading began; nothing was recorded and " + out + " is empty; " +
			"run the same command again\n"
		if resume {
			clitest.WriteFile(t, filepath.Join(out, "results.jsonl"), "")
			args = []string{"grade", repoRoot + "/fixtures/demo", "--resume", out}
			want = "tender: interrupted before grading began; nothing new was recorded; " +
				"continue with --resume " + out + "\n"
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var stdout, stderr strings.Builder
		code := Main(ctx, "dev", args, []string{"PATH=" + os.Getenv("PATH")}, strings.NewReader(""), &stdout, &stderr)
		if code != exitInterrupted || stderr.String() != want {
			t.Errorf("resume %v: exit %d, want %d and exactly\n%s got\n%s",
				resume, code, exitInterrupted, want, stderr.String())
		}
	}
}
