# Comparisons by value, in the child: the assertions of this check's test modules, and unittest's
# equality assertions, compare values of exact builtin types. A value the code under test returns
# whose type is a strict subclass of str, int, list... with an __eq__ of its own (always true) is
# compared as the plain value it holds, so it cannot agree with every expected value.
import os
import sys

if __name__ == "values":  # imported by the host tests; in the bootstrap stdlib.py comes first
    from stdlib import stdlib_names

# The builtin value types, in the order a subclass is matched (bool is an int and exact).
VALUE_TYPES = (str, bytes, int, float, complex, tuple, list, dict, set, frozenset)
SCALARS = {str, bytes, int, float, complex, bool}
# What decides equality and membership: a subclass of a scalar type (str, bytes, int, float,
# complex) that takes any of these from a class of its own (not a builtin, not the standard
# library's or pytest's) is copied into its base type before comparing. Containers are walked
# for such scalars; a container subclass with its own equality is left to it.
COMPARING = ("__eq__", "__ne__", "__hash__", "__contains__")
VALUE_BUDGET = 100000  # values visited in one operand; past it the operand is compared as it is
VALUE_OPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "in": lambda a, b: a in b,
             "not in": lambda a, b: a not in b}


class TooBig(Exception):
    pass


def exact_copy(base, v):
    """The value of v, a strict subclass's instance, in its exact base type: made by the base
    type's own methods, which a subclass cannot override for a call through the base."""
    if base is str:
        return str.__str__(v)
    if base is bytes:
        return bytes.__bytes__(v)
    if base is int:
        return int.__int__(v)
    if base is float:
        return float.__float__(v)
    if base is complex:
        return complex(complex.real.__get__(v), complex.imag.__get__(v))
    if base is tuple:
        return tuple.__getitem__(v, slice(None))
    return base.copy(v)  # list, dict, set, frozenset: a copy in the exact base type


