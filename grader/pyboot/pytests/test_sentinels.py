# make_sentinels on real test modules: which required tests are wholly held and get no copy,
# which get a twin, a negation, an unguarded copy; what each copy changes and where it is
# written; the held sites each planted module asks through; and the planted modules run by the
# host's pytest with the bootstrap's own parent answering their held sites (heldhost.py).
import ast
import json
import os
import re
import subprocess
import sys

import pytest

import held
import helpers
import heldhost
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


def private(plan):
    return plan["private"]["held"]


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
        key = helpers.key_of(s["of"])
        out.append((s, key, helpers.change(old_tests[key], node, private(plan)), node, old_tests[key]))
    return out


def literals_of(node):
    """The literals a function's top-level assertions compare with, as held_sites finds them."""
    return [s.literal for s in held.held_sites(node.body, ast, node) if s.op not in ("truth", "falsy")
            and not s.op.startswith("pair ")]


# --- the demo: every required test compares with literals, at its top level --------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_demo_is_wholly_held(tmp_path, seed):
    """The demo's three required tests each compare values with string literals at their top
    level: each is wholly held, with a token for each assertion, and gets no copy. The parent's
    half holds each literal with its operator; the plan has the line of each required test's
    def, and one line added (the held call's binding)."""
    ws, plan, originals = derive(tmp_path, demo_files(), REQUIRED, seed)
    pub = plan["public"]
    assert pub["v"] == 2 and pub["sentinels"] == [] and plan["ids"] == []
    assert plan["files"] == [os.path.join(ws, DEMO_FILE)]
    assert plan["paths"] == [os.path.join(ws, "tests")]  # tests/ is no package: append mode puts it first
    old = originals[DEMO_FILE]
    tests = helpers.tests_of(ast.parse(old))
    assert sorted(pub["held"]) == sorted(REQUIRED)
    tokens = []
    for of in REQUIRED:
        h = pub["held"][of]
        assert h["full"] is True
        want = literals_of(tests[helpers.key_of(of)])
        assert [held.decode(private(plan)[t][1]) for t in h["tokens"]] == want and len(want) in (1, 2)
        assert [private(plan)[t][0] for t in h["tokens"]] == ["=="] * len(want)
        tokens += h["tokens"]
    assert sorted(tokens) == sorted(private(plan)) and len(set(tokens)) == len(tokens)
    assert all(re.fullmatch(r"[0-9a-f]{16}", t) for t in tokens)
    lines = old.splitlines()
    for of, line in pub["lines"].items():
        assert lines[line - 1] == b"def " + of.split("::")[1].encode() + b"():"
    assert pub["shifts"] == {DEMO_FILE: [[len(lines), 1]]}


@pytest.mark.parametrize("seed", SEEDS)
def test_demo_module_loses_its_literals_and_no_line(tmp_path, seed):
    """The planted module has the original's lines, in place, but for the held assertions, whose
    literals are gone from it (the code under test reading its caller's source finds none of
    them), and ends with the binding of the held call's name."""
    ws, plan, originals = derive(tmp_path, demo_files(), REQUIRED, seed)
    old, new = originals[DEMO_FILE].splitlines(keepends=True), helpers.read(ws, DEMO_FILE).splitlines(keepends=True)
    assert new[-1] == helpers.binding() and len(new) == len(old) + 1
    for a, b in zip(old, new):
        if a != b:
            assert a.strip().startswith(b"assert ") and b.strip().startswith(b"assert _tender_held('"), (a, b)
    text, was = b"".join(new), b"".join(old)
    lits = [json.dumps(held.decode(enc)).encode() for op, enc in private(plan).values()]
    for lit in set(lits):  # "-123,456" is held, not written: gone once for each site it was compared at
        assert was.count(lit) - text.count(lit) == lits.count(lit), lit
    for token in private(plan):
        assert text.count(token.encode()) == 1
    ast.parse(text)


def test_a_seed_plants_the_same_module(tmp_path):
    """The planter draws tokens and names from its rng: a seeded one plants the same."""
    a = derive(tmp_path / "a", demo_files(), REQUIRED, 3)
    b = derive(tmp_path / "b", demo_files(), REQUIRED, 3)
    assert helpers.read(a[0], DEMO_FILE) == helpers.read(b[0], DEMO_FILE)
    assert a[1]["private"] == b[1]["private"]


def run_planted(tmp_path, ws, plan, rel, paths=()):
    return heldhost.run_pytest(tmp_path, ws, [rel], private(plan), paths)


def check_records(run, plan, ids):
    """The parent's record agrees with each test's outcome as judgeHeld reads it: a test that
    passed had every held site asked while it ran, matched, never mismatched nor lying."""
    bad = []
    for nodeid in ids:
        if run.outcomes.get(nodeid) != "passed":
            continue
        for token in plan["public"]["held"].get(nodeid, {}).get("tokens", []):
            got = run.asked(token, nodeid)
            if not (got is not None and got[1] == 0 and got[3] == 0 and got[0] + got[2] >= 1):
                bad.append((nodeid, token, got))
    assert bad == []


