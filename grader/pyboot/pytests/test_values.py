# Comparisons by value (boot/values.py): a value that lies about its equality loses, and every
# honest value compares as it did. Then the same through pytest: a test module of the check
# whose assertions pytest rewrites, and unittest's assertions.
import ast
import collections
import enum
import fractions
import os
import subprocess
import sys
import textwrap
import unittest.mock

import pytest

import tripwires
import values

HERE = os.path.dirname(os.path.abspath(__file__))
BOOT = os.path.join(os.path.dirname(HERE), "boot")


class Liar(str):
    """The attack: a str that equals everything and differs from nothing."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


class Differ(str):
    """The attack on a negative assertion: a str that differs from everything."""

    def __eq__(self, other):
        return False

    def __ne__(self, other):
        return True

    __hash__ = str.__hash__


class LiarInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class LiarList(list):
    def __eq__(self, other):
        return True


class Caseless(str):
    """An honest subclass with an equality of its own: compared by value, it fails too."""

    def __eq__(self, other):
        return isinstance(other, str) and self.lower() == other.lower()

    __hash__ = str.__hash__


class Float64(float):
    """Like numpy's float64: a float subclass with a comparison of its own that agrees with
    float's."""

    def __eq__(self, other):
        return float(self) == other

    __hash__ = float.__hash__


class Color(enum.IntEnum):
    RED = 1


class Mode(enum.StrEnum):
    FAST = "fast"


Point = collections.namedtuple("Point", "x y")


def sent():
    got = []
    return got, lambda kind, what: got.append((kind, what))


def compare(op, a, b):
    """What a rewritten assertion evaluates: the canonical operands, compared."""
    got, send = sent()
    v = values.Values(send, tripwires.pytest_dirs())
    ca = v.left(a, 1)
    cb = v.right(b, 1, op)
    return values.VALUE_OPS[op](ca, cb), got


@pytest.mark.parametrize("op, a, b", [
    ("==", Liar("wrong"), "-123,456"),
    ("==", "-123,456", Liar("wrong")),
    ("==", [Liar("wrong")], ["-123,456"]),
    ("==", {"k": Liar("wrong")}, {"k": "-123,456"}),
    ("==", (1, [Liar("wrong")]), (1, ["-123,456"])),
    ("==", LiarInt(3), 4),
    ("in", Liar("wrong"), ["-123,456", "-999"]),
    ("in", (Liar("wrong"),), [["-999"], ("-123,456",)]),
    ("!=", Differ("-123,456"), "-123,456"),
    ("not in", Differ("-999"), ["-999"]),
])
def test_a_value_that_lies_loses(op, a, b):
    assert values.VALUE_OPS[op](a, b)  # as Python compares them: the lie holds
    got, hits = compare(op, a, b)
    assert got is False
    assert hits == [("note:values", "a value compared differently by its plain value")]


@pytest.mark.parametrize("op, a, b, want", [
    ("==", Float64(0.5), 0.5, True),
    ("==", Float64(0.1 + 0.2), 0.3, False),
    ("==", [Float64(1.5)], [1.5], True),
    ("==", Color.RED, 1, True),
    ("==", Color.RED, 2, False),
    ("==", Mode.FAST, "fast", True),
    ("in", Mode.FAST, ["slow", "fast"], True),
    ("==", Point(1, 2), (1, 2), True),
    ("==", collections.Counter("aab"), {"a": 2, "b": 1}, True),
    ("==", collections.Counter(a=1), collections.Counter(a=1, b=0), True),  # Counter's own equality
    ("==", collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=2, a=1), False),  # order counts
    ("==", collections.defaultdict(int, a=1), {"a": 1}, True),
    ("==", unittest.mock.call(1, x=2), unittest.mock.call(1, x=2), True),
    ("==", fractions.Fraction(1, 2), 0.5, True),
    ("==", pytest.approx(0.3), 0.1 + 0.2, True),
    ("==", "abc", "abc", True),
    ("!=", "abc", "abd", True),
    ("==", True, 1, True),
    ("==", None, None, True),
    ("not in", 3, {1, 2}, True),
])
def test_honest_values_compare_as_they_did(op, a, b, want):
    assert values.VALUE_OPS[op](a, b) is want
    got, hits = compare(op, a, b)
    assert (got, hits) == (want, [])


