# The tripwires: the audit hook and the checks around each test, in the child. What they see goes
# to the parent as one JSON line a hit (see Relay in control.py).
import os
import sys

if __name__ == "tripwires":  # imported by the host tests; in the bootstrap stdlib.py comes first
    from stdlib import stdlib_names


LETHAL = {1, 2, 3, 6, 9, 11, 15, 19}


class Tripwires:
    """The audit hook and the checks around each test. They record what no honest test run
    does to the test machinery. Hits carry only Tender's own words (a kind and a fixed
    'what'), never a path or a value. Trust is decided by code-object identity, captured
    before any candidate code ran, never by a file name (which compile() lets anyone choose)."""

    def __init__(self, fd, go, snapshots=True):
        import doctest
        import importlib._bootstrap as boot
        import threading

        import _pytest.config
        import _pytest.junitxml
        from _pytest.assertion.rewrite import AssertionRewritingHook

        self.tender = os.path.realpath(go["tender"]) + os.sep
        self.home = os.path.join(self.tender, "home") + os.sep
        self.junit = os.path.realpath(go["junit"])
        self.watch = set(os.path.realpath(p) for p in go["watch"])
        self.workspace = os.path.realpath(go["workspace"]) + os.sep
        self.pid = os.getpid()
        self.pgid = os.getpgid(0)
        self.ppid = os.getppid()  # the bootstrap's parent: it never runs the code under test
        self.pytest_dirs = pytest_dirs()
        self.doctest_run = doctest.DocTestRunner.run.__code__  # doctest saves and restores the trace
        self.busy = False
        self.profile = None  # Tender's own profile function, while a test runs
        self.thread_start = threading.Thread._bootstrap_inner.__code__
        # The only frames that may run a test module's code, and write the report.
        self.exec_callers = (boot._call_with_frames_removed.__code__, AssertionRewritingHook.exec_module.__code__)
        self.report_writer = _pytest.junitxml.LogXML.pytest_sessionfinish.__code__
        pm = _pytest.config.PytestPluginManager
        self.conftest_callers = (pm.consider_conftest.__code__, pm._importconftest.__code__)
        self.genuine = {}  # test module path -> code objects compiled by the import system
        self.qualnames = {}  # id of a genuine code object -> its qualified name (co_qualname's, 3.11)
        self.outcomes = {}  # nodeid -> "passed" or "not", as the phases came in
        # The one writer of the stream, for hits and outcomes alike: whatever silences the
        # hits silences the outcomes too, and a report of passed tests without their outcomes
        # is forged (judgeOutcomes).
        self.send, self.seal_with = writer(fd)
        self.snapshot, self.builtins = {}, ()
        if snapshots:
            self.snapshot = snapshot_machinery(self.pytest_dirs)
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
            "ctypes.dlopen": self.on_ctypes("loaded a C library through ctypes"),
            "ctypes.call_function": self.on_ctypes("called a C function through ctypes"),
            "gc.get_objects": self.note("gc", "walked every object of the interpreter"),
            "gc.get_referrers": self.note("gc", "walked the referrers of an object"),
            "sys._current_frames": self.note("frames", "read the frames of every thread"),
            "sys.settrace": self.on_settrace,
            "sys.setprofile": self.on_setprofile,
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

    def note(self, kind, what):
        return lambda args: self.send("note:" + kind, what)

    def on_ctypes(self, what):
        """numpy and other libraries load and call C through ctypes as they import: only the
        workspace's own code doing it is noted."""

        def handler(args):
            f = sys._getframe(2)
            while f is not None and f.f_code.co_filename.endswith(("ctypes/__init__.py", "ctypes/util.py")):
                f = f.f_back
            fn = "" if f is None else f.f_code.co_filename
            if not fn.startswith("<") and os.path.realpath(fn).startswith(self.workspace):
                self.send("note:ctypes", what)

        return handler

    def on_setprofile(self, args):
        import threading

        if sys._getframe(2).f_code is self.thread_start and self.profile is not None and (
                threading._profile_hook is self.profile):
            return  # a thread the test started, installing Tender's profile function
        self.send("note:trace", "installed a profile function")

    def on_settrace(self, args):
        # doctest's runner saves and restores the trace function around every example; pdb,
        # which it sets up, clears it.
        f = sys._getframe(2)
        if f.f_code is self.doctest_run or (f.f_back is not None and f.f_back.f_code is self.doctest_run):
            return
        self.send("note:trace", "installed a trace function")

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
            self.send("outcome", "%s:%s" % (key, state))

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
        """A fatal signal to the bootstrap's parent, to every process, to init or to the process
        group (the parent is in it) is no test's business. A signal to the test process itself
        is honest (a test of a SIGINT handler sends one), and its death shows in the exit status."""
        pid, sig = args[0], args[1]
        if sig not in LETHAL:
            return
        if pid in (-1, 1, 0, -self.pgid, self.ppid, os.getppid()) and pid != self.pid:
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
            # A module imported twice (by pytest, and by a sibling's `from test_x import`) has
            # two sets of genuine code objects.
            for c, qual in qualified(code):
                self.genuine.setdefault(p, []).append(c)
                self.qualnames[id(c)] = qual
        else:
            self.send("recompile", "test module")

    def on_setattr(self, args):
        """New code for a function of pytest or pluggy, or for a test function a module of the
        workspace defines at its top level, is a replaced test. A function defined inside a test
        (<locals> in its name) is the test's own to swap (a hot reloader's test does)."""
        obj, name = args[0], args[1]
        if name == "__code__":
            code = getattr(obj, "__code__", None)
            fn = getattr(code, "co_filename", "")
            if not isinstance(fn, str) or fn.startswith("<"):
                return
            fn = os.path.realpath(fn)
            qual = getattr(code, "co_qualname", None) or self.qualnames.get(id(code), "")
            if self.is_pytest_file(fn):
                self.send("patch", "test or pytest function code")
            elif fn in self.watch or self.is_test_file(fn):
                # mock, asyncio and the project's own code swap code elsewhere: nothing to note.
                if "<locals>" in qual:
                    self.send("note:patch", "replaced the code of a function")
                else:
                    self.send("patch", "test or pytest function code")
        elif isinstance(obj, type) and self.is_pytest_module(sys.modules.get(getattr(obj, "__module__", None))):
            self.send("patch", "pytest class")

    def is_pytest_file(self, p):
        return p.startswith(self.pytest_dirs)

    def is_pytest_module(self, mod):
        fn = getattr(mod, "__file__", None)
        return isinstance(fn, str) and self.is_pytest_file(os.path.realpath(fn))

    def check_machinery(self):
        # Only what existed when the child started counts: pytest's own plugins add modules
        # and attributes as they load (legacypath adds Config.rootdir, for instance).
        now = snapshot_machinery(self.pytest_dirs)
        changed = [k for k, v in self.snapshot.items() if now.get(k) != v]
        if any(not k[0].startswith("unittest") for k in changed):
            self.send("patch", "pytest or pluggy internals")
        if any(k[0].startswith("unittest") for k in changed):
            self.send("patch", "unittest internals")

    def check_builtins(self):
        """Replaced builtins (an all() that is always true for a test's frame), standard functions
        (a math.isclose that always agrees, an fnmatch.fnmatchcase that agrees on formatted
        numbers) and methods of the standard library's classes (mock's assert_called_once_with
        made a no-op) are looked for when collection ends, before any test ran, after each
        test's teardown and when the session ends: a test's own monkeypatch is undone by then.
        What the former watch list held (builtins and the modules tests compare with) has a hit of
        its own; both decide (the honest corpus trips neither: see the tripwire table)."""
        old = new = False
        for owner, d, k, v, listed in self.builtins:
            if d.get(k) is not v:
                if listed:
                    old = True
                else:
                    new = True
        if old:
            self.send("patch", "builtins")
        if new:
            self.send(*STDLIB_HIT)

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
        """The code objects the import system compiled for item's test function; None when
        the item is not a test of this check's modules, () when there is none. An inherited
        test method's code is named after the class that defines it (a base or a mixin), a
        factory's after the factory (<locals>): the function's own code counts when the import
        system compiled it from that module."""
        mod = getattr(item, "module", None)
        fn = getattr(mod, "__file__", None)
        if not fn or os.path.realpath(fn) not in self.watch or not hasattr(item, "function"):
            return None
        genuine = self.genuine.get(os.path.realpath(fn), ())
        name = getattr(item, "originalname", None) or item.name
        cls = getattr(item, "cls", None)
        quals = {c.__qualname__ + "." + name for c in getattr(cls, "__mro__", ())} if cls is not None else {name}
        codes = {id(c) for c in genuine if self.qualnames.get(id(c)) in quals}  # by identity: equal code is not ours
        ids = {id(c) for c in genuine}
        f = item.function
        for _ in range(10):  # functools.wraps leaves the test under __wrapped__
            code = getattr(f, "__code__", None)
            if code is not None and id(code) in ids:
                codes.add(id(code))
            f = getattr(f, "__wrapped__", None)
            if f is None:
                break
        return codes

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


