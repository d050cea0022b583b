# Tender's pytest bootstrap. It is run as `python3 -I -B -c <this file>` inside a verifier,
# with its configuration on standard input, and it is the first code to run there.
#
# Two processes:
#   - the parent never imports anything from the workspace and never runs candidate code.
#     It reads the configuration (required test IDs, a nonce) from stdin, writes the forgery
#     sentinels into the test modules, and is the only writer of the control channel (the
#     exec's real stdout): one "plan" line, the relayed tripwire hits, one "end" line with the
#     child's exit status and the digest of the report as it stood when the child ended.
#   - the child imports pytest and its plugins before the workspace is on sys.path, marks the
#     absent standard-library names as missing, clears PYTEST_*/PYTHON* variables, installs
#     an audit hook (it cannot be removed), and runs pytest on the test IDs it gets from the
#     parent through a pipe (shuffled; they run in file and definition order): the IDs are
#     never on a command line or in a file.
#
# The child is forked before the configuration is read, so its memory never holds the
# required IDs apart from the sentinels, or the nonce. The parent makes itself non-dumpable,
# so the child cannot read its memory either. Everything the child reports is a hint
# (it runs the candidate's code); the parent's plan and end lines are evidence.
#
# The control lines, "TENDER-CONTROL <nonce> <kind> <json>" (control_line in control.py), and
# the Go code in grader/pyboot that reads each (Read in control.go takes them all in):
#
#   kind   when                           what                                   read by
#   plan   once, first                    sentinels and line shifts (Plan)       Read; Plan.Mutants, Plan.OriginalLine,
#                                                                                Control.Redact, Control.judgeSentinels
#   hit    0 to 200, after the plan       a tripwire hit the child sent (Hit)    Read; Control.judgeHits
#   end    once, last                     exit, signal, report digest, outcome   Read; Control.judgeEnd,
#                                         count and digest (End)                 Control.judgeOutcomes
#   error  instead of a plan              the stage the bootstrap gave up at     Read; Control.Judge (Broken)
#
# The child's own stream to the parent (a pipe, one JSON object a line) is read by Relay in
# control.py: {"kind", "what"} hits are relayed as hit lines, and {"kind": "outcome"} lines
# become the end line's outcome count and passed digest (passedDigest in judge.go).
#
# The files of this directory are joined into one source in the order pyboot.go gives
# (main, control, sentinels, child, tripwires, start); start.py calls main() once every
# definition exists.
import os
import sys


def main():
    ctrl = os.dup(1)
    go_r, go_w = os.pipe()
    hit_r, hit_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ctrl)
        os.close(go_w)
        os.close(hit_r)
        child(go_r, hit_w)
        os._exit(70)
    os.close(go_r)
    os.close(hit_w)
    parent(pid, ctrl, go_w, hit_r)


# ---------------------------------------------------------------------------------------
# the parent


def parent(pid, ctrl, go_w, hit_r):
    import json

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
        plan = make_sentinels(cfg)
        emit("plan", plan["public"])
        ids = list(cfg["ids"]) + plan["ids"]
        import random

        random.SystemRandom().shuffle(ids)
        go = {
            "args": pytest_args(cfg) + ids,
            "plugins": cfg.get("plugins") or [],
            "paths": plan["paths"] + [os.path.join(ws, p) for p in cfg.get("python_path") or []],
            "workspace": ws,
            "tender": tender,
            "junit": junit,
            "watch": plan["files"],
        }
        write_all(go_w, json.dumps(go).encode())
    except Exception as e:  # a broken configuration or workspace: no verdict
        emit("error", {"stage": "plan", "type": type(e).__name__})
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os._exit(3)
    finally:
        os.close(go_w)

    relay = Relay(emit)
    import threading

    t = threading.Thread(target=relay.run, args=(hit_r,), daemon=True)
    t.start()
    _, status = os.waitpid(pid, 0)
    # The report as it stood when the test process ended: before anything else runs here.
    junit_digest = file_sha256(cfg["junit"])
    # The stream ends when the last holder of its write end exits: the test process, and any
    # process it forked. What is still in the pipe is read to the end, however loaded the
    # machine; a forked process that keeps the stream open leaves it unfinished.
    t.join(10.0)
    end, code = relay.end(status, junit_digest, not t.is_alive())
    emit("end", end)
    os._exit(code)


def pytest_args(cfg):
    """pytest's command line: Tender's settings only. No ini file of the candidate's is read
    (-c /dev/null), no plugin loads by itself, test modules and conftests are imported by
    path (importlib), and the cache is off."""
    args = ["-c", os.devnull, "--rootdir", cfg["workspace"], "-o", "addopts=", "-o", "junit_family=xunit1",
            "-o", "junit_logging=no", "-o", "junit_log_passing_tests=false", "-p", "no:cacheprovider",
            "--import-mode=importlib", "--junitxml", cfg["junit"], "-q", "-rfE", "--tb=short", "--color=no"]
    for p in cfg.get("plugins") or []:
        args += ["-p", p]
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
