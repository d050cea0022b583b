# make_sentinels on real test modules: which tests get which copies, what each copy changes,
# where it is written, and that the shifts it reports map the module back.
import ast
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import helpers
import sentinels
from helpers import REQUIRED, SEEDS

DEMO_FILE = "tests/test_formatting.py"


def derive(root, files, ids, seed, **kw):
    """Writes files into a fresh workspace under root and plants the sentinels of ids in it."""
    ws = helpers.write_tree(os.path.join(str(root), "seed%d" % seed), files)
    originals = {rel: helpers.read(ws, rel) for rel in files if rel.endswith(".py")}
    plan = sentinels.make_sentinels(helpers.config(ws, ids, **kw), helpers.rngs()[seed])
    return ws, plan, originals


def demo_files(*overlays):
    files = helpers.read_txtar("base.txtar")
    for name in ("test.txtar",) + overlays:
        files.update(helpers.read_txtar(name))
    return files


def planted(ws, plan, originals):
    """Each sentinel with the original it copies and what it changed there: a list of
    (sentinel, original's key, change, copy's FunctionDef, original's FunctionDef)."""
    out, parsed = [], {}
    for s in plan["public"]["sentinels"]:
        rel = s["id"].split("::", 1)[0]
        if rel not in parsed:
            parsed[rel] = (helpers.tests_of(ast.parse(helpers.read(ws, rel))),
                           helpers.tests_of(ast.parse(originals[rel])))
        new_tests, old_tests = parsed[rel]
        node = new_tests[helpers.key_of(s["id"])]
        if "of" in s:
            candidates = [helpers.key_of(s["of"])]
        else:  # a mutant does not say which test it copies: the one test it differs from in one value
            candidates = [k for k, n in old_tests.items() if k[0] == helpers.key_of(s["id"])[0]
                          and (helpers.change(n, node) or ("",))[0] == "constant"]
        assert len(candidates) == 1, "%s: copies %s" % (s["id"], candidates)
        key = candidates[0]
        out.append((s, key, helpers.change(old_tests[key], node), node, old_tests[key]))
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_demo_gets_each_kind_asked_for(tmp_path, seed):
    """The demo's three required tests each compare with string literals: every kind is planted
    to the count asked, twins, near mutants and negations of required tests only."""
    ws, plan, originals = derive(tmp_path, demo_files(), REQUIRED, seed)
    kinds = [s["kind"] for s in plan["public"]["sentinels"]]
    assert sorted(kinds) == sorted(["twin"] * 2 + ["mutant"] * 3 + ["near"] * 6 + ["negated"] * 3)
    assert plan["public"]["v"] == 1
    assert plan["ids"] == [s["id"] for s in plan["public"]["sentinels"]]
    assert len(set(plan["ids"])) == len(plan["ids"])
    assert plan["files"] == [os.path.join(ws, DEMO_FILE)]
    assert plan["paths"] == [os.path.join(ws, "tests")]  # tests/ is no package: append mode puts it first
    for s in plan["public"]["sentinels"]:
        assert s["id"].startswith(DEMO_FILE + "::test_")
        assert ("of" in s) == (s["kind"] != "mutant")
        if "of" in s:
            assert s["of"] in REQUIRED
    negated = [s["of"] for s in plan["public"]["sentinels"] if s["kind"] == "negated"]
    assert sorted(negated) == sorted(REQUIRED)  # one each: every required test asserts first


@pytest.mark.parametrize("seed", SEEDS)
def test_demo_copies_change_what_their_kind_says(tmp_path, seed):
    ws, plan, originals = derive(tmp_path, demo_files(), REQUIRED, seed)
    for s, key, change, node, orig in planted(ws, plan, originals):
        kind = s["kind"]
        assert change is not None, "%s %s changes more than its kind allows" % (kind, s["id"])
        if kind == "twin":
            assert change == ("same",)
            # Verbatim: the very bytes of the original, but for its name.
            assert source_of(ws, node) == source_of_bytes(originals[DEMO_FILE], orig).replace(
                orig.name.encode(), node.name.encode(), 1)
        elif kind == "negated":
            assert change[0] == "negated"
        else:
            _, _, old, new = change
            assert type(old) is type(new) and old != new
            differing = sum(1 for a, b in zip(old, new) if a != b)
            assert len(old) == len(new)
            if kind == "mutant":
                assert differing >= 2, (old, new)
            else:
                assert differing in (1, 2), (old, new)  # a swap, a moved separator, a digit off by one