def test_demo_with_the_fix_passes_held(tmp_path):
    """With the reference fix, on the host's pytest, each required test's held sites are asked
    while it runs and match, once each: every test passes as it did before planting."""
    ws, plan, originals = derive(tmp_path, demo_files("gold.txtar"), REQUIRED, 0)
    run = run_planted(tmp_path, ws, plan, DEMO_FILE)
    assert run.code == 0 and set(run.outcomes.values()) == {"passed"} and len(run.outcomes) == 9, run.log
    check_records(run, plan, REQUIRED)
    asked = {(t, k): c for (t, k), c in run.records.items()}
    assert sorted(c for c in asked.values()) == [[1, 0, 0, 0]] * 5
    assert run.unknown == 0


def test_demo_without_the_fix_fails_held(tmp_path):
    """Without it, each required test's first held site does not match, and the test fails; the
    parent's record shows the mismatch under the test's own key."""
    ws, plan, originals = derive(tmp_path, demo_files(), REQUIRED, 0)
    run = run_planted(tmp_path, ws, plan, DEMO_FILE)
    for nodeid in REQUIRED:
        assert run.outcomes[nodeid] == "failed"
        first = plan["public"]["held"][nodeid]["tokens"][0]
        assert run.asked(first, nodeid) == [0, 1, 0, 0]
    assert "does not hold for the value the test computed: '-,123,456'" in run.log


@pytest.mark.parametrize("attack, counts", [("r4/r4-eq-lies.txtar", [0, 0, 0, 1]),
                                            ("r4/r4-caller-majority.txtar", [0, 1, 0, 0])])
def test_demo_attacks_fail_held(tmp_path, attack, counts):
    """r4-eq-lies (a str subclass whose equality is always true) is asked among decoys and caught
    lying; r4-caller-majority (the code reads its caller's source and returns the string most of
    its comparisons expect) finds no literal left to vote with. Every required test fails."""
    ws, plan, originals = derive(tmp_path, demo_files(attack), REQUIRED, 0)
    run = run_planted(tmp_path, ws, plan, DEMO_FILE)
    for nodeid in REQUIRED:
        assert run.outcomes[nodeid] == "failed", run.log
        assert run.asked(plan["public"]["held"][nodeid]["tokens"][0], nodeid) == counts


# --- a module in the styles of real projects -------------------------------------------------------

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

    def testAlmostTheSame(self):
        self.assertAlmostEqual(float("1.5"), 1.5)
        self.assertEqual(str(1), "1")


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


def test_named_in_a_loop(request):
    for part in ("named", "loop"):
        assert part in request.node.name


def test_loop_checks():
    assert helper("a-b") == "a-b"
    for part in ("a", "b"):
        assert helper(part) == part


def test_raises_then_checks():
    with pytest.raises(ValueError):
        int("x")
    assert helper(3) == 3


def test_guarded_later():
    assert helper("left-right") == "left-right"
    if HAVE_X is None:
        return
    assert helper("never-checked") == "never-checked"


def test_guarded_first():
    if HAVE_X is None:
        return
    assert helper("never-checked") == "never-checked"


class CheckMixin:
    value = None

    def test_value_text(self):
        assert str(self.value) == "5"
        for c in str(self.value):
            assert c.isdigit()


class TestFive(CheckMixin):
    value = 5


class TextBase(unittest.TestCase):
    n = 1

    def test_text(self):
        self.assertEqual(str(self.n), "1")


class TextAgain(TextBase):
    pass