class MultiDict(dict):
    """Like boltons' OrderedMultiDict: its dict storage holds lists of values, its equality
    compares the last value of each."""

    def __init__(self, pairs):
        for k, v in pairs:
            dict.setdefault(self, k, []).append(v)

    def __eq__(self, other):
        return {k: vs[-1] for k, vs in dict.items(self)} == dict(other)


def test_a_container_with_its_own_equality_is_left_to_it():
    got, hits = compare("==", MultiDict([("a", 1), ("a", 2)]), {"a": 2})
    assert (got, hits) == (True, [])
    # The price: a container that lies is not caught here (the sentinels' copies are).
    got, hits = compare("==", LiarList([1]), [2])
    assert (got, hits) == (True, [])


def test_an_honest_subclass_with_its_own_equality_fails_and_is_noted():
    got, hits = compare("==", Caseless("ABC"), "abc")
    assert got is False and [k for k, _ in hits] == ["note:values"]


def test_canonical_values_are_exact_and_unchanged_values_the_same_objects():
    v = values.Values(sent()[1], tripwires.pytest_dirs())
    plain = {"a": [1, 2.5, ("x", b"y")], "b": {3, 4}}
    assert v.canon(plain) is plain
    got = v.canon({"a": [Liar("x")], Liar("k"): (LiarInt(2),)})
    assert got == {"a": ["x"], "k": (2,)}
    assert type(got["a"][0]) is str and type(list(got)[1]) is str and type(got["k"][0]) is int
    p = Point(1, 2)
    assert v.canon(p) is p  # a subclass that compares as its base is left as it is
    assert v.canon(Point(Liar("x"), 2)) == ("x", 2)


def test_what_is_too_big_or_cyclic_is_compared_as_it_is():
    v = values.Values(sent()[1], tripwires.pytest_dirs())
    big = [1] * (values.VALUE_BUDGET + 1) + [Liar("x")]
    assert v.canon(big) is big
    cyc = [Liar("x")]
    cyc.append(cyc)
    assert v.canon(cyc) is cyc


def test_transform_keeps_lines_and_rewrites_only_assert_comparisons():
    src = textwrap.dedent('''\
        """Doc."""
        from __future__ import annotations
        x = 1 == 1


        def test_it(v):
            assert v == "a"
            assert v != "b", "message"
            assert "a" in [v] and v not in ["c"]
            assert 0 < len(v) == 1
            if v == "a":
                pass
    ''')
    tree = ast.parse(src)
    assert values.values_transform(tree, ast) == 4
    assert isinstance(tree.body[2], ast.Import) and tree.body[2].names[0].asname == values.VALUES_NAME
    fn = tree.body[-1]
    asserts = [n for n in fn.body if isinstance(n, ast.Assert)]
    assert [a.lineno for a in asserts] == [7, 8, 9, 10]
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in ("left", "right")]
    assert all(c.lineno in (7, 8, 9) for c in calls)
    assert "@tender_values" not in ast.unparse(tree.body[3])  # no assert: left as it is
    chain = ast.unparse(asserts[3])  # a chain is left as it is; its call of len is checked
    assert chain == "assert 0 < @tender_values.name(len, 'len', None)(v) == 1", chain


def test_unittest_assertions_compare_by_value():
    got, send = sent()
    v = values.Values(send, tripwires.pytest_dirs())

    class Case(unittest.TestCase):
        def runTest(self):
            pass

    tc = Case()
    for name, op in values.UNITTEST_COMPARING:
        orig = getattr(unittest.TestCase, name, None)
        if orig is not None:
            setattr(Case, name, v.unittest_method(orig, op))
    tc.assertEqual(Float64(0.5), 0.5)
    tc.assertEqual(Color.RED, 1)
    tc.assertIn(Mode.FAST, ["fast"])
    tc.assertCountEqual([Point(1, 2)], [(1, 2)])
    assert got == []
    with pytest.raises(AssertionError, match="'wrong' != '-123,456'"):
        tc.assertEqual(Liar("wrong"), "-123,456")
    with pytest.raises(AssertionError):
        tc.assertListEqual([Liar("wrong")], ["-123,456"])
    with pytest.raises(AssertionError):
        tc.assertNotEqual(Differ("-999"), "-999")
    with pytest.raises(AssertionError):
        tc.assertIn(Liar("wrong"), ["-999"])
    with pytest.raises(AssertionError):
        tc.assertCountEqual([Liar("wrong")], ["-999"])
    assert set(got) == {("note:values", "a value compared differently by its plain value")}


