# The held comparisons' two ends on the host, as the bootstrap joins them: the parent's Asker
# and the child's held_install (asker.py) over real pipes, and a pytest plugin that puts the
# same pair into a host pytest run, so that a planted module runs there as it does in a
# verifier: its `_tender_held` asks a parent that holds the literals the planter took out.
import json
import os
import subprocess
import sys
import threading

import helpers


def boot_names():
    """The bootstrap's namespace (every file of bootOrder, joined, without its call to main())."""
    return helpers.names_of(helpers.boot_source(), "main()")



# What the child's comparison_trusted (child.py) says of a type, as far as a host test needs: a
# comparison the standard library or pytest defines is trusted, one of any other module's is
# not (the child also trusts an evaluator's file, which the host tests do not model: their
# classes stand for the code under test's). Shared with PLUGIN below, which runs it in pytest.
HOST_TRUSTED = r'''
def host_trusted(t):
    import builtins

    for name in ("__eq__", "__ne__"):
        for c in type.__getattribute__(t, "__mro__"):
            if name in type.__getattribute__(c, "__dict__"):
                mod = getattr(c, "__module__", "") or ""
                top = mod.partition(".")[0]
                if (getattr(builtins, getattr(c, "__name__", ""), None) is not c and top not in sys.stdlib_module_names
                        and top not in ("_pytest", "pytest", "pluggy")):
                    return False
                break
    return True
'''
exec(HOST_TRUSTED)


class Pair:
    """An Asker holding held (token -> [operator, encoded literal]) in a thread of this process,
    and the child's module _tender_held talking to it through two real pipes: what the
    bootstrap's parent and child are to each other."""

    def __init__(self, held, ns=None, rng=None):
        self.ns = ns if ns is not None else boot_names()
        self.asker = self.ns["Asker"](held)
        if rng is not None:
            self.asker.rng = rng
        self.ask_r, self.ask_w = os.pipe()
        self.ans_r, self.ans_w = os.pipe()
        self.thread = threading.Thread(target=self.asker.run, args=(self.ask_r, self.ans_w), daemon=True)
        self.thread.start()
        self.module, self.running = self.ns["held_install"](self.ask_w, self.ans_r, host_trusted)
        self.ask = self.module.ask

    def close(self):
        """Ends the exchange as the child's exit does: the parent's reader sees the end."""
        os.close(self.ask_w)
        self.thread.join(10)
        assert not self.thread.is_alive(), "the Asker did not end with its stream"
        for fd in (self.ask_r, self.ans_w, self.ans_r):
            os.close(fd)

    def records(self):
        """{(token, test key): [matched, mismatched, evaluated, lies]}."""
        return {(r[0], r[1]): r[2:] for r in self.asker.records()}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# The plugin a host pytest run loads (-p tender_held_host): the bootstrap's own Asker and
# held_install from its joined source, the running test's key as Tender's plugin sets it, the
# order Tender's plugin gives, and at the end each test's outcome (passed only when every phase
# passed, as the bootstrap's outcome stream has it), the run order and the parent's records.
PLUGIN = r'''
import json
import os
import sys
import threading

import pytest

SOURCE, PRIVATE, RESULT = %(source)r, %(private)r, %(result)r


def _names():
    with open(SOURCE) as f:
        body = f.read().rstrip()
    ns = {"__name__": "tender_source"}
    exec(compile(body[: -len("main()")], SOURCE, "exec"), ns)
    return ns


%(trusted)s

_ns = _names()
with open(PRIVATE) as _f:
    _asker = _ns["Asker"](json.load(_f))
_ask_r, _ask_w = os.pipe()
_ans_r, _ans_w = os.pipe()
threading.Thread(target=_asker.run, args=(_ask_r, _ans_w), daemon=True).start()
_module, _running = _ns["held_install"](_ask_w, _ans_r, host_trusted)
sys.modules[_ns["HELD_MODULE"]] = _module
_outcomes, _order = {}, []


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    def key(item):
        path, line, _ = item.location
        indices = getattr(getattr(item, "callspec", None), "indices", None) or {}
        return (path, -1 if line is None else line, sorted(indices.items()))

    items.sort(key=key)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    _running(_ns["test_key"](item.nodeid))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    if call.when == "call":
        _running("")


def pytest_runtest_logreport(report):
    if report.nodeid not in _outcomes:
        _order.append(report.nodeid)
    now = _outcomes.get(report.nodeid, "passed")
    if report.failed:
        now = "failed"
    elif report.skipped and now != "failed":
        now = "skipped"
    _outcomes[report.nodeid] = now


def pytest_unconfigure(config):
    with open(RESULT, "w") as f:
        json.dump({"outcomes": _outcomes, "order": _order, "held": _asker.records(), "unknown": _asker.unknown}, f)
'''


class Run:
    """What a host pytest run with the held plugin gave: outcomes by node ID, the order the
    tests ran in, the parent's records {(token, key): [matched, mismatched, evaluated, lies]},
    the asks it could not place, pytest's exit status and its output."""

    def __init__(self, result, code, log):
        self.outcomes, self.order = result["outcomes"], result["order"]
        self.records = {(r[0], r[1]): r[2:] for r in result["held"]}
        self.unknown, self.code, self.log = result["unknown"], code, log

    def asked(self, token, nodeid):
        """The parent's counts for one held site asked while the test nodeid ran, or None."""
        return self.records.get((token, helpers.held.test_key(nodeid)))


def run_pytest(root, ws, args, private, paths=(), timeout=300):
    """Runs the host's pytest in ws as the bootstrap runs it (no ini file, importlib mode, no
    plugin loads by itself), with the held plugin answering the planted modules' held sites from
    private (token -> [operator, encoded literal]) and paths on sys.path. root is a directory of
    the test's own for the plugin and its result."""
    plug = os.path.join(str(root), "held-plugin-%d" % len(os.listdir(str(root))))
    os.makedirs(plug)
    source = os.path.join(plug, "bootstrap.py")
    with open(source, "w") as f:
        f.write(helpers.boot_source())
    with open(os.path.join(plug, "private.json"), "w") as f:
        json.dump(private, f)
    result = os.path.join(plug, "result.json")
    with open(os.path.join(plug, "tender_held_host.py"), "w") as f:
        f.write(PLUGIN % {"source": source, "private": os.path.join(plug, "private.json"), "result": result,
                          "trusted": HOST_TRUSTED})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([plug] + list(paths)), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    for k in ("TENDER_BOOTSTRAP", "TENDER_PLANTER"):
        env.pop(k, None)
    p = subprocess.run([sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tender_held_host",
                        "-c", os.devnull, "--rootdir", ws, "--import-mode=importlib"] + list(args),
                       cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    log = p.stdout.decode(errors="replace")
    assert os.path.exists(result), "the held plugin wrote no result:\n" + log[-3000:]
    with open(result) as f:
        return Run(json.load(f), p.returncode, log)