class Values:
    """Canonical values for comparisons. A comparison whose result changes with them is noted
    (never decided: an honest subclass with an equality of its own would be noted too), and the
    canonical result stands, so the assertion fails when a value lied about its equality."""

    def __init__(self, send, pytest_dirs):
        import _thread

        self.send = send
        self.pytest_dirs = pytest_dirs
        self.stdlib = frozenset(stdlib_names())
        self.ident = _thread.get_ident
        self.stash = {}  # (thread, site) -> the left operand and its canonical value
        self.lies = {}  # id(canonical value) -> (the value, what Tender says of it)
        self.originals = {}  # (id(owner), name) -> the standard function as the snapshot saw it
        self.call_hit = None
        # unittest's own equality assertions, from behind Tender's wrappers: no honest class has
        # one (unittest.TestCase has the wrappers from before any code of the workspace ran).
        self.unwrapped = set()
        self.before = set()  # ids of the TestCase classes there were when Tender wrapped them
        self.installed = None  # the module the rewritten comparisons call (values_install)

    def watch_calls(self, snapshot, hit):
        """The snapshot of the standard library (snapshot_builtins) the calls of assertions are
        checked against: a function the assertion calls that is no longer what it was sends hit."""
        import types

        self.originals = types.MappingProxyType({(id(owner), k): v for owner, _, k, v, _ in snapshot})
        self.call_hit = hit

    def name(self, obj, name, src):
        """The function an assertion calls by a bare name (all, any, a name imported from a
        standard module: src is (module, name) then): obj, after the name's owner is checked."""
        import builtins

        owner, key = (builtins, name) if src is None else (sys.modules.get(src[0]), src[1])
        want = self.originals.get((id(owner), key))
        if want is not None and (obj is not want or vars(owner).get(key) is not want):
            self.send(*self.call_hit)
        return obj

    def attr(self, owner, name):
        """owner.name for an assertion's call: the attribute, after it is checked against the
        snapshot when owner is a module or class of it (re.fullmatch, fnmatch.fnmatchcase), or an
        instance of such a class (a mock's assert_called_once_with)."""
        obj = getattr(owner, name)
        if not isinstance(owner, type) and type(owner) is not type(sys):
            owner = type(owner)  # an instance: its method lives in its class's MRO
        if isinstance(owner, type):
            for c in owner.__mro__:
                d = vars(c)
                if name in d:
                    want = self.originals.get((id(c), name))
                    if want is not None and d[name] is not want:
                        self.send(*self.call_hit)
                    break
        elif type(owner) is type(sys):
            want = self.originals.get((id(owner), name))
            if want is not None and vars(owner).get(name) is not want:
                self.send(*self.call_hit)
        return obj

    def canon(self, v):
        if v is None or type(v) in SCALARS:
            return v
        try:
            return self.value(v, [VALUE_BUDGET])
        except Exception:  # too big, too deep, or a value that will not copy: compared as it is
            return v

    def value(self, v, budget):
        budget[0] -= 1
        if budget[0] < 0:
            raise TooBig()
        t = type(v)
        if v is None or t in SCALARS:
            return v
        if t is list or t is tuple:
            out = [self.value(e, budget) for e in v]
            return v if all(a is b for a, b in zip(out, v)) else t(out)
        if t is dict:
            out = [(self.value(k, budget), self.value(x, budget)) for k, x in v.items()]
            return v if all(a is k and b is x for (a, b), (k, x) in zip(out, v.items())) else dict(out)
        if t is set or t is frozenset:
            out = [self.value(e, budget) for e in v]
            return v if all(a is b for a, b in zip(out, v)) else t(out)
        base = next((b for b in VALUE_TYPES if issubclass(t, b)), None)  # type(): __class__ can lie
        if base is None:
            return v
        if base in SCALARS:
            return exact_copy(base, v) if self.overrides(t) else v
        if self.overrides(t):
            # A container type with an equality of its own is left to it: its storage as a
            # builtin need not be what it compares (boltons' OrderedMultiDict keeps lists of
            # values in its dict).
            return v
        # A container type that compares as its base does: only what it holds may need copying.
        exact = exact_copy(base, v)
        inner = self.value(exact, budget)
        return v if inner is exact else inner

    def overrides(self, t):
        for name in COMPARING:
            for c in t.__mro__:
                if name in vars(c):
                    if c not in VALUE_TYPES and c is not object and not self.trusted(c):
                        return True
                    break
        return False

    def trusted(self, c):
        """A class of the standard library or of pytest (collections.Counter, enum.Enum, mock's
        call), found where its module says it is: a class the code under test made is not."""
        mod = sys.modules.get(getattr(c, "__module__", None) or "")
        if mod is None:
            return False
        name = mod.__name__.partition(".")[0]
        fn = getattr(mod, "__file__", None)
        if name not in self.stdlib and not (isinstance(fn, str) and os.path.realpath(fn).startswith(self.pytest_dirs)):
            return False
        obj = mod
        for part in getattr(c, "__qualname__", "").split("."):
            obj = getattr(obj, part, None)
        return obj is c

    def left(self, v, site):
        """An assertion's left operand (site: which comparison of the module)."""
        c = self.canon(v)
        self.stash[(self.ident(), site)] = (v, c)
        return c

    def right(self, v, site, op):
        """The right operand, with the left one kept by left(): the comparison runs on both
        canonical values, and a result they change is noted."""
        c = self.canon(v)
        got = self.stash.pop((self.ident(), site), None)
        if got is not None and (got[0] is not got[1] or v is not c):
            self.compare(op, got[0], v, got[1], c)
        return c

    def compare(self, op, a, b, ca, cb):
        """Notes a comparison whose result the canonical values change."""
        f = VALUE_OPS.get(op)
        if f is None:
            return
        try:
            was, now = f(a, b), f(ca, cb)
        except Exception:
            return
        if type(was) is not bool or type(now) is not bool or was == now:
            return
        liar = a if ca is not a else b
        what = "a value of type %s compared %s by value" % (type(liar).__name__, "unequal" if op in ("==", "in") else
                                                             "equal")
        if len(self.lies) > 100:
            self.lies.clear()
        for v in (ca, cb):
            self.lies[id(v)] = (v, what)
        self.send("note:values", "a value compared differently by its plain value")

    def explain(self, left, right):
        """What Tender says of a failed comparison of canonical values that changed its result."""
        for v in (left, right):
            got = self.lies.get(id(v))
            if got is not None and got[0] is v:
                return got[1]
        return None

    def unittest_method(self, orig, op):
        import functools

        values = self

        @functools.wraps(orig)
        def method(self, first, second, *args, **kwargs):
            cf, cs = values.canon(first), values.canon(second)
            if op and (cf is not first or cs is not second):
                values.compare(op, first, second, cf, cs)
            return orig(self, cf, cs, *args, **kwargs)

        return method

    def wrap_unittest(self):
        """unittest's assertions of equality and membership compare canonical values."""
        import unittest

        tc = unittest.TestCase
        todo = [tc]
        while todo:  # the classes a plugin made before this (a library's TestCase may alias one)
            c = todo.pop()
            self.before.add(id(c))
            todo.extend(type.__subclasses__(c))
        for name, op in UNITTEST_COMPARING:
            orig = vars(tc).get(name)
            if orig is not None:
                self.unwrapped.add(id(orig))
                setattr(tc, name, self.unittest_method(orig, op))

    def planted_intact(self, modules, classes):
        """Whether what Tender planted is as it planted it: the module each rewritten test module
        calls its comparisons through (its global @tender_values, a name no source can spell), and
        unittest's equality assertions as each test class finds them (Tender's wrappers, or an
        evaluator's own method; never unittest's original from behind a wrapper, which a class made
        since can only have from there). No honest code reaches either."""
        for mod in modules:
            got = vars(mod).get(VALUES_NAME, self.installed)
            if got is not self.installed:
                return False
        for cls in classes:
            for name, _ in UNITTEST_COMPARING:
                for c in type.__getattribute__(cls, "__mro__"):
                    d = type.__getattribute__(c, "__dict__")
                    if name in d:
                        if id(d[name]) in self.unwrapped and id(c) not in self.before:
                            return False
                        break
        return True

    def module(self):
        import types

        mod = types.ModuleType(VALUES_MODULE)
        mod.left, mod.right, mod.name, mod.attr = self.left, self.right, self.name, self.attr
        return mod


