# The image's own copy of the project: prebuilt instance images (SWE-bench's) install the
# repository at /testbed with an editable install, which puts /testbed on sys.path (a .pth
# line, or an egg-link's easy-install.pth) or a finder on sys.meta_path (setuptools'
# __editable___*_finder, the editables package's redirecting finder). The workspace is
# appended to sys.path, last, so that it can never shadow the standard library or pytest; left
# alone, the image's copy would be found first and the patched workspace never imported.
import os
import sys


def drop_project_copy(root):
    """Take the image's copy of the project (root: the suite's project_copy, never anything of
    the candidate's) out of the import system: its sys.path entries, the editable-install
    finders and path hooks that map into it, and their sys.path placeholders. Then refuse to go
    on (RuntimeError) when anything of it was already imported or could still be: no top-level
    name of root, or of root/src, may resolve into root any more. Nothing else moves, so the
    workspace is still appended last, after the standard library and pytest."""
    if not root:
        return
    import importlib.util
    import types

    root = os.path.realpath(root)

    def inside(p):
        if not isinstance(p, str) or not os.path.isabs(p):
            return False  # an editable finder's placeholder entry, or nothing
        p = os.path.realpath(p)
        return p == root or p.startswith(root + os.sep)

    def maps_into_root(obj):
        # setuptools' finder classes (their module's MAPPING, name -> path) and path hooks, and
        # the editables package's RedirectingFinder (_redirections): all of whose paths are root's.
        mod = obj if isinstance(obj, types.ModuleType) else sys.modules.get(getattr(obj, "__module__", None) or "")
        mapping = getattr(obj, "_redirections", None)
        if not isinstance(mapping, dict) and mod is not None and mod.__name__.startswith("__editable__"):
            mapping = getattr(mod, "MAPPING", None)
        return isinstance(mapping, dict) and bool(mapping) and all(inside(str(v)) for v in mapping.values())

    placeholders = {getattr(m, "PATH_PLACEHOLDER", None) for m in list(sys.modules.values()) if maps_into_root(m)}
    sys.meta_path[:] = [f for f in sys.meta_path if not maps_into_root(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not maps_into_root(getattr(h, "__self__", h))]
    sys.path[:] = [p for p in sys.path if not inside(p) and p not in placeholders]
    for key in list(sys.path_importer_cache):
        if inside(key) or key in placeholders:
            del sys.path_importer_cache[key]
    importlib.invalidate_caches()
    for name, mod in list(sys.modules.items()):
        if inside(getattr(mod, "__file__", None)):
            raise RuntimeError("project_copy: %s was imported from the image's copy of the project, %s, before "
                               "the tests" % (name, root))
    for top in (root, os.path.join(root, "src")):
        try:
            entries = sorted(os.listdir(top))
        except OSError:
            continue
        for entry in entries:
            name = entry[:-3] if entry.endswith(".py") else entry
            if not name.isidentifier() or name in sys.modules:
                continue
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                continue
            where = [spec.origin] + list(spec.submodule_search_locations or ()) if spec else []
            if any(inside(p) for p in where):
                raise RuntimeError("project_copy: %s would still be imported from the image's copy of the project, "
                                   "%s: its install is of a kind Tender cannot take out of the way" % (name, root))