RUNNER = '''
import os, sys
sys.path.insert(0, %(boot)r)
import pytest, tripwires, values
got = []
v = values.Values(lambda kind, what: got.append(kind), tripwires.pytest_dirs())
values.values_install(v, {os.path.realpath(%(watch)r)})
plugin = tripwires.tender_plugin(None, v)
class Only:  # Tender's explanation hook alone
    pytest_assertrepr_compare = plugin.pytest_assertrepr_compare
code = pytest.main(["-q", "-p", "no:cacheprovider", "-c", os.devnull, "--rootdir", %(ws)r,
                    "--import-mode=importlib", %(ws)r], plugins=[Only()])
print("EXIT", int(code), "NOTES", sorted(set(got)))
'''

MODULE = '''
import unittest
import pytest


class Liar(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


def fmt(n):
    return Liar("wrong") if n < 0 else "{:,}".format(n)


@pytest.mark.parametrize("n, want", [(-123456, "-123,456"), (-999, "-999")])
def test_param(n, want):
    assert fmt(n) == want


def test_variable():
    want = ["-1,000"]
    assert [fmt(-1000)] == want


def test_subtests_by_unittest():
    case = unittest.TestCase()
    case.assertEqual(fmt(-5), "-5")


def test_honest():
    assert fmt(1234) == "1,234"
    assert "1,234" in [fmt(1234)]
'''


def test_through_pytest_a_lying_value_fails_every_comparison(tmp_path):
    ws = tmp_path / "ws"
    (ws / "tests").mkdir(parents=True)
    watch = ws / "tests" / "test_liar.py"
    watch.write_text(MODULE)
    script = RUNNER % {"boot": BOOT, "watch": str(watch), "ws": str(ws)}
    out = subprocess.run([sys.executable, "-B", "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=str(ws))
    text = out.stdout + out.stderr
    assert "4 failed, 1 passed" in text, text
    assert "a value of type Liar compared unequal by value" in text, text
    assert "EXIT 1 NOTES ['note:values']" in text, text
    # Without Tender's values, the lie wins: the same module passes whole.
    plain = subprocess.run([sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull,
                            "--rootdir", str(ws), "--import-mode=importlib", str(ws)], capture_output=True, text=True,
                           timeout=120, cwd=str(ws))
    assert "5 passed" in plain.stdout, plain.stdout + plain.stderr


PLANTED = '''
import sys, types, unittest
sys.path.insert(0, %(boot)r)
import tripwires, values


class Early(unittest.TestCase):  # a library's class from before Tender wrapped: it may alias one
    assertEquals = unittest.TestCase.assertEqual


v = values.Values(lambda kind, what: None, tripwires.pytest_dirs())
mod = sys.modules[values.VALUES_MODULE] = v.installed = v.module()
v.wrap_unittest()
original = unittest.TestCase.assertEqual.__wrapped__


class Honest(unittest.TestCase):  # a test's own assertion
    def assertEqual(self, first, second, msg=None):
        assert first == second


class Forged(unittest.TestCase):  # unittest's own, from behind Tender's wrapper
    assertEqual = original


class Later(Forged):
    pass


def module(name, planted):
    m = types.ModuleType(name)
    if planted is not None:
        setattr(m, values.VALUES_NAME, planted)
    return m


print(v.planted_intact([module("a", mod), module("b", None)], [Honest, Early, unittest.TestCase]),
      v.planted_intact([module("c", types.ModuleType(values.VALUES_MODULE))], []),
      v.planted_intact([], [Later]))
'''


def test_what_tender_planted_is_checked_by_identity():
    """A test module's @tender_values must be the module Tender installed (or absent: nothing
    rewritten), and no test class made after Tender wrapped unittest may hold unittest's own
    equality assertion from behind the wrapper; a test's own assertion, and a class that was
    there before, are honest."""
    out = subprocess.run([sys.executable, "-B", "-c", PLANTED % {"boot": BOOT}], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.split() == ["True", "False", "False"], out.stdout + out.stderr