def qualified(code, prefix=""):
    """Each code object nested in a module's code, with its qualified name as Python 3.11's
    co_qualname gives it (earlier Pythons have none): a function's inner names follow
    "<locals>", a class body's do not."""
    for c in code.co_consts:
        if not hasattr(c, "co_code"):
            continue
        qual = prefix + c.co_name
        yield c, qual
        if c.co_flags & 0x2:  # CO_NEWLOCALS: a function (a class body has none)
            yield from qualified(c, qual + ".<locals>.")
        else:
            yield from qualified(c, qual + ".")


def writer(fd):
    """The child's one writer of its stream to the parent: a hit once a kind and what, every
    outcome. It holds the descriptor and os.write in its closure (the code under test may
    replace os.write later), in no attribute and no frame the code under test can walk to."""
    write = os.write
    seen = set()
    seals = []

    def send(kind, what):
        if kind != "outcome":
            if (kind, what) in seen:
                return
            seen.add((kind, what))
        elif not all(intact() for intact in seals):
            return  # the tripwires were tampered with: no outcome, and the report is forged
        try:
            write(fd, ('{"kind":"%s","what":"%s"}\n' % (kind, what)).encode())
        except OSError:
            pass

    return send, seals.append


def seal(wire, namespace, more=()):
    """A check of the tripwires' own state, for the writer to run before each outcome: every
    attribute of wire and of its class, of each object of more (the comparisons by value: their
    Values and the module the rewritten assertions call), and every function and class of the
    bootstrap's namespace, as they were when it was sealed (containers by value), and no handler
    busy. A candidate that silenced one tripwire, or the comparisons by value, by replacing a
    part of them silences every outcome."""
    moving = ("busy", "profile", "outcomes", "genuine", "qualnames", "stash", "lies")
    names = [k for k, v in list(namespace.items()) if callable(v)]  # honest code may add names, not replace

    def attrs(obj):
        return {k: v for k, v in vars(obj).items() if k not in moving}

    def state():
        own = attrs(wire)
        copies = {k: type(v)(v) for k, v in own.items() if type(v) in (dict, set, list)}
        return ({k: id(v) for k, v in own.items()}, copies, {k: id(v) for k, v in vars(type(wire)).items()},
                [id(namespace.get(k)) for k in names],
                [({k: id(v) for k, v in attrs(o).items()}, {k: id(v) for k, v in vars(type(o)).items()})
                 for o in more])

    first = state()

    def intact():
        return wire.busy is False and state() == first

    return intact


