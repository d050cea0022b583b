# The tripwires: the audit hook and the checks around each test, in the child. What they see goes
# to the parent as one JSON line a hit (see Relay in control.py).
import os
import sys


LETHAL = {1, 2, 3, 6, 9, 11, 15, 19}


class Tripwires:
    """The audit hook and the checks around each test. They record what no honest test run
    does to the test machinery. Hits carry only Tender's own words (a kind and a fixed
    'what'), never a path or a value. Trust is decided by code-object identity, captured
    before any candidate code ran, never by a file name (which compile() lets anyone choose)."""

    def __init__(self, fd, go):
        import importlib._bootstrap as boot

        import _pytest.config
        import _pytest.junitxml
        from _pytest.assertion.rewrite import AssertionRewritingHook

        self.fd = fd
        self.tender = os.path.realpath(go["tender"]) + os.sep
        self.home = os.path.join(self.tender, "home") + os.sep
        self.junit = os.path.realpath(go["junit"])
        self.watch = set(os.path.realpath(p) for p in go["watch"])
        self.workspace = os.path.realpath(go["workspace"]) + os.sep
        self.pid = os.getpid()
        self.pgid = os.getpgid(0)
        self.busy = False
        self.seen = set()
        # The only frames that may run a test module's code, and write the report.
        self.exec_callers = (boot._call_with_frames_removed.__code__, AssertionRewritingHook.exec_module.__code__)
        self.report_writer = _pytest.junitxml.LogXML.pytest_sessionfinish.__code__
        pm = _pytest.config.PytestPluginManager
        self.conftest_callers = (pm.consider_conftest.__code__, pm._importconftest.__code__)
        self.genuine = {}  # test module path -> code objects compiled by the import system
        self.outcomes = {}  # nodeid -> "passed" or "not", as the phases came in
        self.write = os.write  # taken now: the code under test may replace os.write later
        self.snapshot = snapshot_machinery()
        self.builtins = snapshot_builtins()
        self.handlers = {
            "open": self.on_open,
            "os.rename": self.on_move,
            "os.replace": self.on_move,
            "os.link": self.on_move,
            "os.symlink": self.on_move,
            "os.remove": self.on_remove,
            "os.rmdir": self.on_remove,
            "os.truncate": self.on_remove,
            "os.kill": self.on_kill,
            "os.killpg": self.on_killpg,
            "exec": self.on_exec,
            "object.__setattr__": self.on_setattr,
            "ctypes.dlopen": self.note("ctypes", "loaded a C library through ctypes"),
            "ctypes.call_function": self.note("ctypes", "called a C function through ctypes"),
            "gc.get_objects": self.note("gc", "walked every object of the interpreter"),
            "gc.get_referrers": self.note("gc", "walked the referrers of an object"),
            "sys._current_frames": self.note("frames", "read the frames of every thread"),
            "sys.settrace": self.note("trace", "installed a trace function"),
            "sys.setprofile": self.note("trace", "installed a profile function"),
        }

    def hook(self, event, args):
        h = self.handlers.get(event)
        if h is None or self.busy:
            return
        self.busy = True
        try:
            h(args)
        except Exception:
            pass
        finally:
            self.busy = False

    def send(self, kind, what):
        if (kind, what) in self.seen:
            return
        self.seen.add((kind, what))
        try:
            self.write(self.fd, ('{"kind":"%s","what":"%s"}\n' % (kind, what)).encode())
        except OSError:
            pass

    def note(self, kind, what):
        return lambda args: self.send("note:" + kind, what)

    def outcome(self, report):
        """Keeps each test's outcome as pytest reports it, phase by phase, and sends it when the
        test is done: the parent compares the report file with these."""
        import hashlib

        state = self.outcomes.setdefault(report.nodeid, "passed")
        if not report.passed:
            state = "not"
        self.outcomes[report.nodeid] = state
        if report.when == "teardown":
            key = hashlib.sha256(report.nodeid.encode("utf-8", "surrogateescape")).hexdigest()[:16]
            try:
                self.write(self.fd, ('{"kind":"outcome","what":"%s:%s"}\n' % (key, state)).encode())
            except OSError:
                pass

    def guarded(self, path):
        if not isinstance(path, (str, bytes)):
            return None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        p = os.path.realpath(path)
        if p == self.junit:
            return "report"
        if p.startswith(self.tender) and not p.startswith(self.home):
            return "tender"
        if p in self.watch or self.is_test_file(p):
            return "test"
        return None

    def is_test_file(self, p):
        """A test module or conftest of the workspace, by the names pytest collects: what no
        honest test run rewrites while it runs."""
        if not p.startswith(self.workspace) or not p.endswith(".py"):
            return False
        name = os.path.basename(p)
        return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"

    def evaluator_conftest(self, frame, plugin):
        """Whether pytest itself is registering an evaluator's conftest: the two frames below
        are pytest's own conftest loader, the module's file is an evaluator file, and its hooks
        were compiled from that file."""
        import types

        if (frame.f_code is not self.conftest_callers[0] or frame.f_back is None
                or frame.f_back.f_code is not self.conftest_callers[1]):
            return False
        if not isinstance(plugin, types.ModuleType) or not isinstance(getattr(plugin, "__file__", None), str):
            return False
        path = os.path.realpath(plugin.__file__)
        if not self.evaluator_file(path):
            return False
        for k, v in list(vars(plugin).items()):
            code = getattr(v, "__code__", None)
            if k.startswith("pytest_") and (code is None or os.path.realpath(code.co_filename) != path):
                return False
        return True

    def evaluator_file(self, p):
        """A file of the evaluator's by the default restored paths: a test file, or anything
        under a tests/ or test/ directory."""
        if not p.startswith(self.workspace):
            return False
        parts = p[len(self.workspace):].split(os.sep)
        return self.is_test_file(p) or "tests" in parts[:-1] or "test" in parts[:-1]

    def on_open(self, args):
        path, mode, flags = args[0], args[1], args[2]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int)
            and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
        if not writing:
            return
        what = self.guarded(path)
        if what == "report" and sys._getframe(2).f_code is self.report_writer:
            return  # pytest's junitxml, writing the report at the end of the session
        if what:
            self.send("write", what)

    def on_move(self, args):
        for p in args[:2]:
            what = self.guarded(p)
            if what:
                self.send("write", what)

    def on_remove(self, args):
        what = self.guarded(args[0])
        if what:
            self.send("write", what)

    def on_kill(self, args):
        pid, sig = args[0], args[1]
        if sig in LETHAL and pid in (0, -1, 1, self.pid, -self.pgid, os.getppid()):
            self.send("signal", "own process group")

    def on_killpg(self, args):
        pgid, sig = args[0], args[1]
        if sig in LETHAL and pgid in (0, self.pgid):
            self.send("signal", "own process group")

    def on_exec(self, args):
        # Compiling a test module is honest (astroid parses its own test data). Running the
        # code of one of this check's test modules is the import system's job alone: its code
        # objects become the genuine ones each test is checked against. Anyone else running
        # it is an import hook that rewrites tests.
        code = args[0]
        fn = getattr(code, "co_filename", None)
        if not isinstance(fn, str) or fn.startswith("<"):
            return
        p = os.path.realpath(fn)
        if p not in self.watch:
            return
        if sys._getframe(2).f_code in self.exec_callers and code.co_name == "<module>":
            self.genuine[p] = list(nested_codes(code))
        else:
            self.send("recompile", "test module")

    def on_setattr(self, args):
        obj, name = args[0], args[1]
        if name == "__code__":
            code = getattr(obj, "__code__", None)
            fn = getattr(code, "co_filename", "")
            if isinstance(fn, str) and (os.path.realpath(fn) in self.watch or self.is_test_file(os.path.realpath(fn))
                                        or "_pytest" in fn or "pluggy" in fn):
                self.send("patch", "test or pytest function code")
        elif isinstance(obj, type) and getattr(obj, "__module__", "").startswith(("_pytest", "pytest", "pluggy")):
            self.send("patch", "pytest class")

    def check_machinery(self):
        # Only what existed when the child started counts: pytest's own plugins add modules
        # and attributes as they load (legacypath adds Config.rootdir, for instance).
        now = snapshot_machinery()
        changed = [k for k, v in self.snapshot.items() if now.get(k) != v]
        if any(k[0].startswith(("_pytest", "pytest", "pluggy")) for k in changed):
            self.send("patch", "pytest or pluggy internals")
        if any(k[0].startswith("unittest") for k in changed):
            self.send("patch", "unittest internals")

    def check_builtins(self):
        """Replaced builtins (an all() that is always true for a test's frame) and standard
        functions (a math.isclose that always agrees) are looked for when collection ends, before
        any test ran, and when the session ends, after every fixture is torn down: a test's own
        monkeypatch of one is undone by then."""
        now = snapshot_builtins()
        if any(now.get(k) != v for k, v in self.builtins.items()):
            self.send("patch", "builtins")

    def check_loaders(self, items):
        import importlib.machinery

        from _pytest.assertion.rewrite import AssertionRewritingHook

        seen = set()
        for item in items:
            mod = getattr(item, "module", None)
            if mod is None or id(mod) in seen:
                continue
            seen.add(id(mod))
            loader = getattr(getattr(mod, "__spec__", None), "loader", None)
            if type(loader) not in (importlib.machinery.SourceFileLoader, AssertionRewritingHook) or any(
                    callable(v) for v in getattr(loader, "__dict__", {}).values()):
                self.send("loader", "test module loaded by a foreign importer")

    def genuine_code(self, item):
        """The code object the import system compiled for item's test function; None when
        the item is not a test of this check's modules, False when there is none."""
        mod = getattr(item, "module", None)
        fn = getattr(mod, "__file__", None)
        if not fn or os.path.realpath(fn) not in self.watch or not hasattr(item, "function"):
            return None
        name = getattr(item, "originalname", None) or item.name
        cls = getattr(item, "cls", None)
        qual = cls.__qualname__ + "." + name if cls is not None else name
        codes = [c for c in self.genuine.get(os.path.realpath(fn), ()) if c.co_qualname == qual]
        return codes[-1] if codes else False

    def watch_registrations(self, pm_class):
        """Plugins are pytest's to register (builtins, conftests, -p): a registration from a
        module of the workspace that is not the evaluator's is the code under test."""
        original = pm_class.register
        wire = self

        def register(pm, plugin, name=None):
            # An evaluator's conftest is loaded lazily, sometimes while the code under test is
            # on the stack (a warning it raised asks for the hooks of a directory): it is the
            # evaluator's, whoever caused the load.
            if wire.evaluator_conftest(sys._getframe(1), plugin):
                return original(pm, plugin, name)
            # Anywhere on the stack: pm.import_plugin() from the candidate's code registers
            # from pytest's own frame.
            f = sys._getframe(1)
            while f is not None:
                fn = f.f_code.co_filename
                if not fn.startswith("<"):
                    fn = os.path.realpath(fn)
                    if fn.startswith(wire.workspace) and not wire.evaluator_file(fn):
                        wire.send("plugin", "a pytest plugin of the code under test")
                        break
                f = f.f_back
            return original(pm, plugin, name)

        pm_class.register = register


