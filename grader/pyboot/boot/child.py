# The child: it imports pytest before the workspace is on sys.path, closes the doors around it,
# and runs pytest with Tender's plugin (tripwires.py).
import os
import sys


def child(go_r, hit_w):
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    os.dup2(2, 1)  # the test run's output goes to stderr; stdout is the parent's alone
    import json

    preload([])
    go = json.loads(read_all(go_r).decode("utf-8"))
    os.close(go_r)
    preload(go["plugins"])
    mark_absent()
    scrub_env()
    for p in go["paths"] + [go["workspace"]]:
        if p not in sys.path:
            sys.path.append(p)
    wire = Tripwires(hit_w, go)
    from _pytest.config import PytestPluginManager

    wire.watch_registrations(PytestPluginManager)
    import unittest  # noqa: F401  in the snapshot before any candidate code can patch it

    wire.snapshot = snapshot_machinery()  # after Tender's own wrapper is in place
    sys.addaudithook(wire.hook)
    import pytest

    code = pytest.main(go["args"], plugins=[tender_plugin(wire)])
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    os._exit(int(code))


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


def mark_absent():
    """Every standard-library (and pytest-optional) name that the image lacks is marked
    missing, so no file of the workspace can ever be imported under that name."""
    import importlib.util

    names = set(sys.stdlib_module_names) | set(PYTEST_OPTIONAL)
    for name in sorted(names):
        if name in sys.modules:
            continue
        try:
            found = importlib.util.find_spec(name) is not None
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