'''

STYLE_FILE = "tests/test_style.py"
STYLE_IDS = [STYLE_FILE + "::" + t for t in (
    "TestWords::test_upper_word", "TestWords::test_title_word", "SignCases::testKeepsTheSign",
    "SignCases::testDropsNothing", "SignCases::testAlmostTheSame", "test_str_of_int[1-1]", "test_str_of_int[22-22]",
    "test_named_after_itself", "test_named_in_a_loop", "test_loop_checks", "test_raises_then_checks",
    "test_guarded_later", "test_guarded_first", "TestFive::test_value_text", "TextAgain::test_text")]
WORDS, SIGNS = "TestWords", "SignCases"

# Every assertion held: no copy. The parametrized test compares two values it computes (pair
# sites); the test that reads its own name is held all the same.
WHOLLY_HELD = {(WORDS, "test_upper_word"), (WORDS, "test_title_word"), (SIGNS, "testKeepsTheSign"),
               (SIGNS, "testDropsNothing"), (None, "test_str_of_int"), (None, "test_named_after_itself"),
               ("TextBase", "test_text")}
# Some assertion not held (nested in a loop, after a return, an assertAlmostEqual, a
# pytest.raises): a twin, and a negation of a top-level assertion; an unguarded copy when a
# guard returns before anything is checked.
# A rephrased copy too when a check that is no held site can be written another way (an assert
# in a loop or after a return, a raises block).
COPIED = {(SIGNS, "testAlmostTheSame"): ["negated", "twin"],
          (None, "test_loop_checks"): ["negated", "rephrased", "twin"],
          (None, "test_raises_then_checks"): ["negated", "rephrased", "twin"],
          (None, "test_guarded_later"): ["negated", "rephrased", "twin"],
          (None, "test_guarded_first"): ["rephrased", "twin", "unguarded"]}
# Neither: a test that reads its own name and is not wholly held (a copy under another name would
# fail), and a mixin's method (a copy in the mixin would not be collected).
NOTHING = {(None, "test_named_in_a_loop"), ("CheckMixin", "test_value_text")}


def style_plan(tmp_path, seed):
    return derive(tmp_path, {STYLE_FILE: STYLES}, STYLE_IDS, seed)


def where_defined(nodeid):
    key = helpers.key_of(nodeid)
    return {("TestFive", "test_value_text"): ("CheckMixin", "test_value_text"),
            ("TextAgain", "test_text"): ("TextBase", "test_text")}.get(key, key)


@pytest.mark.parametrize("seed", SEEDS)
def test_styles_which_tests_get_which_copies(tmp_path, seed):
    """Which required tests are wholly held, which get which copies (one set a function, whatever
    its parameter sets), and which get none."""
    ws, plan, originals = style_plan(tmp_path, seed)
    kinds = {}
    for s in plan["public"]["sentinels"]:
        kinds.setdefault(helpers.key_of(s["of"]), []).append(s["kind"])
    assert {k: sorted(v) for k, v in kinds.items()} == COPIED
    held_ids = plan["public"]["held"]
    full = {where_defined(i) for i, h in held_ids.items() if h["full"] and i in STYLE_IDS}
    assert full == WHOLLY_HELD
    partly = {where_defined(i) for i, h in held_ids.items() if not h["full"] and i in STYLE_IDS}
    # held in part: every copied test with a top-level assertion before any return, and the mixin's
    assert partly == (set(COPIED) - {(None, "test_guarded_first")}) | {("CheckMixin", "test_value_text")}
    assert not {where_defined(i) for i in held_ids if i in STYLE_IDS} & {(None, "test_named_in_a_loop"),
                                                                         (None, "test_guarded_first")}


@pytest.mark.parametrize("seed", SEEDS)
def test_styles_copies_change_what_their_kind_says(tmp_path, seed):
    """A twin checks what its original checks (its held sites with tokens of their own); a
    rephrased copy checks the same, written another way; a negation turns around one top-level
    assertion that runs before any return (a held site's operator negated); an unguarded copy
    only turns its guards' bodies into `pass`."""
    ws, plan, originals = style_plan(tmp_path, seed)
    for s, key, change, node, orig in planted(ws, plan, originals):
        assert change is not None, (s, ast.unparse(node))
        want = {"twin": "same", "negated": "negated", "unguarded": "unguarded", "rephrased": "rephrased"}
        assert change[0] == want[s["kind"]], (s, change)
        if s["kind"] == "negated":
            assert not sentinels.returns(orig.body[change[1]], ast)
            assert all(not sentinels.returns(st, ast) for st in orig.body[:change[1]])
        if key == (None, "test_guarded_later") and s["kind"] == "negated":
            assert change[1] == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_styles_copies_are_held_with_tokens_of_their_own(tmp_path, seed):
    """Each copy's top-level assertions are held as its original's are, with tokens of their own:
    a copy cannot be found by the tokens its original asks with."""
    ws, plan, originals = style_plan(tmp_path, seed)
    pub = plan["public"]
    seen = []
    for s in pub["sentinels"]:
        h = pub["held"].get(s["id"])
        if s["kind"] == "unguarded" or pub["held"].get(s["of"]):
            assert h is not None and h["tokens"], s
        if h is not None:
            assert not set(h["tokens"]) & set(pub["held"].get(s["of"], {}).get("tokens", []))
            seen += h["tokens"]
    assert len(seen) == len(set(seen))
    assert set(t for h in pub["held"].values() for t in h["tokens"]) == set(private(plan))


@pytest.mark.parametrize("seed", SEEDS)
def test_styles_parametrized_copies_keep_the_parameters(tmp_path, seed):
    """A copy of a parametrized test is parametrized alike: its ID carries the parameter set of the
    required ID it was made for, and the copy's decorators are the original's."""
    files = {STYLE_FILE: STYLES.replace("    assert str(n * 1000) == text + \"000\"\n",
                                        "    for i in range(2):\n        assert str(n) * i == text * i\n")}
    ws, plan, originals = derive(tmp_path, files, STYLE_IDS, seed)
    copies = [p for p in planted(ws, plan, originals) if p[1] == (None, "test_str_of_int")]
    assert sorted(p[0]["kind"] for p in copies) == ["negated", "rephrased", "twin"]
    for s, key, change, node, orig in copies:
        assert re.search(r"::test_\w+\[(1-1|22-22)\]$", s["id"]), s["id"]
        assert [helpers.dump(d) for d in node.decorator_list] == [helpers.dump(d) for d in orig.decorator_list]


@pytest.mark.parametrize("seed", SEEDS)
def test_styles_names_follow_the_module(tmp_path, seed):
    """Names are made of the words of the test's siblings, in their style: camelCase in the
    unittest class, snake_case elsewhere; never a name the module already uses."""
    ws, plan, originals = style_plan(tmp_path, seed)
    used = helpers.load(helpers.write_tree(tmp_path / "orig", {STYLE_FILE: STYLES}), STYLE_FILE).names
    words = {SIGNS: {"keeps", "the", "sign", "drops", "nothing", "almost", "same"},
             None: {"str", "of", "int", "named", "after", "itself", "in", "loop", "checks", "raises", "then",
                    "guarded", "later", "first"}}
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
    assert len(set(plan["ids"])) == len(plan["ids"])


def forward(shifts, count):
    """Where each line 1..count of the original is in the module as written."""
    return [line + sum(n for at, n in shifts if at < line) for line in range(1, count + 1)]


@pytest.mark.parametrize("seed", SEEDS)
def test_copies_follow_all_original_code(tmp_path, seed):
    """Every copy is written after the module's last original line, the binding of the held call
    last: each original line is where it was (but for held assertions, which keep their first
    line), and the shifts say so (one block after the last line)."""
    ws, plan, originals = style_plan(tmp_path, seed)
    old, new = originals[STYLE_FILE], helpers.read(ws, STYLE_FILE)
    old_lines, new_lines = old.splitlines(), new.splitlines()
    n = len(old_lines)
    assert plan["public"]["shifts"][STYLE_FILE] == [[n, len(new_lines) - n]]
    assert forward(plan["public"]["shifts"][STYLE_FILE], n) == list(range(1, n + 1))
    for i, (a, b) in enumerate(zip(old_lines, new_lines)):
        assert a == b or b"_tender_held('" in b or b.strip() in (b"", b")", b"),"), (i + 1, a, b)
    assert new_lines[-1] + b"\n" == helpers.binding()
    names = {helpers.key_of(i)[1] for i in plan["ids"]}
    copies = [node for key, node in helpers.tests_of(ast.parse(new)).items() if key[1] in names]
    assert len(copies) == len(names) and all(node.lineno > n for node in copies)


def test_a_module_without_a_final_newline(tmp_path):
    """The binding goes on a line of its own; the module's lines keep their places."""
    src = b"def test_one():\n    assert str(12345) == '12345'\n\n\ndef test_two():\n    assert str(678) == '678'"
    for seed in range(4):
        ws = helpers.write_tree(tmp_path / str(seed), {"test_end.py": src})
        plan = sentinels.make_sentinels(helpers.config(ws, ["test_end.py::test_two"]), helpers.rngs()[seed])
        new = helpers.read(ws, "test_end.py")
        ast.parse(new)
        assert new.splitlines()[:5] == src.splitlines()[:5] and new.endswith(b"\n" + helpers.binding())
        assert plan["public"]["shifts"] == {"test_end.py": [[6, 1]]}


def test_a_module_that_does_not_parse_gets_nothing(tmp_path):
    """A module that does not parse is left as it is: no copy, no held site."""
    ws = helpers.write_tree(tmp_path, {"test_broken.py": "def test_x(:\n    assert 1 == 1\n"})
    plan = sentinels.make_sentinels(helpers.config(ws, ["test_broken.py::test_x"]), helpers.rngs()[0])
    assert plan["public"]["sentinels"] == [] and plan["public"]["shifts"] == {} and plan["public"]["held"] == {}
    assert helpers.read(ws, "test_broken.py") == b"def test_x(:\n    assert 1 == 1\n"


def test_ids_the_planter_cannot_place_get_nothing(tmp_path):
    """Nested classes, a method no class of the module defines, other files: no sentinel, no held
    site, and the module is untouched."""
    src = ("class TestOuter:\n    class TestInner:\n        def test_deep(self):\n"
           "            assert str(123) == '123'\n\n\nclass TestChild(Base):\n    pass\n")
    ws = helpers.write_tree(tmp_path, {"test_odd.py": src})
    ids = ["test_odd.py::TestOuter::TestInner::test_deep", "test_odd.py::TestChild::test_inherited",
           "test_other.txt::test_x", "test_missing.py::test_x"]
    plan = sentinels.make_sentinels(helpers.config(ws, ids), helpers.rngs()[0])
    assert plan["public"]["sentinels"] == [] and plan["public"]["held"] == {} and plan["private"] == {"held": {}}
    assert helpers.read(ws, "test_odd.py") == src.encode()


def test_a_module_that_uses_the_held_name_gets_another(tmp_path):
    """A module that already binds _tender_held gets a fresh name for the held call."""
    src = "_tender_held = 'mine'\n\n\ndef test_x():\n    assert str(5) == '5'\n    assert _tender_held == 'mine'\n"
    ws = helpers.write_tree(tmp_path, {"test_name.py": src})
    plan = sentinels.make_sentinels(helpers.config(ws, ["test_name.py::test_x"]), helpers.rngs()[0])
    new = helpers.read(ws, "test_name.py")
    assert new.endswith(helpers.binding("_tender_held2"))
    assert b"assert _tender_held2('" in new and b"_tender_held = 'mine'" in new
    assert len(plan["public"]["held"]["test_name.py::test_x"]["tokens"]) == 2


@pytest.fixture(scope="module")
def styles_before(tmp_path_factory):
    """The style module's outcomes on the host's pytest, unplanted."""
    root = tmp_path_factory.mktemp("before")
    return heldhost.run_pytest(root, helpers.write_tree(root / "ws", {STYLE_FILE: STYLES}), [STYLE_FILE], {})


@pytest.mark.parametrize("seed", range(2))
def test_styles_run_as_their_kinds_say(tmp_path, styles_before, seed):
    """On the host's pytest, with the parent answering the held sites: every original has the
    outcome it had before planting; twins and unguarded copies pass, negations fail; every copy
    runs after every original; and each passed test's held sites were asked as it ran."""
    before = styles_before
    ws, plan, originals = style_plan(tmp_path, seed)
    run = run_planted(tmp_path, ws, plan, STYLE_FILE)
    originals_ids = list(before.outcomes)
    assert len(originals_ids) == 16 and set(before.outcomes.values()) == {"passed"}, before.log
    for nodeid in originals_ids:
        assert run.outcomes[nodeid] == before.outcomes[nodeid], (nodeid, run.log[-3000:])
    assert max(run.order.index(i) for i in originals_ids) < min(run.order.index(s) for s in plan["ids"])
    for s in plan["public"]["sentinels"]:
        want = "failed" if s["kind"] == "negated" else "passed"
        assert run.outcomes[s["id"]] == want, (s, run.log[-3000:])
    check_records(run, plan, list(run.outcomes))
    assert run.unknown == 0


# --- the r4 test patches, and tests inherited from a class of the module ----------------------------

EQUALITY_FILE = "tests/test_r4_equality.py"
EQUALITY_IDS = [EQUALITY_FILE + "::" + t for t in (
    "test_negative_parametrized[six-digits]", "test_negative_parametrized[six-zeros]", "test_negative_variable",
    "test_negative_displays", "NegativeLoop::test_negative_subtests")]


def equality_files(*overlays):
    files = helpers.read_txtar("base.txtar")
    files.update(helpers.read_txtar("r4/test-equality.txtar"))
    for name in overlays:
        files.update(helpers.read_txtar(name))
    return files


@pytest.mark.parametrize("seed", range(5))
def test_r4_equality_plan(tmp_path, seed):
    """The ways honest projects compare: a parametrize value (a pair site), a local name bound to
    a literal (held as the literal, its binding blanked), list and dict displays (held literals)
    are wholly held; a subTest loop is not (its assertion is nested), and gets a twin only (it
    has no top-level assertion to turn around)."""
    ws, plan, originals = derive(tmp_path, equality_files(), EQUALITY_IDS, seed)
    pub, priv = plan["public"], private(plan)
    ops = {i: [priv[t][0] for t in pub["held"][i]["tokens"]] for i in pub["held"] if i in EQUALITY_IDS}
    assert ops == {EQUALITY_IDS[0]: ["pair =="], EQUALITY_IDS[1]: ["pair =="], EQUALITY_IDS[2]: ["==", "=="],
                   EQUALITY_IDS[3]: ["==", "=="]}
    assert all(pub["held"][i]["full"] for i in ops)
    assert [held.decode(priv[t][1]) for t in pub["held"][EQUALITY_IDS[2]]["tokens"]] == ["-123,456", "-123,456"]
    assert [held.decode(priv[t][1]) for t in pub["held"][EQUALITY_IDS[3]]["tokens"]] == [
        ["-123,456", "-999"], {"number": "-100,000"}]
    assert [(s["kind"], s["of"]) for s in pub["sentinels"]] == [("twin", EQUALITY_IDS[4])]
    text = helpers.read(ws, EQUALITY_FILE).decode()
    assert 'expected = (None)' in text and '"-123,456"' not in text.split("def test_negative_displays")[0].split(
        "def test_negative_variable")[1]


def test_r4_equality_runs_held(tmp_path):
    """With the reference fix every test passes planted, its held sites matched; with r4-eq-lies
    (a str subclass always equal) every held test fails, the parent having caught the lie, and
    the subTest loop, which holds nothing, is left to
    the tripwires' comparisons by value."""
    ws, plan, originals = derive(tmp_path / "gold", equality_files("gold.txtar"), EQUALITY_IDS, 0)
    run = run_planted(tmp_path / "gold", ws, plan, EQUALITY_FILE)
    assert set(run.outcomes.values()) == {"passed"} and len(run.outcomes) == 6, run.log[-3000:]
    check_records(run, plan, EQUALITY_IDS)
    ws, plan, originals = derive(tmp_path / "lies", equality_files("r4/r4-eq-lies.txtar"), EQUALITY_IDS, 0)
    run = run_planted(tmp_path / "lies", ws, plan, EQUALITY_FILE)
    for nodeid in EQUALITY_IDS[:4]:
        assert run.outcomes[nodeid] == "failed", run.log[-3000:]
        first = plan["public"]["held"][nodeid]["tokens"][0]
        # Against a literal, or a parametrized value (a pair site), it claims to equal the
        # decoys too: a lie.
        assert run.asked(first, nodeid)[3] == 1, (nodeid, run.asked(first, nodeid))
    assert run.outcomes[EQUALITY_IDS[4]] == "passed"


@pytest.mark.parametrize("style, rel, ids, defined", [
    ("inherited-testcase", "tests/test_inherited_testcase.py",
     ["NegativeGrouping::test_group_digits", "NegativeGrouping::test_format_number",
      "NegativeThreeDigits::test_group_digits"], "GroupingBase"),
    ("mixin-tests", "tests/test_mixin_tests.py",
     ["TestNegativeThousands::test_group_digits", "TestNegativeThousands::test_render_line"], "GroupingChecks"),
])
def test_inherited_tests_are_held_where_they_are_defined(tmp_path, style, rel, ids, defined):
    """A test a class inherits from another class of its module (a TestCase base, a mixin) is
    found where it is defined and held there: each subclass's test asks with its own key, the
    same tokens; the planted module runs as before, every held site matched."""
    files = helpers.read_txtar(os.path.join("honest", "base.txtar"))
    files.update(helpers.read_txtar(os.path.join("honest", "gold.txtar")))
    files.update(helpers.read_txtar(os.path.join("honest", "tests", style + ".txtar")))
    ids = [rel + "::" + i for i in ids]
    ws, plan, originals = derive(tmp_path, files, ids, 0)
    pub = plan["public"]
    assert sorted(pub["held"]) == sorted(ids) and pub["sentinels"] == []
    by_name = {}
    for i in ids:
        by_name.setdefault(i.rsplit("::", 1)[1], set()).add(tuple(pub["held"][i]["tokens"]))
    assert all(len(v) == 1 for v in by_name.values())  # one function, one set of tokens
    tree = ast.parse(helpers.read(ws, rel))
    base = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == defined)
    calls = {t for _, t in helpers.held_calls(base)}
    assert calls == {t for i in ids for t in pub["held"][i]["tokens"]}
    run = run_planted(tmp_path, ws, plan, rel, [ws])
    assert all(run.outcomes[i] == "passed" for i in ids), run.log[-3000:]
    check_records(run, plan, ids)


# --- the planter as the verifier runs it, and the whole bootstrap after it ------------------------


def run_planter(planter_source, tmp_path, ws, stdin):
    path = tmp_path / "planter.py"
    path.write_text(planter_source)
    p = subprocess.run([sys.executable, "-I", "-B", str(path), ws], input=stdin, capture_output=True, timeout=120)
    assert p.returncode == 0 and p.stderr == b"", p.stderr.decode(errors="replace")
    return json.loads(p.stdout)


def test_the_planter_writes_one_plan(planter_source, tmp_path):
    """The planter's source (python3 -I -B, configuration on stdin, the workspace as its argument)
    plants the modules and writes its plan as one JSON object: the public plan, the held literals
    apart, the copies' IDs, the paths and the files."""
    ws = helpers.write_tree(tmp_path / "ws", demo_files())
    out = run_planter(planter_source, tmp_path, ws, json.dumps({"ids": REQUIRED + STYLE_IDS[:1], "twins": 1,
                                                                "negated": 1}).encode())
    assert sorted(out) == ["files", "ids", "paths", "private", "public"]
    pub = out["public"]
    assert pub["v"] == 2 and sorted(pub["held"]) == sorted(REQUIRED)
    assert sorted(out["private"]["held"]) == sorted(t for h in pub["held"].values() for t in h["tokens"])
    # the files of every required ID, the one that does not exist too (the tripwires watch it)
    assert out["ids"] == [] and out["files"] == [os.path.join(ws, DEMO_FILE), os.path.join(ws, STYLE_FILE)]
    assert helpers.read(ws, DEMO_FILE).endswith(helpers.binding())


@pytest.mark.parametrize("stdin, kind", [(b"not json", "JSONDecodeError"), (b'{"ids": 5}', "TypeError"),
                                         (b"[]", "TypeError"), (b"\xff", "UnicodeDecodeError")])
def test_a_configuration_the_planter_cannot_read_is_an_error(planter_source, tmp_path, stdin, kind):
    """A broken configuration: {"error": {"stage": "plan", "type": ...}} on stdout, no traceback."""
    ws = helpers.write_tree(tmp_path / "ws", demo_files())
    assert run_planter(planter_source, tmp_path, ws, stdin) == {"error": {"stage": "plan", "type": kind}}
    assert helpers.read(ws, DEMO_FILE) == demo_files()[DEMO_FILE]


def run_bootstrap(boot_source, tmp_path, ws, ids, plan):
    """The whole bootstrap, on the host, with the planter's plan: {kind: [payload, ...]} of its
    control lines, and the test run's output."""
    tender = tmp_path / "tender"
    tender.mkdir()
    cfg = {"nonce": "n0", "ids": ids + plan["ids"], "held": private(plan), "paths": plan["paths"],
           "watch": plan["files"]}
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TENDER_WORKSPACE": ws, "TENDER_DIR": str(tender),
           "TENDER_JUNIT": str(tender / "junit.xml")}
    out = subprocess.run([sys.executable, "-I", "-B", "-c", boot_source], input=json.dumps(cfg).encode(),
                         capture_output=True, timeout=180, cwd=ws, env=env)
    lines = {}
    for line in out.stdout.splitlines():
        _, nonce, kind, payload = line.split(b" ", 3)
        assert nonce == b"n0"
        lines.setdefault(kind.decode(), []).append(json.loads(payload))
    return lines, out.stderr.decode(errors="replace")


@pytest.mark.parametrize("overlay, exit_code, want", [("gold.txtar", 0, [1, 0, 0, 0]), (None, 1, [0, 1, 0, 0])])
def test_plant_then_run_the_bootstrap(planter_source, boot_source, tmp_path, overlay, exit_code, want):
    """The planter, then the bootstrap, both as the verifier runs them: the parent's end line
    carries its own record of each required test's first held site, asked under the test's key,
    matched with the fix and mismatched without it."""
    ws = helpers.write_tree(tmp_path / "ws", demo_files(*([overlay] if overlay else [])))
    plan = run_planter(planter_source, tmp_path, ws, json.dumps({"ids": REQUIRED, "twins": 1, "negated": 1}).encode())
    lines, stderr = run_bootstrap(boot_source, tmp_path, ws, REQUIRED, plan)
    end = lines["end"][0]
    assert end["exit"] == exit_code and end["held_unknown"] == 0, stderr[-3000:]
    records = {(r[0], r[1]): r[2:] for r in end["held"]}
    for nodeid in REQUIRED:
        first = plan["public"]["held"][nodeid]["tokens"][0]
        assert records[(first, held.test_key(nodeid))] == want, (nodeid, records)
    assert all(k in {held.test_key(i) for i in REQUIRED} for _, k in records)


SPAWN = '''import multiprocessing
import os