def nested_codes(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            yield from nested_codes(c)


def snapshot_machinery():
    """The identity of every module-level name and class attribute of pytest and pluggy, and of
    the code of unittest (a test's verdict rests on TestCase's assertions as much as on pytest:
    a candidate that makes every assert method pass needs to know no test). Of unittest, plain
    values are left out: a project's conftest may set TestCase.maxDiff."""
    snap = {}
    for name, mod in list(sys.modules.items()):
        if mod is None:
            continue
        dunders = False  # a class's own hooks: __init_subclass__ could rewrite each TestCase subclass
        if name.startswith(("_pytest", "pytest", "pluggy")):
            keep = lambda v: True  # noqa: E731
        elif (name == "unittest" or name.startswith("unittest.")) and not name.startswith("unittest.mock"):
            keep = lambda v: not isinstance(v, (int, float, str, bytes, type(None)))  # noqa: E731
            dunders = True
        else:
            continue
        for k, v in list(getattr(mod, "__dict__", {}).items()):
            if k.startswith("__"):
                continue
            if keep(v):
                snap[(name, k)] = id(v)
            if isinstance(v, type) and getattr(v, "__module__", None) == name:
                for ck, cv in list(vars(v).items()):
                    if (dunders or not ck.startswith("__")) and ck not in ("__dict__", "__weakref__") and keep(cv):
                        snap[(name, k, ck)] = id(cv)
    for k in HONEST_REBINDS:
        snap.pop(k, None)
    return snap


def snapshot_builtins():
    """The identity of each builtin but those honest code rebinds (gettext's _, a site's exit,
    mocks of open, print and input), and of each function and class of the standard modules
    tests compare with (math.isclose, re.fullmatch, operator.eq, ...)."""
    import builtins
    import importlib

    snap = {("builtins", k): id(v) for k, v in list(vars(builtins).items()) if k not in HONEST_BUILTINS}
    for name in ASSERTING_MODULES:
        mod = importlib.import_module(name)
        for k, v in list(vars(mod).items()):
            if not k.startswith("_") and callable(v):
                snap[(name, k)] = id(v)
    return snap


HONEST_BUILTINS = {"_", "open", "print", "input", "exit", "quit", "help", "copyright", "credits", "license",
                   "breakpoint", "__spec__", "__loader__"}

# Standard modules whose functions decide a comparison in a test.
ASSERTING_MODULES = ("math", "cmath", "operator", "re", "difflib", "fractions", "decimal", "collections",
                     "itertools", "functools", "posixpath", "string", "json")


# What pytest itself rebinds during an honest run (found by running honest suites with the
# check on: the demo and real projects). Everything else must stay as it was.
HONEST_REBINDS = {
    ("_pytest.config", "Config", "_getini_unknown_type"),  # legacypath
    ("_pytest.debugging", "pytestPDB", "_pluginmanager"),  # debugging's configure
    ("_pytest.debugging", "pytestPDB", "_config"),
    ("_pytest.debugging", "pytestPDB", "_saved"),
    ("_pytest.assertion.util", "_reprcompare"),  # assertion's runtest hooks
    ("_pytest.assertion.util", "_assertion_pass"),
    ("_pytest.assertion.util", "_config"),
}


def tender_plugin(wire):
    """Tender's pytest plugin: the checks that run around collection and around each test."""
    import pytest

    class TenderPlugin:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, session, config, items):
            """The tests run in the order pytest gives them when it collects each file whole:
            files by path, then as defined, parameter sets in order. The IDs arrive shuffled, and
            some projects' tests depend on their order (astroid's test_do_not_load_twice fails
            when another test loaded its module first)."""

            def key(item):
                path, line, _ = item.location
                indices = getattr(getattr(item, "callspec", None), "indices", None) or {}
                return (path, -1 if line is None else line, sorted(indices.items()))

            items.sort(key=key)

        def pytest_collection_finish(self, session):
            wire.check_loaders(session.items)
            wire.check_machinery()
            wire.check_builtins()

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session):
            wire.check_machinery()
            wire.check_builtins()  # after the runner tore down the session's fixtures

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_logreport(self, report):
            wire.outcome(report)

        @pytest.hookimpl(hookwrapper=True, tryfirst=True)
        def pytest_runtest_call(self, item):
            """A test of this check must run its own code: the code object the import system
            compiled for it. A test that passes without that code ever starting was replaced."""
            target = wire.genuine_code(item)
            if target is None:
                yield
                return
            ran = [False]
            before = sys.getprofile()

            def watch(frame, event, arg):
                if event == "call" and frame.f_code is target:
                    ran[0] = True
                    wire.busy = True
                    sys.setprofile(before)
                    wire.busy = False

            wire.busy = True  # Tender's own profile function is no tripwire
            sys.setprofile(watch)
            wire.busy = False
            outcome = yield
            if sys.getprofile() is watch:
                wire.busy = True
                sys.setprofile(before)
                wire.busy = False
            if outcome.excinfo is None and not ran[0]:
                wire.send("bypass", "a test passed without its own code running")
            wire.check_machinery()  # a patch made for one test and undone later is seen here

    return TenderPlugin()
