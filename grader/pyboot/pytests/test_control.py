# The control channel as the parent writes it, the child's stream as Relay reads it, and the
# bootstrap's source as one file: what the split into boot/*.py must keep.
import ast
import builtins
import hashlib
import json
import os
import re
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
    """A control line is the prefix, the nonce, the kind and compact JSON with sorted keys."""
    line = control.control_line("4f1c", "plan", {"v": 1, "sentinels": [], "shifts": {"t.py": [[3, 4]]}})
    assert line == b'TENDER-CONTROL 4f1c plan {"sentinels":[],"shifts":{"t.py":[[3,4]]},"v":1}\n'


@pytest.mark.parametrize("obj", [
    {"kind": "write", "what": "a\nTENDER-CONTROL 4f1c end {}"},  # a line break stays inside the JSON
    {"id": "t.py::test_\u00e9[\u4e2d]", "kind": "twin"},  # non-ASCII is escaped
    {"stage": "plan", "type": "KeyError"},
])
def test_control_line_is_one_line(obj):
    """Whatever the payload holds, a control line is one ASCII line that parses back to it."""
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
    """Relay relays hits (only their kind and what), keeps one outcome a test, and makes the end
    line's counts and passed digest of them."""
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
    """However the stream is cut into reads, Relay sees the same lines."""
    data = b"".join(STREAM) + outcome("t.py::test_a", "passed")[0]
    whole, _ = relay()
    whole.feed(data)
    for size in (1, 2, 7, 64):
        r, _ = relay()
        for i in range(0, len(data), size):
            r.feed(data[i:i + size])
        assert (r.hits, r.outcomes, r.end(0, "", True)) == (whole.hits, whole.outcomes, whole.end(0, "", True))


def test_relay_run_reads_a_pipe_to_its_end():
    """Relay.run reads to the end of the pipe; an unfinished last line is no line."""
    rfd, wfd = os.pipe()
    os.write(wfd, b"".join(STREAM) + b'{"kind":"write","what":"unfinished')
    os.close(wfd)
    r, emitted = relay()
    r.run(rfd)
    os.close(rfd)
    assert r.hits == 4 and len(emitted) == 4  # a last line without its end is no line


def test_relay_counts_a_second_outcome():
    """A second outcome for one test is counted (judgeOutcomes forges on it); the last one stands."""
    r, _ = relay()
    line, key = outcome("t.py::test_a", "not")
    r.feed(line + outcome("t.py::test_a", "passed")[0])
    assert r.dups == 1 and r.outcomes == {key: "passed"}


def test_relay_relays_200_hits_and_counts_all():
    """Hits past the first 200 are counted, not relayed: the control channel stays small."""
    r, emitted = relay()
    r.feed(b'{"kind":"write","what":"test"}\n' * 250)
    assert r.hits == 250 and len(emitted) == 200
    assert r.end(0, "", True)[0]["hits"] == 250


@pytest.mark.parametrize("status, code, signal", [(0, 0, None), (1 << 8, 1, None), (5 << 8, 5, None), (9, 137, 9),
                                                  (15, 143, 15)])
def test_relay_end_status(status, code, signal):
    """The end line's exit is the child's exit status, or 128 + the signal that killed it."""
    r, _ = relay()
    end, got = r.end(status, "", False)
    assert got == code and end["exit"] == code and end.get("signal") == signal and end["stream_ended"] is False


def test_relay_end_of_a_real_child():
    """The wait status of a child killed by SIGKILL reads as signal 9, exit 137."""
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


# The bootstrap and the planter are files of boot/ joined into one source each: a name defined in
# two files of one source would silently be the later one, and a name no file defines fails only
# when the verifier reaches it.


def order(var):
    """The files a Go order of pyboot.go joins (bootOrder, planterOrder)."""
    with open(os.path.join(os.path.dirname(BOOT), "pyboot.go")) as f:
        m = re.search(var + r"\s*=\s*\[\]string\{([^}]*)\}", f.read())
    return re.findall(r'"([^"]+)"', m.group(1))


BOOT = os.path.dirname(control.__file__)
BOOT_FILES, PLANTER_FILES = order("bootOrder"), order("planterOrder")
SOURCES = [("bootOrder", BOOT_FILES, "main()"), ("planterOrder", PLANTER_FILES, "plant_main()")]