@pytest.mark.parametrize("seed", SEEDS)
def test_demo_copies_sit_beside_their_originals(tmp_path, seed):
    """A sentinel sits right before or right after the test it copies; a twin always after."""
    ws, plan, originals = derive(tmp_path, demo_files(), REQUIRED, seed)
    tree = ast.parse(helpers.read(ws, DEMO_FILE))
    order = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    names = {helpers.key_of(s)[1] for s in plan["ids"]}
    for s, key, change, node, orig in planted(ws, plan, originals):
        i, j = order.index(node.name), order.index(key[1])
        between = order[min(i, j) + 1:max(i, j)]
        assert all(n in names for n in between), "%s and %s have an original test between them" % (s["id"], key)
        if s["kind"] == "twin":
            assert i > j


@pytest.mark.parametrize("seed", SEEDS)
def test_negations_follow_their_originals_when_asked(tmp_path, seed):
    ws, plan, originals = derive(tmp_path, demo_files(), REQUIRED, seed, negated_after=True)
    order = [n.name for n in ast.parse(helpers.read(ws, DEMO_FILE)).body if isinstance(n, ast.FunctionDef)]
    for s, key, change, node, orig in planted(ws, plan, originals):
        if s["kind"] in ("twin", "negated"):
            assert order.index(node.name) > order.index(key[1])


@pytest.mark.parametrize("seed", SEEDS)
def test_shifts_map_every_line_back(tmp_path, seed):
    """shifts are [line after which, count] in the module as it was (Plan.OriginalLine reads them):
    every line of the original is found at its shifted place, and the inserted lines are exactly the
    sentinels and the blank lines around them."""
    ws, plan, originals = derive(tmp_path, demo_files(), REQUIRED, seed)
    shifts = plan["public"]["shifts"][DEMO_FILE]
    assert shifts == sorted(shifts) and all(n > 0 for _, n in shifts)
    check_shifts(originals[DEMO_FILE], helpers.read(ws, DEMO_FILE), shifts)
    inserted = set(range(1, len(helpers.read(ws, DEMO_FILE).splitlines()) + 1)) - set(
        forward(shifts, len(originals[DEMO_FILE].splitlines())))
    tree = ast.parse(helpers.read(ws, DEMO_FILE))
    sentinel_lines = set()
    for n in tree.body:
        if isinstance(n, ast.FunctionDef) and n.name in {helpers.key_of(i)[1] for i in plan["ids"]}:
            sentinel_lines.update(range(n.lineno, n.end_lineno + 1))
    lines = helpers.read(ws, DEMO_FILE).splitlines()
    assert sentinel_lines <= inserted
    assert all(lines[i - 1].strip() == b"" for i in inserted - sentinel_lines)


def forward(shifts, count):
    """Where each line 1..count of the original is in the module as written."""
    return [line + sum(n for at, n in shifts if at < line) for line in range(1, count + 1)]


def check_shifts(old, new, shifts, exact=True):
    old_lines, new_lines = old.splitlines(), new.splitlines()
    if exact:
        assert len(new_lines) == len(old_lines) + sum(n for _, n in shifts)
    for line, at in enumerate(forward(shifts, len(old_lines)), 1):
        assert new_lines[at - 1] == old_lines[line - 1], "line %d is not at %d" % (line, at)


def test_shifts_of_a_module_without_a_final_newline(tmp_path):
    """The module's own lines keep their places. (Its last test's copies lack the final newline
    too: two copies written after it share a line break, so the counts there run one over. No line
    of the module follows them, so no original line maps wrong.)"""
    src = b"def test_one():\n    assert str(12345) == '12345'\n\n\ndef test_two():\n    assert str(678) == '678'"
    for seed in SEEDS:
        ws = helpers.write_tree(tmp_path / str(seed), {"test_end.py": src})
        plan = sentinels.make_sentinels(helpers.config(ws, ["test_end.py::test_two"]), helpers.rngs()[seed])
        new = helpers.read(ws, "test_end.py")
        ast.parse(new)
        check_shifts(src, new, plan["public"]["shifts"]["test_end.py"], exact=False)


def source_of(ws, node):
    return source_of_bytes(helpers.read(ws, DEMO_FILE), node)


def source_of_bytes(data, node):
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    return b"".join(data.splitlines(keepends=True)[first - 1:node.end_lineno])


