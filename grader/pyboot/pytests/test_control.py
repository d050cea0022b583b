# The control channel as the parent writes it, the child's stream as Relay reads it, and the
# bootstrap's source as one file: what the split into boot/*.py must keep.
import ast
import builtins
import hashlib
import json
import os
import symtable
import types

import pytest

import control
import tripwires


def parse(line):
    """What control.go's Read splits a line into: the prefix, the nonce, the kind, the JSON."""
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    prefix, nonce, kind, payload = line[:-1].split(b" ", 3)
    assert prefix == b"TENDER-CONTROL"
    return nonce.decode(), kind.decode(), json.loads(payload)


def test_control_line():
    line = control.control_line("4f1c", "plan", {"v": 1, "sentinels": [], "shifts": {"t.py": [[3, 4]]}})
    assert line == b'TENDER-CONTROL 4f1c plan {"sentinels":[],"shifts":{"t.py":[[3,4]]},"v":1}\n'


@pytest.mark.parametrize("obj", [
    {"kind": "write", "what": "a\nTENDER-CONTROL 4f1c end {}"},  # a line break stays inside the JSON
    {"id": "t.py::test_\u00e9[\u4e2d]", "kind": "twin"},  # non-ASCII is escaped
    {"stage": "plan", "type": "KeyError"},
])
def test_control_line_is_one_line(obj):
    nonce, kind, got = parse(control.control_line("4f1c", "hit", obj))
    assert (nonce, kind, got) == ("4f1c", "hit", obj)
    assert control.control_line("4f1c", "hit", obj).isascii()


def relay():
    emitted = []
    return control.Relay(lambda kind, obj: emitted.append((kind, obj))), emitted


def outcome(nodeid, state):
    key = hashlib.sha256(nodeid.encode()).hexdigest()[:16]
    return ('{"kind":"outcome","what":"%s:%s"}\n' % (key, state)).encode(), key


STREAM = [
    b'{"kind":"write","what":"report"}\n',
    b'{"kind":"note:gc","what":"walked every object of the interpreter","extra":1}\n',
    b"not json at all\n",
    b'["a list"]\n',
    b'{"kind":3,"what":"x"}\n',
]


def test_relay_hits_and_outcomes():
    r, emitted = relay()
    a, ka = outcome("t.py::test_a", "passed")
    b, kb = outcome("t.py::test_b", "not")
    c, kc = outcome("t.py::test_c", "passed")
    r.feed(b"".join(STREAM) + a + b + c)
    assert emitted == [
        ("hit", {"kind": "write", "what": "report"}),
        ("hit", {"kind": "note:gc", "what": "walked every object of the interpreter"}),  # only kind and what
        ("hit", {"kind": "garbled"}),  # what does not parse is a hit, never dropped
        ("hit", {"what": "x"}),  # a field that is no string is left out
    ]
    assert r.hits == 4 and r.outcomes == {ka: "passed", kb: "not", kc: "passed"} and r.dups == 0
    end, code = r.end(1 << 8, "ab", True)
    assert code == 1
    assert end == {"exit": 1, "hits": 4, "junit_sha256": "ab", "stream_ended": True, "outcomes": 3, "outcome_dups": 0,
                   "passed_sha256": hashlib.sha256("\n".join(sorted([ka, kc])).encode()).hexdigest()}


def test_relay_reads_lines_across_chunks():
    data = b"".join(STREAM) + outcome("t.py::test_a", "passed")[0]
    whole, _ = relay()
    whole.feed(data)
    for size in (1, 2, 7, 64):
        r, _ = relay()
        for i in range(0, len(data), size):
            r.feed(data[i:i + size])
        assert (r.hits, r.outcomes, r.end(0, "", True)) == (whole.hits, whole.outcomes, whole.end(0, "", True))


def test_relay_run_reads_a_pipe_to_its_end():
    rfd, wfd = os.pipe()
    os.write(wfd, b"".join(STREAM) + b'{"kind":"write","what":"unfinished')
    os.close(wfd)
    r, emitted = relay()
    r.run(rfd)
    os.close(rfd)
    assert r.hits == 4 and len(emitted) == 4  # a last line without its end is no line


def test_relay_counts_a_second_outcome():
    r, _ = relay()
    line, key = outcome("t.py::test_a", "not")
    r.feed(line + outcome("t.py::test_a", "passed")[0])
    assert r.dups == 1 and r.outcomes == {key: "passed"}


def test_relay_relays_200_hits_and_counts_all():
    r, emitted = relay()
    r.feed(b'{"kind":"write","what":"test"}\n' * 250)
    assert r.hits == 250 and len(emitted) == 200
    assert r.end(0, "", True)[0]["hits"] == 250


@pytest.mark.parametrize("status, code, signal", [(0, 0, None), (1 << 8, 1, None), (5 << 8, 5, None), (9, 137, 9),
                                                  (15, 143, 15)])
