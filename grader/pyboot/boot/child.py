# The child: it imports pytest before the workspace is on sys.path, closes the doors around it,
# and runs pytest with Tender's plugin (tripwires.py).
import os
import sys

if __name__ == "child":  # imported by the host tests; in the bootstrap stdlib.py comes first
    from stdlib import stdlib_names


def child(go_r, hit_w, ask_w, ans_r):
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    os.dup2(2, 1)  # the test run's output goes to stderr; stdout is the parent's alone
    import json

    preload([])
    preload_stdlib()
    go = json.loads(read_all(go_r).decode("utf-8"))
    os.close(go_r)
    drop_project_copy(go["project_copy"])  # project_copy.py: before any plugin, before the workspace
    preload(go["plugins"])
    mark_absent()
    scrub_env()
    export_python_path(go["python_path"])
    for p in go["paths"] + [go["workspace"]]:
        if p not in sys.path:
            sys.path.append(p)
    import unittest  # noqa: F401  in the snapshot before any candidate code can patch it
    import pytest

    # Tender's plugin is the only thing this frame holds of the tripwires: the code under test
    # can walk the stack up to here, and finds neither the Tripwires object nor its writer.
    code = pytest.main(go["args"], plugins=[arm(hit_w, go, ask_w, ans_r)])
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    os._exit(int(code))


def arm(hit_w, go, ask_w, ans_r):
    """The tripwires, armed: the held comparisons' module, the registration watch, comparisons
    by value, the machinery snapshot after Tender's own wrappers are in place, the audit hook,
    and the seal the writer checks before each outcome. Returns Tender's pytest plugin."""
    from _pytest.config import PytestPluginManager

    register_test_modules()
    wire = Tripwires(hit_w, go, snapshots=False)  # taken below, once Tender's wrappers are in place
    wire.watch_registrations(PytestPluginManager)
    values = Values(wire.send, wire.pytest_dirs)
    held, running = held_install(ask_w, ans_r, comparison_trusted(values, wire))
    sys.modules[HELD_MODULE] = held
    values_module = values_install(values, wire.watch)
    wire.snapshot = snapshot_machinery(wire.pytest_dirs)
    wire.builtins = snapshot_builtins()
    plugin = tender_plugin(wire, values, running)
    wire.seal_with(seal(wire, globals(), [values, values_module]))
    sys.addaudithook(wire.hook)
    return plugin


def register_test_modules():
    """pytest before 6.2 imports a test module in importlib mode without putting it in
    sys.modules, so an honest test's sys.modules[__name__] (doctest.testmod, dataclasses, pickle)
    fails under Tender and nowhere else: Tender chose the mode. Registers each module as pytest
    6.2 and later do, before its body runs."""
    import importlib
    import importlib.util
    import types

    import _pytest.pathlib as pathlib
    import pytest

    try:
        version = tuple(int(p) for p in pytest.__version__.split(".")[:2])
    except ValueError:
        return
    if version >= (6, 2) or not hasattr(pathlib, "import_path"):
        return

    def module_from_spec(spec):
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        return mod

    util = types.SimpleNamespace(spec_from_file_location=importlib.util.spec_from_file_location,
                                 module_from_spec=module_from_spec)
    pathlib.importlib = types.SimpleNamespace(util=util, import_module=importlib.import_module)


PYTEST_OPTIONAL = ("pygments", "colorama", "argcomplete", "tomli", "exceptiongroup", "importlib_metadata",
                   "py", "iniconfig", "pluggy", "packaging", "attr", "org", "java", "nt", "msvcrt", "_winapi",
                   "winreg", "_overlapped", "_scproxy", "posix", "readline")


def preload(plugins):
    import importlib

    import pytest  # noqa: F401
    import _pytest.config as cfg

    for name in cfg.default_plugins:
        importlib.import_module("_pytest." + name)
    for name in plugins:
        importlib.import_module(name)


def preload_stdlib():
    """The standard modules the tripwires import to snapshot them (SNAPSHOT_MODULES; unittest.mock
    brings asyncio and ssl), imported while the parent still waits for the configuration: the
    backend may start this process before the workspace is written (sandbox.Spec.StdinFirst),
    and nothing here reads it."""
    import importlib

    for name in SNAPSHOT_MODULES + ("doctest",):  # doctest: Tripwires' own
        importlib.import_module(name)


def mark_absent():
    """Every standard-library (and pytest-optional) name that the image lacks is marked
    missing, so no file of the workspace can ever be imported under that name. sys.path's own
    finder asks first: a name it finds is there, and the meta path's finders are asked only
    for the others. (setuptools' distutils hook imports setuptools when asked for distutils,
    about 110 ms and a changed environment, for a name the standard library has up to 3.11.)"""
    import importlib.machinery
    import importlib.util

    names = set(stdlib_names()) | set(PYTEST_OPTIONAL)
    for name in sorted(names):
        if name in sys.modules:
            continue
        try:
            found = importlib.machinery.PathFinder.find_spec(name) is not None or \
                importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            sys.modules[name] = None


def scrub_env():
    keep = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTHONDONTWRITEBYTECODE"}
    for k in list(os.environ):
        if (k.startswith("PYTEST_") or k.startswith("PYTHON")) and k not in keep:
            del os.environ[k]
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"


def comparison_trusted(values, wire):
    """Whose comparison decides for a type: the standard library's or pytest's (mock.ANY,
    pytest.approx, Counter), or a class an evaluator's file defines (a test's own matcher), is
    trusted; one the candidate's code defines is not. Said of a value a held comparison cannot
    compare itself (held.py, asker.py)."""
    import builtins

    def trusted(t):
        for name in ("__eq__", "__ne__"):
            for c in type.__getattribute__(t, "__mro__"):
                if name in type.__getattribute__(c, "__dict__"):
                    if getattr(builtins, getattr(c, "__name__", ""), None) is c or values.trusted(c):
                        break
                    mod = sys.modules.get(getattr(c, "__module__", None) or "")
                    fn = getattr(mod, "__file__", None)
                    if not (isinstance(fn, str) and wire.evaluator_file(os.path.realpath(fn))):
                        return False
                    break
        return True

    return trusted


def export_python_path(paths):
    """The suite's python_path (absolute, from Tender's configuration) as PYTHONPATH, set after
    scrub_env: the test process runs under -I and ignores it, but a subprocess a test starts
    (`python -m pkg` of a src/ layout) finds the package there. Nothing of the environment the
    check was given reaches it: a suite may not set PYTHON* variables, and scrub_env removed any."""
    if paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(paths)
