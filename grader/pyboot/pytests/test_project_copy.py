# drop_project_copy (boot/project_copy.py): the image's editable install of the project is
# taken out of the way, so the workspace, appended last, is what `import calc` finds; an install
# it cannot take out of the way, or project code that already ran, stops the run.
import os
import subprocess
import sys
import textwrap

from conftest import BOOT

# A setuptools-style editable finder, as `pip install -e` writes it into site-packages.
FINDER = '''
import sys
from importlib.machinery import ModuleSpec, PathFinder
MAPPING = {"calc": %r}
PATH_PLACEHOLDER = "__editable__.calc-0.1.finder.__path_hook__"
class _EditableFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in MAPPING:
            return PathFinder.find_spec(fullname, [MAPPING[fullname].rsplit("/", 1)[0]])
        return None
class _EditableNamespaceFinder:
    @classmethod
    def _path_hook(cls, path):
        raise ImportError
def install():
    sys.meta_path.append(_EditableFinder)
    sys.path_hooks.append(_EditableNamespaceFinder._path_hook)
    sys.path.append(PATH_PLACEHOLDER)
'''

# A finder of a kind Tender does not know, mapping calc into the copy.
UNKNOWN = '''
import sys
from importlib.machinery import PathFinder
class Other:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        return PathFinder.find_spec(fullname, [%r]) if fullname == "calc" else None
sys.meta_path.insert(0, Other)
'''


def run(tmp_path, install, before=""):
    testbed, ws, site = tmp_path / "testbed", tmp_path / "ws", tmp_path / "site"
    for d, text in ((testbed, "raise SystemExit('CANARY: the image copy ran')"), (ws, "WHERE = 'workspace'")):
        (d / "calc").mkdir(parents=True)
        (d / "calc" / "__init__.py").write_text(text)
    site.mkdir()
    (site / "__editable___calc_0_1_finder.py").write_text(FINDER % str(testbed / "calc"))
    (site / "other_finder.py").write_text(UNKNOWN % str(testbed))
    with open(os.path.join(BOOT, "project_copy.py")) as f:
        source = f.read()
    script = textwrap.dedent('''
        import sys
        sys.path.append(%r)
        %s
        %s
        exec(compile(%r, "project_copy.py", "exec"))
        try:
            drop_project_copy(%r)
        except RuntimeError as e:
            print("REFUSED", e)
            raise SystemExit(0)
        sys.path.append(%r)
        import calc
        print(calc.WHERE, [p for p in sys.path if "testbed" in p or "__editable__" in p])
    ''') % (str(site), install, before, source, str(testbed), str(ws))
    r = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=60)
    assert "CANARY" not in r.stdout + r.stderr
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_static_path_entry(tmp_path):
    assert run(tmp_path, "sys.path.append(%r)" % str(tmp_path / "testbed")) == "workspace []"


def test_setuptools_finder(tmp_path):
    install = "import __editable___calc_0_1_finder as f; f.install(); sys.path.append(%r)" % str(tmp_path / "testbed")
    assert run(tmp_path, install) == "workspace []"


def test_finder_of_another_kind_is_refused(tmp_path):
    out = run(tmp_path, "import other_finder")
    assert out.startswith("REFUSED project_copy: calc would still be imported from the image's copy")


def test_project_code_that_already_ran_is_refused(tmp_path):
    (tmp_path / "testbed").mkdir()
    (tmp_path / "testbed" / "early.py").write_text("")
    out = run(tmp_path, "sys.path.append(%r)" % str(tmp_path / "testbed"), "import early")
    assert out.startswith("REFUSED project_copy: early was imported from the image's copy of the project")