# A module in the styles of real projects: pytest classes, a unittest.TestCase in camelCase,
# parametrize, a test that reads its own name, and tests with an early return.
STYLES = '''import unittest

import pytest

HAVE_X = None


def helper(x):
    return x


class TestWords:
    def test_upper_word(self):
        assert "abc".upper() == "ABC"

    def test_title_word(self):
        assert "abc def".title() == "Abc Def"


class SignCases(unittest.TestCase):
    def testKeepsTheSign(self):
        self.assertEqual(str(-12345), "-12345")
        self.assertIn("-", str(-1))

    def testDropsNothing(self):
        self.assertTrue(str(12345).isdigit())


@pytest.mark.parametrize(
    "n, text",
    [(1, "1"), (22, "22")],
)
def test_str_of_int(n, text):
    assert str(n) == text
    assert str(n * 1000) == text + "000"


def test_named_after_itself(request):
    assert request.node.name == "test_named_after_itself"
    assert str(10) == "10"


def test_guarded_later():
    assert helper("left-right") == "left-right"
    if HAVE_X is None:
        return
    assert helper("never-checked") == "never-checked"


def test_guarded_first():
    if HAVE_X is None:
        return
    assert helper("never-checked") == "never-checked"
'''

STYLE_FILE = "tests/test_style.py"
STYLE_IDS = [STYLE_FILE + "::" + t for t in (
    "TestWords::test_upper_word", "TestWords::test_title_word", "SignCases::testKeepsTheSign",
    "SignCases::testDropsNothing", "test_str_of_int[1-1]", "test_str_of_int[22-22]", "test_named_after_itself",
    "test_guarded_later", "test_guarded_first")]


def style_plan(tmp_path, seed):
    # Asked for more than there is, so that every test that can get a kind gets it.
    return derive(tmp_path, {STYLE_FILE: STYLES}, STYLE_IDS, seed, twins=50, mutants=50, near=100, negated=50)


def originals_by_kind(tmp_path, seed):
    ws, plan, originals = style_plan(tmp_path, seed)
    got = {}
    for s, key, change, node, orig in planted(ws, plan, originals):
        got.setdefault(s["kind"], set()).add(key)
    return got


WORDS, SIGNS = "TestWords", "SignCases"


@pytest.mark.parametrize("seed", SEEDS)
def test_styles_which_tests_get_which_copies(tmp_path, seed):
    got = originals_by_kind(tmp_path, seed)
    # A twin for every required test but the one that reads its own name (request.node), once
    # per function (two parameter sets, one twin).
    twinned = {(WORDS, "test_upper_word"), (WORDS, "test_title_word"), (SIGNS, "testKeepsTheSign"),
               (SIGNS, "testDropsNothing"), (None, "test_str_of_int"), (None, "test_guarded_later"),
               (None, "test_guarded_first")}
    assert got["twin"] == twinned
    # A negation for each of those with an assertion before its first return.
    assert got["negated"] == twinned - {(None, "test_guarded_first")}
    # Near mutants and mutants need a literal compared in a top-level assertion before the first
    # return (not str(n) == text, not text + "000"; not assertTrue); a test that reads its own
    # name may get them, as a copy that fails for its name fails as it should.
    literal = {(WORDS, "test_upper_word"), (WORDS, "test_title_word"), (SIGNS, "testKeepsTheSign"),
               (None, "test_named_after_itself"), (None, "test_guarded_later")}
    assert got["near"] == literal
    assert got["mutant"] == literal


@pytest.mark.parametrize("seed", SEEDS)
def test_styles_change_only_what_runs_before_a_return(tmp_path, seed):
    ws, plan, originals = style_plan(tmp_path, seed)
    for s, key, change, node, orig in planted(ws, plan, originals):
        if key == (None, "test_guarded_later") and s["kind"] != "twin":
            assert change[1] == 0, "%s changes statement %d, after the return" % (s["kind"], change[1])
        if key == (SIGNS, "testKeepsTheSign") and s["kind"] == "negated":
            assert ast.unparse(node.body[change[1]]) in (
                "self.assertNotEqual(str(-12345), '-12345')", "self.assertNotIn('-', str(-1))")


@pytest.mark.parametrize("seed", SEEDS)
def test_styles_parametrized_copies_keep_the_parameters(tmp_path, seed):
    """A copy of a parametrized test is parametrized alike: its ID carries the parameter set of the
    required ID it was made for, and the copy's decorators are the original's."""
    ws, plan, originals = style_plan(tmp_path, seed)
    for s, key, change, node, orig in planted(ws, plan, originals):
        if key == (None, "test_str_of_int"):
            assert re.search(r"::test_\w+\[(1-1|22-22)\]$", s["id"]), s["id"]
            assert [helpers.dump(d) for d in node.decorator_list] == [helpers.dump(d) for d in orig.decorator_list]