def pytest_dirs():
    """The directories pytest, _pytest and pluggy are installed in: a module is pytest's own by
    its file, never by its name (a plugin such as pytest_mock is the project's choice)."""
    import _pytest
    import pluggy
    import pytest

    return tuple(os.path.dirname(os.path.realpath(m.__file__)) + os.sep for m in (_pytest, pytest, pluggy))


def snapshot_machinery(dirs, own_cache={}):
    """The identity of every module-level name and class attribute of pytest and pluggy (the
    modules whose files are under dirs), and of the code of unittest (a test's verdict rests on
    TestCase's assertions as much as on pytest: a candidate that makes every assert method pass
    needs to know no test). Of unittest, plain values are left out: a project's conftest may set
    TestCase.maxDiff."""
    snap = {}
    for name, mod in list(sys.modules.items()):
        if mod is None:
            continue
        dunders = False  # a class's own hooks: __init_subclass__ could rewrite each TestCase subclass
        fn = getattr(mod, "__file__", None)
        own = isinstance(fn, str) and own_cache.get(fn)
        if isinstance(fn, str) and own is None:
            own = own_cache[fn] = real_file(fn, own_cache).startswith(dirs)
        if own:
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


def real_file(fn, cache):
    """os.path.realpath(fn), with the real path of each directory found once (cache, keyed by
    ("dir", path)): a few hundred modules live in a few dozen directories, and realpath asks
    lstat of every component of every path. A file that is itself a symlink is resolved whole."""
    d, base = os.path.split(fn)
    real = cache.get(("dir", d))
    if real is None:
        real = cache[("dir", d)] = os.path.realpath(d)
    path = os.path.join(real, base)
    return os.path.realpath(path) if os.path.islink(path) else path


