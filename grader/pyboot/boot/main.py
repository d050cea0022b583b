# Tender's pytest bootstrap. It is run as `python3 -I -B -c <this file>` inside a verifier,
# as the verifier user, with its configuration on standard input, once Tender's planter
# (plant.py, a step of its own run as root before it) has written the sentinels and the held
# sites into the test modules and handed Tender the plan.
#
# Two processes:
#   - the parent never imports anything from the workspace and never runs candidate code.
#     It reads the configuration (the test IDs to run, the held literals, a nonce) from stdin,
#     answers the test process's held comparisons (held.py) itself, and is the only writer of
#     the control channel (the exec's real stdout): one "start" line, the relayed tripwire
#     hits, one "end" line with the child's exit status, the digest of the report as it stood
#     when the child ended, and the record of every held comparison.
#   - the child imports pytest and its plugins before the workspace is on sys.path, marks the
#     absent standard-library names as missing, clears PYTEST_*/PYTHON* variables, installs
#     an audit hook (it cannot be removed), and runs pytest on the test IDs it gets from the
#     parent through a pipe (shuffled; they run in file and definition order): the IDs are
#     never on a command line or in a file.
#
# The child is forked before the configuration is read, so its memory never holds the nonce or
# the held literals. The parent makes itself non-dumpable, so the child cannot read its memory
# either. Everything the child reports is a hint (it runs the candidate's code); the parent's
# start and end lines, and its own comparisons, are evidence.
#
# The control lines, "TENDER-CONTROL <nonce> <kind> <json>" (control_line in control.py), and
# the Go code in grader/pyboot that reads each (Read in control.go takes them all in):
#
#   kind   when                           what                                   read by
#   start  once, first                    that the parent read its configuration  Read
#   hit    0 to 200, after the start      a tripwire hit the child sent (Hit)    Read; Control.judgeHits
#   end    once, last                     exit, signal, report digest, outcome   Read; Control.judgeEnd,
#                                         count and digest, held records (End)   Control.judgeOutcomes,
#                                                                                Control.judgeHeld
#   error  instead of a start             the stage the bootstrap gave up at     Read; Control.Judge (Broken)
#
# The plan (sentinels, held sites, line shifts, the line of each required test) is not a
# control line: the planter handed it to Tender through its own step (ParsePlan in plan.go).
#
# The child's own streams to the parent (pipes, one JSON object a line): hits and outcomes are
# read by Relay in control.py ({"kind", "what"} hits are relayed as hit lines, and
# {"kind": "outcome"} lines become the end line's outcome count and passed digest, see
# passedDigest in judge.go); held comparisons are asked and answered through Asker (asker.py).
#
# The files of this directory are joined into one source in the order pyboot.go gives
# (main, control, held, asker, stdlib, child, tripwires, values, start); start.py calls main() once every
# definition exists. The planter's source is held, sentinels, plant and plantstart.
import os
import sys


def main():
    # Both processes use json and threading (pytest imports threading): imported once, before
    # the fork, rather than by each on the check's one CPU. Neither reads the configuration.
    import json  # noqa: F401
    import threading  # noqa: F401

    ctrl = os.dup(1)
    go_r, go_w = os.pipe()
    hit_r, hit_w = os.pipe()
    ask_r, ask_w = os.pipe()
    ans_r, ans_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        for fd in (ctrl, go_w, hit_r, ask_r, ans_w):
            os.close(fd)
        child(go_r, hit_w, ask_w, ans_r)
        os._exit(70)
    for fd in (go_r, hit_w, ask_w, ans_r):
        os.close(fd)
    parent(pid, ctrl, go_w, hit_r, ask_r, ans_w)


# ---------------------------------------------------------------------------------------
# the parent