@pytest.mark.parametrize("seed", SEEDS)
def test_styles_names_follow_the_module(tmp_path, seed):
    """Names are made of the words of the test's siblings, in their style: camelCase in the
    unittest class, snake_case elsewhere; never a name the module already uses."""
    ws, plan, originals = style_plan(tmp_path, seed)
    used = helpers.load(helpers.write_tree(tmp_path / "orig", {STYLE_FILE: STYLES}), STYLE_FILE).names
    words = {WORDS: {"upper", "word", "title"}, SIGNS: {"keeps", "the", "sign", "drops", "nothing"},
             None: {"str", "of", "int", "named", "after", "itself", "guarded", "later", "first"}}
    for s, key, change, node, orig in planted(ws, plan, originals):
        name = node.name
        assert name not in used
        if key[0] == SIGNS:
            parts = re.findall(r"[A-Z][a-z]*|\d+", name[4:])
            assert name.startswith("test") and "".join(parts) == name[4:], name
        else:
            parts = name[5:].split("_")
            assert name.startswith("test_") and name == name.lower(), name
        picked = [p.lower() for p in parts if not p.isdigit()]
        assert set(picked) <= words[key[0]] and 2 <= len(picked) <= 4, name
    assert len({n for n in plan["ids"]}) == len(plan["ids"])


def test_a_module_that_does_not_parse_gets_nothing(tmp_path):
    ws = helpers.write_tree(tmp_path, {"test_broken.py": "def test_x(:\n    assert 1 == 1\n"})
    plan = sentinels.make_sentinels(helpers.config(ws, ["test_broken.py::test_x"]), helpers.rngs()[0])
    assert plan["public"]["sentinels"] == [] and plan["public"]["shifts"] == {}
    assert helpers.read(ws, "test_broken.py") == b"def test_x(:\n    assert 1 == 1\n"


def test_ids_the_bootstrap_cannot_place_get_nothing(tmp_path):
    """Nested classes, inherited tests and other files: no sentinel, and the module is untouched."""
    src = ("class TestOuter:\n    class TestInner:\n        def test_deep(self):\n"
           "            assert str(123) == '123'\n\n\nclass TestChild(Base):\n    pass\n")
    ws = helpers.write_tree(tmp_path, {"test_odd.py": src})
    ids = ["test_odd.py::TestOuter::TestInner::test_deep", "test_odd.py::TestChild::test_inherited",
           "test_other.txt::test_x", "test_missing.py::test_x"]
    plan = sentinels.make_sentinels(helpers.config(ws, ids), helpers.rngs()[0])
    assert plan["public"]["sentinels"] == []
    assert helpers.read(ws, "test_odd.py") == src.encode()


def run_pytest(ws, rel, junit):
    """The demo's tests under the host's pytest, as the bootstrap runs them (importlib mode, no ini
    file, the workspace importable): {test id: outcome}."""
    subprocess.run([sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull,
                    "--rootdir", ws, "--import-mode=importlib", "--junitxml", junit, rel],
                   cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False, timeout=120)
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("classname").replace(".", "/") + ".py::" + case.get("name")
        out[name] = "failed" if case.find("failure") is not None or case.find("error") is not None else (
            "skipped" if case.find("skipped") is not None else "passed")
    return out


@pytest.mark.parametrize("seed", range(3))
def test_demo_sentinels_run_as_their_kinds_say(tmp_path, seed):
    """With the reference fix, on the host's pytest: the required tests and their twins pass,
    every mutant, near mutant and negation fails."""
    ws, plan, originals = derive(tmp_path, demo_files("gold.txtar"), REQUIRED, seed)
    got = run_pytest(ws, DEMO_FILE, str(tmp_path / "junit.xml"))
    for id in REQUIRED:
        assert got[id] == "passed"
    for s in plan["public"]["sentinels"]:
        want = "passed" if s["kind"] == "twin" else "failed"
        assert got[s["id"]] == want, "%s %s: %s" % (s["kind"], s["id"], got[s["id"]])


def test_demo_without_the_fix(tmp_path):
    ws, plan, originals = derive(tmp_path, demo_files(), REQUIRED, 0)
    got = run_pytest(ws, DEMO_FILE, str(tmp_path / "junit.xml"))
    for id in REQUIRED:
        assert got[id] == "failed"
    for s in plan["public"]["sentinels"]:
        if s["kind"] in ("twin", "mutant"):
            assert got[s["id"]] == "failed", s