VALUES_MODULE = "_tender_values"
VALUES_NAME = "@tender_values"  # the name in a test module: no source can spell it

UNITTEST_COMPARING = (
    ("assertEqual", "=="), ("assertNotEqual", "!="), ("assertIn", "in"), ("assertNotIn", "not in"),
    ("assertCountEqual", None), ("assertListEqual", "=="), ("assertTupleEqual", "=="), ("assertDictEqual", "=="),
    ("assertSetEqual", "=="), ("assertSequenceEqual", "=="), ("assertMultiLineEqual", "=="),
    ("assertEquals", "=="), ("assertNotEquals", "!="), ("failUnlessEqual", "=="), ("failIfEqual", "!="),
)


def values_transform(tree, ast):
    """Rewrites each comparison by ==, !=, in or not in inside an assert statement of tree so that
    it compares canonical values: left op right becomes @tender_values.left(left, site) op
    @tender_values.right(right, site, op). Returns the number of comparisons rewritten."""
    ops = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in"}
    site = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        for cmp in ast.walk(node.test):
            if not isinstance(cmp, ast.Compare) or len(cmp.ops) != 1 or type(cmp.ops[0]) not in ops:
                continue
            site += 1
            left, right = cmp.left, cmp.comparators[0]
            cmp.left = ast.copy_location(ast.Call(
                func=ast.copy_location(ast.Attribute(value=ast.copy_location(ast.Name(id=VALUES_NAME, ctx=ast.Load()),
                                                                             left), attr="left", ctx=ast.Load()), left),
                args=[left, ast.copy_location(ast.Constant(site), left)], keywords=[]), left)
            cmp.comparators[0] = ast.copy_location(ast.Call(
                func=ast.copy_location(ast.Attribute(value=ast.copy_location(ast.Name(id=VALUES_NAME, ctx=ast.Load()),
                                                                             right), attr="right", ctx=ast.Load()),
                                       right),
                args=[right, ast.copy_location(ast.Constant(site), right),
                      ast.copy_location(ast.Constant(ops[type(cmp.ops[0])]), right)], keywords=[]), right)
    calls = calls_transform(tree, ast)
    if site or calls:
        pos = 0
        for i, stmt in enumerate(tree.body):
            doc = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
            if not (doc or future):
                break
            pos = i + 1
        at = tree.body[pos] if pos < len(tree.body) else tree
        imp = ast.Import(names=[ast.alias(name=VALUES_MODULE, asname=VALUES_NAME)])
        imp.lineno, imp.col_offset = getattr(at, "lineno", 1), 0
        imp.end_lineno, imp.end_col_offset = imp.lineno, 0
        for a in imp.names:
            ast.copy_location(a, imp)
        tree.body.insert(pos, imp)
    ast.fix_missing_locations(tree)
    return site


