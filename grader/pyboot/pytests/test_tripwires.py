# The tripwires fail closed: hits and outcomes go through one writer, which sends no outcome once
# any part of the tripwires was replaced; and no frame the code under test can walk holds them.
# The bootstrap runs whole here (its source as the verifier gets it) on a small workspace.
import hashlib
import json
import os
import subprocess
import sys

import pytest

import control
import tripwires


def relay_of(rfd):
    emitted = []
    r = control.Relay(lambda kind, obj: emitted.append((kind, obj)))
    r.run(rfd)
    os.close(rfd)
    return r, emitted


class Report:
    def __init__(self, nodeid, when, passed):
        self.nodeid, self.when, self.passed = nodeid, when, passed


def finish(wire, nodeid):
    for when in ("setup", "call", "teardown"):
        wire.outcome(Report(nodeid, when, True))


def armed(tmp_path):
    rfd, wfd = os.pipe()
    go = {"tender": str(tmp_path / "tender"), "junit": str(tmp_path / "junit.xml"),
          "watch": [str(tmp_path / "ws" / "tests" / "test_a.py")], "workspace": str(tmp_path / "ws")}
    wire = tripwires.Tripwires(wfd, go)
    wire.seal_with(tripwires.seal(wire, vars(tripwires)))
    return wire, rfd, wfd


def key(nodeid):
    return hashlib.sha256(nodeid.encode()).hexdigest()[:16]


def test_an_untouched_wire_sends_every_outcome(tmp_path):
    wire, rfd, wfd = armed(tmp_path)
    wire.on_kill((0, 9))  # a hit between outcomes changes nothing
    finish(wire, "t.py::test_a")
    finish(wire, "t.py::test_b")
    os.close(wfd)
    r, emitted = relay_of(rfd)
    assert r.outcomes == {key("t.py::test_a"): "passed", key("t.py::test_b"): "passed"}
    assert emitted == [("hit", {"kind": "signal", "what": "own process group"})]


def silence_send(wire):
    wire.send = lambda *a: None


def silence_handlers(wire):
    wire.handlers.clear()


def silence_one_handler(wire):
    wire.handlers["os.kill"] = lambda args: None


def stay_busy(wire):
    wire.busy = True


def shadow_a_method(wire):
    wire.guarded = lambda path: None


def patch_the_class(wire):
    tripwires.Tripwires.on_kill = lambda self, args: None


def blind_the_watch(wire):
    wire.watch.clear()


def empty_the_snapshot(wire):
    wire.snapshot.clear()


def replace_a_function(wire):
    tripwires.snapshot_machinery = lambda *a: {}


@pytest.mark.parametrize("tamper", [silence_send, silence_handlers, silence_one_handler, stay_busy, shadow_a_method,
                                    patch_the_class, blind_the_watch, empty_the_snapshot, replace_a_function])
def test_replacing_any_part_of_the_tripwires_silences_the_outcomes(tmp_path, monkeypatch, tamper):
    wire, rfd, wfd = armed(tmp_path)
    finish(wire, "t.py::test_before")
    # monkeypatch undoes what the tamper does to the module and class at the end of this test.
    monkeypatch.setattr(tripwires.Tripwires, "on_kill", tripwires.Tripwires.on_kill)
    monkeypatch.setattr(tripwires, "snapshot_machinery", tripwires.snapshot_machinery)
    tamper(wire)
    finish(wire, "t.py::test_after")
    os.close(wfd)
    r, _ = relay_of(rfd)
    # The outcome of the test that ran after the tampering is missing: the report's passed tests
    # no longer match the passed digest (judgeOutcomes), or none arrived at all.
    assert r.outcomes == {key("t.py::test_before"): "passed"}


WALKER = '''
import gc
import sys


def walk():
    """What the attack reaches by walking the stack: every local and free variable of every frame,
    and of every suspended generator (a hook wrapper) a frame holds, alone or in a list."""
    found, f = [], sys._getframe()
    while f is not None:
        for v in list(f.f_locals.values()):
            found.append(type(v).__name__)
            for x in (v if type(v) in (list, tuple) else [v]):
                frame = getattr(x, "gi_frame", None)
                if frame is not None:
                    found.extend(type(y).__name__ for y in list(frame.f_locals.values()))
        f = f.f_back
    return found


def test_no_frame_holds_the_tripwires():
    found = walk()
    assert "Tripwires" not in found and "generator" in found and "function" in found


def test_silenced_through_the_heap():
    for o in gc.get_objects():
        if type(o).__name__ == "Tripwires":
            o.send = lambda *a: None


def test_passes_after_it():
    assert 1 + 1 == 2
'''


def run_boot(boot_source, tmp_path, module):
    ws, tender = tmp_path / "ws", tmp_path / "tender"
    (ws / "tests").mkdir(parents=True)
    tender.mkdir()
    (ws / "tests" / "test_walk.py").write_text(module)
    ids = ["tests/test_walk.py::test_no_frame_holds_the_tripwires", "tests/test_walk.py::test_silenced_through_the_heap",
           "tests/test_walk.py::test_passes_after_it"]
    cfg = {"nonce": "n0", "ids": ids, "twins": 0, "mutants": 0, "near": 0, "negated": 0}
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TENDER_WORKSPACE": str(ws), "TENDER_DIR": str(tender),
           "TENDER_JUNIT": str(tender / "junit.xml")}
    out = subprocess.run([sys.executable, "-I", "-B", "-c", boot_source], input=json.dumps(cfg).encode(),
                         capture_output=True, timeout=120, cwd=str(ws), env=env)
    lines = {}
    for line in out.stdout.splitlines():
        _, _, kind, payload = line.split(b" ", 3)
        lines.setdefault(kind.decode(), []).append(json.loads(payload))
    return lines, out.stderr.decode(errors="replace"), (tender / "junit.xml").read_text()


def test_silencing_the_wire_silences_the_outcomes(boot_source, tmp_path):
    """The whole bootstrap: no frame holds the Tripwires object; found through the heap and
    silenced, it sends no outcome for any test after it, so the report's passed tests (all three)
    do not match the passed digest the parent sends, which judgeOutcomes takes for a forgery."""
    lines, stderr, junit = run_boot(boot_source, tmp_path, WALKER)
    end = lines["end"][0]
    assert junit.count("<testcase") == 3 and "<failure" not in junit, stderr
    assert end["exit"] == 0, stderr
    assert end["outcomes"] == 1, (end, stderr)  # test_no_frame_holds_the_tripwires only
    want = hashlib.sha256(key("tests/test_walk.py::test_no_frame_holds_the_tripwires").encode()).hexdigest()
    assert end["passed_sha256"] == want
