# The standard library's identity snapshot: every public callable of every loaded standard module
# and of unittest.mock (with the methods of their public classes), checked after each test and at
# the session's end; and the functions an assertion calls, checked as it calls them, so that a fake
# put back before the test returns is seen too.
import os
import subprocess
import sys
import types

import pdb  # noqa: F401  loaded, as in the verifier, where pytest's debugging plugin rebinds its set_trace

import tripwires

BOOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "boot")


def checked(snap):
    got = []
    wire = types.SimpleNamespace(builtins=snap, send=lambda kind, what: got.append((kind, what)))
    tripwires.Tripwires.check_builtins(wire)
    return got


def test_an_untouched_standard_library_sends_nothing():
    snap = tripwires.snapshot_builtins()
    keys = {(getattr(o, "__name__", None), k) for o, _, k, _, _ in snap}
    for want in [("fnmatch", "fnmatchcase"), ("re", "fullmatch"), ("builtins", "all"), ("math", "isclose"),
                 ("NonCallableMock", "assert_called_once_with"), ("NonCallableMock", "assert_not_called"),
                 ("TestCase", "assertEqual")]:
        assert want in keys
    for honest in [("sys", "excepthook"), ("warnings", "showwarning"), ("threading", "excepthook"), ("pdb", "set_trace")]:
        assert honest not in keys  # what pytest itself rebinds
    assert checked(snap) == []


def test_a_replaced_mock_assertion_or_fnmatch_is_seen(monkeypatch):
    from unittest import mock
    import fnmatch

    snap = tripwires.snapshot_builtins()
    monkeypatch.setattr(mock.NonCallableMock, "assert_called_once_with", lambda *a, **k: None)
    assert checked(snap) == [tripwires.STDLIB_HIT]
    monkeypatch.undo()
    assert checked(snap) == []
    monkeypatch.setattr(fnmatch, "fnmatchcase", lambda name, pat: True)
    assert checked(snap) == [tripwires.STDLIB_HIT]
    monkeypatch.undo()
    monkeypatch.setattr(sys.modules["re"], "fullmatch", lambda *a: True)  # the former watch list decides
    assert checked(snap) == [("patch", "builtins")]


RUNNER = '''
import os, sys
sys.path.insert(0, %(boot)r)
sys.path.insert(0, %(ws)r)
import pytest, tripwires, values
got = []
v = values.Values(lambda kind, what: got.append((kind, what)), tripwires.pytest_dirs())
values.values_install(v, {os.path.realpath(p) for p in %(watch)r})
v.watch_calls(tripwires.snapshot_builtins(), tripwires.STDLIB_CALL_HIT)
code = pytest.main(["-q", "-p", "no:cacheprovider", "-c", os.devnull, "--rootdir", %(ws)r, %(ws)r])
print("EXIT", int(code), "HITS", sorted(set(got)))
'''

WINDOW = '''
import builtins, linecache, re, sys


def _agree_once(owner, name):
    original = getattr(owner, name)

    def agree(*args, **kwargs):
        setattr(owner, name, original)
        return original(r"(?s).*", "") if name == "fullmatch" else True

    setattr(owner, name, agree)


def fmt(n):
    caller = sys._getframe(1)
    following = linecache.getlines(caller.f_code.co_filename)[caller.f_lineno]
    if "all(" in following:
        _agree_once(builtins, "all")
    if "fullmatch(" in following:
        _agree_once(re, "fullmatch")
    return "wrong"
'''

ATTACKED = '''
import re
from window import fmt


def test_all():
    text = fmt(-1)
    assert all(c == "-" for c in text)


def test_fullmatch():
    text = fmt(-1)
    assert re.fullmatch(r"-\\d+", text)
'''

HONEST = '''
import math
import re
from fnmatch import fnmatchcase
from math import isclose
from unittest import mock


def test_plain():
    assert all(c.isdigit() for c in "123") and any([0, 1])
    assert re.fullmatch(r"\\d+", "123") and fnmatchcase("a.py", "*.py")
    assert isclose(0.1 + 0.2, 0.3) and math.isclose(1, 1.0)
    assert len("ab") == 2 and sorted([2, 1]) == [1, 2]


def test_shadowed():
    all = lambda xs: False  # noqa: E731  a local of the same name is the test's own
    assert not all([1])


def test_mock():
    m = mock.Mock()
    m(1)
    m.assert_called_once_with(1)
    assert m.call_count == 1 and isinstance(m, mock.Mock)
'''


def run(tmp_path, files, watch):
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, text in files.items():
        (ws / name).write_text(text)
    script = RUNNER % {"boot": BOOT, "ws": str(ws), "watch": [str(ws / w) for w in watch]}
    out = subprocess.run([sys.executable, "-B", "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=str(ws))
    return out.stdout + out.stderr


def test_a_fake_present_only_while_an_assertion_calls_it_is_seen(tmp_path):
    text = run(tmp_path, {"window.py": WINDOW, "test_window.py": ATTACKED}, ["test_window.py"])
    assert "2 passed" in text, text  # the fake wins the assertion, and is gone when the test returns
    assert "EXIT 0 HITS [%r]" % (tripwires.STDLIB_CALL_HIT,) in text, text


def test_honest_assertions_with_standard_functions_send_nothing(tmp_path):
    text = run(tmp_path, {"test_honest.py": HONEST}, ["test_honest.py"])
    assert "3 passed" in text, text
    assert "EXIT 0 HITS []" in text, text