def snapshot_builtins():
    """The identity of each builtin but those honest code rebinds (gettext's _, a site's exit,
    mocks of open, print and input), and of each public callable of every loaded module of the
    standard library and of unittest.mock, with the public callable attributes of their public
    classes, but those an honest run rebinds (STDLIB_REBINDS). A tuple of (owner, its namespace,
    name, value, listed): listed is what the former watch list held (builtins and
    ASSERTING_MODULES). Taken before any candidate code runs; checked by identity."""
    import builtins
    import importlib

    for name in SNAPSHOT_MODULES:
        importlib.import_module(name)
    snap = [(builtins, vars(builtins), k, v, True) for k, v in list(vars(builtins).items()) if k not in HONEST_BUILTINS]
    std = stdlib_names()
    module = type(sys)
    for name, mod in sorted(list(sys.modules.items()), key=lambda kv: kv[0]):
        if mod is None or name == "builtins" or name.partition(".")[0] not in std or type(mod) is not module:
            continue
        if getattr(mod, "__name__", None) != name:
            continue  # an alias (os.path is posixpath): the module is snapshotted under its own name
        d = vars(mod)
        listed = name in ASSERTING_MODULES
        for k, v in list(d.items()):
            if k.startswith("_") or (name, k) in STDLIB_REBINDS or isinstance(v, module):
                continue
            if callable(v):
                snap.append((mod, d, k, v, listed))
            if isinstance(v, type) and getattr(v, "__module__", None) == name and k == v.__name__:
                cd = vars(v)
                for ck, cv in list(cd.items()):
                    if ck.startswith("_") or (name, k, ck) in STDLIB_REBINDS:
                        continue
                    if callable(cv) or isinstance(cv, (classmethod, staticmethod, property)):
                        snap.append((v, cd, ck, cv, False))
    return tuple(snap)


HONEST_BUILTINS = {"_", "open", "print", "input", "exit", "quit", "help", "copyright", "credits", "license",
                   "breakpoint", "__spec__", "__loader__"}

# Standard modules whose functions decide a comparison in a test: the former watch list, whose
# replacement decides (a hit of its own).
ASSERTING_MODULES = ("math", "cmath", "operator", "re", "difflib", "fractions", "decimal", "collections",
                     "itertools", "functools", "posixpath", "string", "json")

# The standard modules snapshot_builtins imports to take their callables in; the child imports
# them earlier still, while it waits for its configuration (preload_stdlib).
SNAPSHOT_MODULES = ASSERTING_MODULES + ("unittest.mock", "fnmatch")

# What an honest run rebinds in the standard library: the interpreter's hooks, which pytest's
# capture, faulthandler, unraisable and threadexception plugins set and restore, and warnings'
# showwarning, which catch_warnings swaps.
STDLIB_REBINDS = {
    ("sys", "excepthook"), ("sys", "displayhook"), ("sys", "unraisablehook"), ("sys", "breakpointhook"),
    ("sys", "stdout"), ("sys", "stderr"), ("sys", "stdin"),
    ("warnings", "showwarning"), ("warnings", "formatwarning"), ("threading", "excepthook"),
    ("pdb", "set_trace"),  # pytest's debugging plugin, as it configures
}