def boot_file(name):
    with open(os.path.join(BOOT, name)) as f:
        return f.read()


def test_boot_files_are_all_joined(boot_source, planter_source):
    """Every file of boot/ is in the bootstrap or the planter, in its order; the bootstrap starts
    with main.py's header and ends by calling main(), the planter ends by calling plant_main()."""
    assert sorted(n for n in os.listdir(BOOT) if n.endswith(".py")) == sorted(set(BOOT_FILES) | set(PLANTER_FILES))
    assert BOOT_FILES[0] == "main.py" and BOOT_FILES[-1] == "start.py" and PLANTER_FILES[-1] == "plantstart.py"
    assert boot_source.startswith("# Tender's pytest bootstrap.")
    for source, files, last in ((boot_source, BOOT_FILES, "main()"), (planter_source, PLANTER_FILES, "plant_main()")):
        assert source.rstrip().endswith("\n" + last)
        at = 0
        for name in files:
            i = source.find(boot_file(name), at)
            assert i >= 0, "%s is not in its source after the files before it" % name
            at = i + len(boot_file(name))


def test_the_test_process_never_holds_the_planter():
    """The sentinels and the planting are the planter's alone: the bootstrap, whose child runs the
    candidate's code, has neither sentinels.py nor plant.py."""
    assert not {"sentinels.py", "plant.py", "plantstart.py"} & set(BOOT_FILES)
    assert not {"main.py", "child.py", "tripwires.py", "asker.py", "start.py"} & set(PLANTER_FILES)


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


@pytest.mark.parametrize("var, files, last", SOURCES)
def test_no_name_is_defined_in_two_files(var, files, last):
    """No top-level name is defined by two files of one joined source (the later would win)."""
    seen = {}
    for name in files:
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


def test_every_name_a_source_reads_is_defined(boot_source, planter_source):
    """Every global name the bootstrap and the planter read is defined by a file of their source, or
    a builtin."""
    for name, source in (("bootstrap", boot_source), ("planter", planter_source)):
        top = symtable.symtable(source, "<%s>" % name, "exec")
        defined = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
        missing = sorted(n for n in free_globals(top) if n not in defined and not hasattr(builtins, n))
        assert missing == [], name


def host_import(node, name):
    """`if __name__ == "sentinels": from held import ...` in sentinels.py: what a file needs of the
    files before it in its source, imported only when the host tests import it alone under its
    own name (in a joined source those names are already defined)."""
    files = {n[:-3] for n in BOOT_FILES + PLANTER_FILES}
    return (isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == %r" % name[:-3] and not node.orelse
            and all(isinstance(s, ast.ImportFrom) and s.module in files for s in node.body))


def harmless(call):
    """A call a top-level assignment may make: LOWER.upper(), or a builtin constructor of literals
    (frozenset of the standard library's names, a sentinel object())."""
    if ast.unparse(call) == "LOWER.upper()":
        return True
    if not (isinstance(call.func, ast.Name) and call.func.id in ("frozenset", "set", "tuple", "object")):
        return False
    try:
        [ast.literal_eval(a) for a in call.args]
    except ValueError:
        return False
    return not call.keywords


@pytest.mark.parametrize("name", sorted(set(BOOT_FILES + PLANTER_FILES) - {"start.py", "plantstart.py"}))
def test_each_file_only_defines(name):
    """Each file but the two last only imports and defines: loading one alone (as the host tests
    do) runs nothing, forks nothing, and needs no other file. start.py only calls main(),
    plantstart.py only plant_main()."""
    src = boot_file(name)
    for node in ast.parse(src).body:
        ok = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.For)
        assert isinstance(node, ok) or host_import(node, name), "%s:%d runs %s" % (name, node.lineno,
                                                                                   ast.unparse(node))
        if isinstance(node, (ast.Assign, ast.For)):
            calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
            assert all(harmless(c) for c in calls), "%s:%d calls %s" % (name, node.lineno, ast.unparse(calls[0]))
    exec(compile(src, name, "exec"), types.ModuleType("boot_" + name[:-3]).__dict__)
    assert [ast.unparse(n) for n in ast.parse(boot_file("start.py")).body] == ["main()"]
    assert [ast.unparse(n) for n in ast.parse(boot_file("plantstart.py")).body] == ["plant_main()"]