def calls_transform(tree, ast):
    """Rewrites the calls inside each assert statement of tree whose function is a builtin or a
    standard function (all(x), re.fullmatch(p, s), fullmatch(p, s) after from re import
    fullmatch), so that the function is checked against the snapshot as the assertion calls it:
    f(...) becomes @tender_values.name(f, "f", src)(...), m.f(...) becomes
    @tender_values.attr(m, "f")(...) when m is a name the module imports. Returns how many."""
    import builtins

    imported, bound, stdlib = {}, set(), frozenset(stdlib_names())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                bound.add(a.asname or a.name.partition(".")[0])
                imported.setdefault(a.asname or a.name.partition(".")[0], None)
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                n = a.asname or a.name
                bound.add(n)
                if node.level == 0 and node.module and node.module.partition(".")[0] in stdlib:
                    imported[n] = (node.module, a.name)
                else:
                    imported.setdefault(n, None)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    from_std = {k: v for k, v in imported.items() if v is not None}
    n = 0

    def wrap(call):
        func = call.func
        at = func
        if isinstance(func, ast.Name):
            if func.id in from_std:
                src = ast.Tuple(elts=[ast.Constant(from_std[func.id][0]), ast.Constant(from_std[func.id][1])],
                                ctx=ast.Load())
            elif func.id not in bound and hasattr(builtins, func.id):
                src = ast.Constant(None)
            else:
                return False
            call.func = ast.Call(func=ast.Attribute(value=ast.Name(id=VALUES_NAME, ctx=ast.Load()), attr="name",
                                                    ctx=ast.Load()),
                                 args=[func, ast.Constant(func.id), src], keywords=[])
        elif isinstance(func, ast.Attribute):
            root = func.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if not isinstance(root, ast.Name) or root.id not in imported:
                return False
            call.func = ast.Call(func=ast.Attribute(value=ast.Name(id=VALUES_NAME, ctx=ast.Load()), attr="attr",
                                                    ctx=ast.Load()),
                                 args=[func.value, ast.Constant(func.attr)], keywords=[])
        else:
            return False
        for node in ast.walk(call.func):
            if not hasattr(node, "lineno"):
                ast.copy_location(node, at)
        return True

    def wrap_method(call):
        func = call.func
        call.func = ast.Call(func=ast.Attribute(value=ast.Name(id=VALUES_NAME, ctx=ast.Load()), attr="attr",
                                                ctx=ast.Load()),
                             args=[func.value, ast.Constant(func.attr)], keywords=[])
        for node in ast.walk(call.func):
            if not hasattr(node, "lineno"):
                ast.copy_location(node, func)
        return True

    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            for call in [c for c in ast.walk(node.test) if isinstance(c, ast.Call)]:
                if wrap(call):
                    n += 1
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Attribute) and node.value.func.attr.startswith("assert")):
            # An assertion method called as a statement (mock.assert_called_once_with(...),
            # self.assertRaises(...)): checked against the snapshot as it is called.
            if wrap_method(node.value):
                n += 1
    return n


def values_install(values, watch):
    """Rewrites the comparisons of the modules of watch as pytest's assertion rewriting compiles
    them, and wraps unittest's assertions. Run before the machinery snapshot: these are Tender's.
    Returns the module the rewritten comparisons call, for the seal."""
    import ast

    import _pytest.assertion.rewrite as rewrite

    mod = sys.modules[VALUES_MODULE] = values.installed = values.module()
    orig = rewrite.rewrite_asserts

    def rewrite_asserts(mod, source, module_path=None, config=None):
        if module_path is not None and os.path.realpath(str(module_path)) in watch:
            values_transform(mod, ast)
        return orig(mod, source, module_path, config)

    rewrite.rewrite_asserts = rewrite_asserts
    values.wrap_unittest()
    return mod