STDLIB_HIT = ("patch", "standard library")
STDLIB_CALL_HIT = ("patch", "standard function in an assertion")
PLANTED_HIT = ("patch", "what Tender planted")


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
    ("_pytest.doctest", "RUNNER_CLASS"),  # doctest's collector, the first time it runs
    ("_pytest.doctest", "CHECKER_CLASS"),
}


def tender_plugin(wire, values=None, running=None):
    """Tender's pytest plugin: the checks that run around collection and around each test.
    running tells the held comparisons (asker.py) which test is running."""
    import pytest

    if values is not None and wire is not None:
        values.watch_calls(wire.builtins, STDLIB_CALL_HIT)

    planted = []  # [the check's test modules, their test classes], once collected

    def check_planted():
        if values is not None and planted and not values.planted_intact(*planted):
            wire.send(*PLANTED_HIT)

    class TenderPlugin:
        @pytest.hookimpl(tryfirst=True)
        def pytest_assertrepr_compare(self, config, op, left, right):
            """A comparison that failed because a value lied about its equality says so."""
            what = values.explain(left, right) if values is not None else None
            if what is None:
                return None
            from _pytest.assertion.util import assertrepr_compare

            lines = assertrepr_compare(config, op, left, right) or ["%r %s %r" % (left, op, right)]
            return lines[:1] + [what] + lines[1:]

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
            mods, classes = {}, {}
            for item in session.items:
                mod = getattr(item, "module", None)
                fn = getattr(mod, "__file__", None)
                if isinstance(fn, str) and os.path.realpath(fn) in wire.watch:
                    mods[id(mod)] = mod
                    cls = getattr(item, "cls", None)
                    if isinstance(cls, type):
                        classes[id(cls)] = cls
            planted[:] = [list(mods.values()), list(classes.values())]
            check_planted()

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session):
            wire.check_machinery()
            wire.check_builtins()  # after the runner tore down the session's fixtures
            check_planted()

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_logreport(self, report):
            wire.outcome(report)
            if report.when == "teardown":
                # A patch made for one test and undone later is seen here; one a fixture made
                # and undid (monkeypatch of unittest.main) is not, since its teardown is over.
                wire.check_machinery()
                wire.check_builtins()
                check_planted()

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_call(self, item):
            """A test of this check should run its own code: a code object the import system
            compiled for it. A test that passes without that code ever starting (in any thread)
            may have been replaced; it is only noted, since the negated copies of each required
            test catch a replaced test by what it asserts. No hook wrapper: its suspended frame
            would hold the tripwires where the test can walk to them (pluggy's call frame)."""
            import threading

            if running is not None:
                running(test_key(item.nodeid))
            targets = wire.genuine_code(item)
            if targets is None:
                return
            ran = [False]
            before = sys.getprofile()
            main = threading.current_thread()

            def watch(frame, event, arg):
                if event == "call" and id(frame.f_code) in targets:
                    ran[0] = True
                    wire.busy = True
                    sys.setprofile(None if threading.current_thread() is not main else before)
                    wire.busy = False

            def done(passed):
                wire.busy = True
                threading.setprofile(None)
                wire.profile = None
                if sys.getprofile() is watch:
                    sys.setprofile(before)
                wire.busy = False
                if passed and not ran[0] and targets:
                    wire.send("note:bypass", "a test passed without its own code running")

            watching[item.nodeid] = done
            wire.busy = True  # Tender's own profile function is no tripwire
            sys.setprofile(watch)
            threading.setprofile(watch)  # a thread the test starts installs it as it starts
            wire.profile = watch
            wire.busy = False

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_makereport(self, item, call):
            if call.when == "call" and running is not None:
                running("")
            if call.when == "call":
                done = watching.pop(item.nodeid, None)
                if done is not None:
                    done(call.excinfo is None)

    watching = {}  # nodeid -> what ends the watch of a test's call
    return TenderPlugin()