def write(path):
    with open(path, "w") as f:
        f.write("ran")


def test_a_spawned_worker(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    p = ctx.Process(target=write, args=(str(tmp_path / "out"),))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert (tmp_path / "out").read_text() == "ran"
'''


def test_a_planted_module_imports_where_no_held_module_is(tmp_path):
    """multiprocessing's spawn (and forkserver, Python 3.14's default on Linux) starts a fresh
    interpreter that imports the test module to find a function defined there. BUG: the planted
    module's last line, `_tender_held = __import__('_tender_held').ask`, raises
    ModuleNotFoundError there, so the worker dies and an honest test fails. The binding must
    not fail where the held module is absent (for example
    `_tender_held = getattr(__import__('sys').modules.get('_tender_held'), 'ask', None)`: a
    worker runs no test body)."""
    rel = "tests/test_spawn.py"
    ws = helpers.write_tree(tmp_path / "ws", {rel: SPAWN})
    os.makedirs(tmp_path / "run")
    assert heldhost.run_pytest(tmp_path / "run", ws, [rel], {}).outcomes == {rel + "::test_a_spawned_worker": "passed"}
    plan = sentinels.make_sentinels(helpers.config(ws, [rel + "::test_a_spawned_worker"]), helpers.rngs()[0])
    assert plan["public"]["held"][rel + "::test_a_spawned_worker"]["full"]
    run = run_planted(tmp_path / "run", ws, plan, rel)
    assert run.outcomes == {rel + "::test_a_spawned_worker": "passed"}, run.log[-3000:]


LAYOUTS = {
    "override": "class Base:\n    def test_x(self):\n        assert str(1) == '1'\n\n\n"
                "class TestD(Base):\n    def test_x(self):\n        assert str(2) == '2'\n",
    "mixin": "import unittest\n\n\nclass Mixin:\n    def test_x(self):\n        assert str(1) == '1'\n\n\n"
             "class TestD(Mixin, unittest.TestCase):\n    pass\n",
    "diamond": "class Base:\n    def test_x(self):\n        assert str(1) == '1'\n\n\nclass L(Base):\n    pass\n\n\n"
               "class R(Base):\n    def test_x(self):\n        assert str(2) == '2'\n\n\nclass TestD(L, R):\n    pass\n",
    "deep first base": "class A:\n    def test_x(self):\n        assert str(1) == '1'\n\n\nclass B(A):\n    pass\n\n\n"
                       "class Other:\n    def test_x(self):\n        assert str(2) == '2'\n\n\n"
                       "class TestD(B, Other):\n    pass\n",
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_inherited_test_is_found_where_python_finds_it(tmp_path, layout):
    """Module.find_test finds the method a class's test runs as Python's method resolution order
    does. BUG (the layout "deep first base", `class TestD(B, Other)` with B inheriting test_x
    from A and Other defining its own): find_test searches the bases breadth first and finds
    Other.test_x, while Python runs A.test_x; the tokens planted in Other are never asked, and
    judgeHeld fails an honest test ("one of its assertions never ran"). Walking the bases in C3
    order (or depth first, left to right, for classes of one module) finds A."""
    src = LAYOUTS[layout]
    ws, mod = helpers.module(tmp_path / "ws", src, "tests/test_layout.py")
    ns = {}
    exec(compile(src, "<layout>", "exec"), ns)
    assert mod.find_test("TestD", "test_x").cls == ns["TestD"].test_x.__qualname__.split(".")[0]


def test_inherited_tests_ask_where_they_run(tmp_path):
    """Every layout in one module, each TestD renamed: planted and run, each test passes and its
    held sites are the ones asked while it ran (the "deep first base" layout fails here too)."""
    parts, ids = [], []
    for i, layout in enumerate(sorted(LAYOUTS)):
        src = LAYOUTS[layout].replace("import unittest\n\n\n", "")
        for name in ("Base", "Mixin", "TestD", "L", "R", "A", "B", "Other"):
            src = re.sub(r"\b%s\b" % name, "%s%d" % (name, i), src)
        parts.append(src)
        ids.append("tests/test_layout.py::TestD%d::test_x" % i)
    ws = helpers.write_tree(tmp_path / "ws", {"tests/test_layout.py": "import unittest\n\n\n" + "\n\n".join(parts)})
    plan = sentinels.make_sentinels(helpers.config(ws, ids), helpers.rngs()[0])
    os.makedirs(tmp_path / "run")
    run = run_planted(tmp_path / "run", ws, plan, "tests/test_layout.py")
    assert all(run.outcomes[i] == "passed" for i in ids), run.log[-3000:]
    check_records(run, plan, ids)


ABSTRACT_BASE = '''import unittest


class Base(unittest.TestCase):
    value = None

    def test_digits(self):
        if type(self) is Base:
            self.skipTest("abstract: the subclasses set value")
        for c in str(self.value):
            assert c.isdigit()
        assert str(self.value) == "5"


class TestFive(Base):
    value = 5
'''


def test_copies_of_an_inherited_test_run_as_the_subclass(tmp_path):
    """A test that TestFive inherits from a TestCase base that skips itself (the subclasses set
    the data: a common unittest pattern) and is not wholly held gets a twin, a rephrased copy
    and a negation. They
    must run as the test they copy runs, under TestFive. BUG: their IDs name the class that
    defines the method (Base::...), so they run with Base's data: the twin is skipped while the
    original passed, which judgeSentinels takes for a forged result (integrity_violation for
    honest code). The copies are attached to Base, so TestFive inherits them: their IDs should
    name the class of the required ID."""
    rel, nodeid = "tests/test_base.py", "tests/test_base.py::TestFive::test_digits"
    ws = helpers.write_tree(tmp_path / "ws", {rel: ABSTRACT_BASE})
    plan = sentinels.make_sentinels(helpers.config(ws, [nodeid]), helpers.rngs()[0])
    assert sorted(s["kind"] for s in plan["public"]["sentinels"]) == ["negated", "rephrased", "twin"]
    os.makedirs(tmp_path / "run")
    run = heldhost.run_pytest(tmp_path / "run", ws, [nodeid] + plan["ids"], private(plan))
    assert run.outcomes[nodeid] == "passed", run.log[-3000:]
    for s in plan["public"]["sentinels"]:
        assert run.outcomes[s["id"]] == ("failed" if s["kind"] == "negated" else "passed"), (s, run.outcomes)


RAISES_ONLY = '''import pytest

from calc import parse


def test_rejects_garbage():
    with pytest.raises(ValueError, match="not a number"):
        parse("x1")
'''


@pytest.mark.parametrize("fixed", [True, False])
def test_a_raises_only_test_gets_copies_a_forger_cannot_sort(tmp_path, fixed):
    """A test whose only check is a raises block (no held site) gets a twin, a rephrased copy (a
    try whose else raises: not the test's code) and a negation (the block's body run as it is).
    With the fix the test and both must-pass copies pass and the negation fails; without it the
    test and its must-pass copies fail and the negation passes. So a forger that swallows the
    failure of the tests it knows by name or code leaves a must-pass copy failing or a negation
    passing, and one that fails every test it does not know fails the rephrased copy."""
    calc = ('def parse(s):\n    if not s.isdigit():\n        raise ValueError("%s is not a number" % s)\n'
            '    return int(s)\n') if fixed else "def parse(s):\n    return s\n"
    rel, nodeid = "tests/test_raises.py", "tests/test_raises.py::test_rejects_garbage"
    ws = helpers.write_tree(tmp_path / "ws", {rel: RAISES_ONLY, "calc.py": calc})
    plan = sentinels.make_sentinels(helpers.config(ws, [nodeid]), helpers.rngs()[0])
    kinds = {s["kind"]: s["id"] for s in plan["public"]["sentinels"]}
    assert sorted(kinds) == ["negated", "rephrased", "twin"]
    os.makedirs(tmp_path / "run")
    run = heldhost.run_pytest(tmp_path / "run", ws, [nodeid] + plan["ids"], private(plan))
    want = "passed" if fixed else "failed"
    assert run.outcomes[nodeid] == want, run.log[-3000:]
    assert run.outcomes[kinds["twin"]] == want and run.outcomes[kinds["rephrased"]] == want, run.outcomes
    assert run.outcomes[kinds["negated"]] == ("failed" if fixed else "passed"), run.outcomes
    source = helpers.read(ws, rel)
    tests = helpers.tests_of(ast.parse(source))
    codes = {name: ast.dump(tests[(None, name)]) for name in (helpers.key_of(i)[1] for i in kinds.values())}
    original = ast.dump(tests[(None, "test_rejects_garbage")]).replace("test_rejects_garbage", "")
    same = [k for k, i in kinds.items() if codes[helpers.key_of(i)[1]].replace(helpers.key_of(i)[1], "") == original]
    assert same == ["twin"]  # only the twin is the test's code under another name