def test_relay_end_status(status, code, signal):
    r, _ = relay()
    end, got = r.end(status, "", False)
    assert got == code and end["exit"] == code and end.get("signal") == signal and end["stream_ended"] is False


def test_relay_end_of_a_real_child():
    pid = os.fork()
    if pid == 0:
        os.kill(os.getpid(), 9)
    _, status = os.waitpid(pid, 0)
    end, code = relay()[0].end(status, "", True)
    assert (code, end["signal"]) == (137, 9)


class Report:
    def __init__(self, nodeid, when, passed):
        self.nodeid, self.when, self.passed = nodeid, when, passed


def test_the_child_stream_reaches_the_relay(tmp_path):
    """Tripwires (the child's side) writes what Relay (the parent's side) reads: each hit once, and
    one outcome a test, "passed" only when every phase passed."""
    rfd, wfd = os.pipe()
    go = {"tender": str(tmp_path / "tender"), "junit": str(tmp_path / "junit.xml"), "watch": [],
          "workspace": str(tmp_path / "ws")}
    wire = tripwires.Tripwires(wfd, go)
    wire.send("write", "report")
    wire.send("write", "report")
    wire.send("note:gc", "walked the referrers of an object")
    for nodeid, phases in (("t.py::test_a", (True, True, True)), ("t.py::test_b", (True, False, True)),
                           ("t.py::test_c[\udcff]", (True, True, True))):
        for when, passed in zip(("setup", "call", "teardown"), phases):
            wire.outcome(Report(nodeid, when, passed))
    os.close(wfd)
    r, emitted = relay()
    r.run(rfd)
    os.close(rfd)
    assert emitted == [("hit", {"kind": "write", "what": "report"}),
                       ("hit", {"kind": "note:gc", "what": "walked the referrers of an object"})]
    key = lambda n: hashlib.sha256(n.encode("utf-8", "surrogateescape")).hexdigest()[:16]  # noqa: E731
    assert r.outcomes == {key("t.py::test_a"): "passed", key("t.py::test_b"): "not",
                          key("t.py::test_c[\udcff]"): "passed"}


# The bootstrap is the files of boot/ joined into one source: a name defined in two files would
# silently be the later one, and a name no file defines fails only when the verifier reaches it.

BOOT_FILES = ["main.py", "control.py", "sentinels.py", "child.py", "tripwires.py", "start.py"]


def boot_file(name):
    with open(os.path.join(os.path.dirname(control.__file__), name)) as f:
        return f.read()


def test_boot_files_are_all_joined(boot_source):
    assert sorted(n for n in os.listdir(os.path.dirname(control.__file__)) if n.endswith(".py")) == sorted(BOOT_FILES)
    assert boot_source.startswith("# Tender's pytest bootstrap.")
    assert boot_source.rstrip().endswith("\nmain()")
    for name in BOOT_FILES:
        assert boot_file(name) in boot_source


def top_level_names(src):
    names = set()
    for node in ast.parse(src).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.For):
            names.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    return names


def test_no_name_is_defined_in_two_files():
    seen = {}
    for name in BOOT_FILES:
        for n in top_level_names(boot_file(name)):
            assert n not in seen, "%s is defined in %s and in %s" % (n, seen.get(n), name)
            seen[n] = name


def free_globals(table):
    """The global names table and its nested scopes read."""
    out = set()
    for sym in table.get_symbols():
        if sym.is_referenced() and (sym.is_global() or table.get_type() == "module"):
            out.add(sym.get_name())
    for child in table.get_children():
        out |= free_globals(child)
    return out


def test_every_name_the_bootstrap_reads_is_defined(boot_source):
    top = symtable.symtable(boot_source, "<bootstrap>", "exec")
    defined = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    missing = sorted(n for n in free_globals(top) if n not in defined and not hasattr(builtins, n))
    assert missing == []


@pytest.mark.parametrize("name", [n for n in BOOT_FILES if n != "start.py"])
def test_each_file_only_defines(name):
    """Each file but start.py only imports and defines: loading one alone (as the host tests do)
    runs nothing, forks nothing, and needs no other file. start.py only calls main()."""
    src = boot_file(name)
    for node in ast.parse(src).body:
        ok = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.For)
        assert isinstance(node, ok), "%s:%d runs %s" % (name, node.lineno, ast.unparse(node))
        if isinstance(node, (ast.Assign, ast.For)):
            calls = [ast.unparse(n) for n in ast.walk(node) if isinstance(n, ast.Call)]
            assert calls in ([], ["LOWER.upper()"]), "%s:%d calls %s" % (name, node.lineno, calls)
    exec(compile(src, name, "exec"), types.ModuleType("boot_" + name[:-3]).__dict__)
    assert [ast.unparse(n) for n in ast.parse(boot_file("start.py")).body] == ["main()"]