def parent(pid, ctrl, go_w, hit_r, ask_r, ans_w):
    import json
    import threading

    nondumpable()
    nonce = ""

    def emit(kind, obj):
        write_all(ctrl, control_line(nonce, kind, obj))

    try:
        cfg = json.loads(read_all(0).decode("utf-8"))
        nonce = cfg["nonce"]
        ws, tender, junit = (os.environ[k] for k in ("TENDER_WORKSPACE", "TENDER_DIR", "TENDER_JUNIT"))
        cfg["workspace"], cfg["junit"] = ws, junit
        unlink(junit)  # a report must be written by this run, not planted before it
        asker = Asker(cfg.get("held") or {})
        emit("start", {"v": 2})
        ids = list(cfg["ids"])
        import random

        random.SystemRandom().shuffle(ids)
        go = {
            "args": pytest_args(cfg) + ids,
            "plugins": cfg.get("plugins") or [],
            "paths": (cfg.get("paths") or []) + [os.path.join(ws, p) for p in cfg.get("python_path") or []],
            "python_path": [os.path.join(ws, p) for p in cfg.get("python_path") or []],
            "workspace": ws,
            "tender": tender,
            "junit": junit,
            "watch": cfg.get("watch") or [],
            "project_copy": cfg.get("project_copy") or "",
        }
        write_all(go_w, json.dumps(go).encode())
    except Exception as e:  # a broken configuration: no verdict
        emit("error", {"stage": "config", "type": type(e).__name__})
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os._exit(3)
    finally:
        os.close(go_w)

    relay = Relay(emit)
    t = threading.Thread(target=relay.run, args=(hit_r,), daemon=True)
    t.start()
    a = threading.Thread(target=asker.run, args=(ask_r, ans_w), daemon=True)
    a.start()
    _, status = os.waitpid(pid, 0)
    # The report as it stood when the test process ended: before anything else runs here.
    junit_digest = file_sha256(cfg["junit"])
    # The streams end when the last holder of their write ends exits: the test process, and any
    # process it forked. What is still in them is read to the end, however loaded the machine;
    # a forked process that keeps a stream open leaves it unfinished.
    t.join(10.0)
    a.join(10.0)
    stream_ended = not t.is_alive() and not a.is_alive()
    # Then nothing the test process left behind (a forked grandchild) lives on, into the post
    # commands or until Tender reads the report; a rewrite after the digest shows on the host.
    reaped = reap_descendants()
    end, code = relay.end(status, junit_digest, stream_ended)
    end["reaped"] = reaped
    end["held"], end["held_unknown"] = asker.records(), asker.unknown
    emit("end", end)
    os._exit(code)


def in_verifier():
    """Only inside a verifier is every process of this user that started after this one the
    check's own: the bootstrap runs as the verifier user, not root, under docker-init, which runs
    as Tender's own user (root), whose processes this one cannot signal."""
    try:
        with open("/proc/1/comm") as f:
            if f.read().strip() != "docker-init":
                return False
        return os.getuid() != 0 and os.stat("/proc/1").st_uid != os.getuid()
    except OSError:
        return False


def proc_start(pid):
    """A process's start time (clock ticks since boot), or None for a zombie or a gone one."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            fields = f.read().rsplit(b") ", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in (b"Z", b"X"):
        return None
    return int(fields[19])


def reap_descendants(rounds=200):
    """Kill (SIGSTOP, then SIGKILL) every process that started no earlier than this one, this
    one aside, until /proc shows none alive: the test process's leftovers. The verifier's init,
    its main process and the surfaces script started earlier and are spared (kill(-1) would
    take the main process, and the container with it). Reports whether none is left."""
    if not in_verifier():
        return True
    me = os.getpid()
    mine = proc_start(me)
    for _ in range(rounds):
        left = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == me:
                continue
            st = proc_start(int(name))
            if st is not None and st >= mine:
                left.append(int(name))
        if not left:
            return True
        for sig in (19, 9):  # SIGSTOP, SIGKILL
            for p in left:
                try:
                    os.kill(p, sig)
                except OSError:
                    pass
    return False


def pytest_args(cfg):
    """pytest's command line: Tender's settings only. No ini file of the candidate's is read
    (-c /dev/null), no plugin loads by itself, test modules and conftests are imported by
    path (importlib), and the cache is off."""
    args = ["-c", os.devnull, "--rootdir", cfg["workspace"], "-o", "addopts=", "-o", "junit_family=xunit1",
            "-o", "junit_logging=no", "-o", "junit_log_passing_tests=false", "-p", "no:cacheprovider",
            "--import-mode=importlib", "--junitxml", cfg["junit"], "-q", "-rfE", "--tb=short", "--color=no"]
    for p in cfg.get("plugins") or []:
        args += ["-p", p]
    if any(p.split(".")[0] == "pytest_mock" for p in cfg.get("plugins") or []):
        # pytest-mock rewraps unittest.mock's assert methods as it configures, after the
        # standard library's snapshot: an honest project would trip the tripwire. Off, as a
        # suite may still turn it on with its own ini.
        args += ["-o", "mock_traceback_monkeypatch=false"]
    args += cfg.get("pytest_options") or []
    return args


def unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def nondumpable():
    # PR_SET_DUMPABLE 0: a process of the same user can neither ptrace this one nor read its
    # /proc/<pid>/mem, so the child cannot learn the nonce.
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass


def read_all(fd):
    out = []
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            return b"".join(out)
        out.append(b)


def write_all(fd, data):
    while data:
        n = os.write(fd, data)
        data = data[n:]


def file_sha256(path):
    import hashlib

    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return ""
