# The sentinels and the held sites, in the planter: Tender's own step, which runs as root in the
# verifier once the evaluator's files are written and before the tests start, and writes the
# test modules the tests then import (the verifier user can read them, not write them). Apart
# from make_sentinels, which reads and rewrites the test modules, it is pure: the source of a
# test in, the text of its copies and its held assertions out. Tested on the host (pytests/).
import os

if __name__ == "sentinels":  # imported by the host tests; in the planter's source held.py comes first
    from held import HELD_CALL, HELD_MODULE, Text, checks_all_held, encode, held_call, held_sites


def make_sentinels(cfg, rng=None):
    """Plants the sentinels and the held sites of the required tests into their modules, and
    returns the plan. rng is a SystemRandom; a test gives a seeded one.

    Held sites (held.py): every top-level assertion of a required test before any statement that
    can return, and of each copy of one, asks the bootstrap's parent whether it holds, with a
    token of its own; a literal it compares with is taken out of the module and held by the
    parent. A test whose every assertion is held needs no copy: the parent's record of each
    comparison is evidence the test process cannot reach.

    Every other required test gets copies: a verbatim twin (must pass when the test passes), a
    rephrased copy whose checks that are no held site are written another way (must pass too;
    when it has such checks), a negation with one top-level assertion or raises block turned
    around (must fail when it passes), and an unguarded copy when it has a guard that returns
    before any assertion (passes when the test passed without taking the guard). A test that
    reads its own name or frame, or whose fixtures read its node, gets no copy that must pass.
    Copies are written after all of the module's original code, so no original line moves and
    they run after the originals; a copy of a method is defined in a class of the same name at
    the module's end and attached to the original class. A test inherited from a class of its
    module (a base or a mixin) is held where the class that defines it is.
    """
    import ast
    import random

    if rng is None:
        rng = random.SystemRandom()
    ws = cfg["workspace"]
    want_twins, want_negated = cfg.get("twins", 1), cfg.get("negated", 1)
    files, order = {}, []  # rel path -> Module
    for nodeid in cfg["ids"]:
        rel = nodeid.split("::", 1)[0]
        if rel.endswith(".py") and rel not in files:
            files[rel] = load_module(ws, rel, ast)
            order.append(rel)
    conftests = {}
    required, lines = [], {}  # (Module, Test, param suffix, nodeid); nodeid -> line
    for nodeid in cfg["ids"]:
        parts = nodeid.split("::")
        mod = files.get(parts[0])
        if mod is None or mod.tree is None or len(parts) not in (2, 3):
            continue
        name, suffix = split_params(parts[-1])
        t = mod.find_test(parts[1] if len(parts) == 3 else None, name)
        if t is None:
            continue
        lines[nodeid] = t.first
        required.append((mod, t, suffix, nodeid))
    rng.shuffle(required)
    sentinels, done, copies = [], set(), []  # copies: (Module, copy name, sentinel id)
    for mod, t, suffix, nodeid in required:
        if (mod.rel, t.key) in done:
            continue
        done.add((mod.rel, t.key))
        if not collected(t) or not copyable(t, ast) or t.fully_held(ast):
            continue
        own = twinnable(t) and not named_by_fixtures(t, mod, ws, conftests, ast)
        if not own:
            continue
        plant(sentinels, copies, rng, t, unguarded(t, ast), "unguarded", suffix, nodeid)
        for _ in range(want_twins):
            plant(sentinels, copies, rng, t, None, "twin", suffix, nodeid)
        if want_twins:
            plant(sentinels, copies, rng, t, t.rephrased(rng, ast), "rephrased", suffix, nodeid)
        if want_negated:
            plant(sentinels, copies, rng, t, t.negation(rng, ast), "negated", suffix, nodeid)

    shifts, held, private = {}, {}, {}
    for rel in order:
        mod = files[rel]
        rng.shuffle(mod.appended)  # a copy's place says nothing of its kind
        data, added = mod.with_copies()
        mine = [(nodeid, t.cls, t.name) for m, t, _, nodeid in required if m is mod]
        mine += [(sid, cls, name) for m, cls, name, sid in copies if m is mod]
        data, binding = hold_module(rel, data, mine, mod, rng, ast, held, private)
        added += binding
        if added or binding or data != mod.data:
            with open(os.path.join(ws, rel), "wb") as f:
                f.write(data)
        if added:
            shifts[rel] = [[len(mod.lines), added]]
    paths = []
    for rel in order:
        base = basedir(ws, os.path.dirname(rel))
        if base != ws and base not in paths:
            paths.append(base)
    rng.shuffle(sentinels)
    return {
        "public": {"v": 2, "sentinels": sentinels, "shifts": shifts, "lines": lines, "held": held},
        "private": {"held": private},
        "ids": [s["id"] for s in sentinels],
        "paths": paths,
        "files": [os.path.join(ws, rel) for rel in order],
    }


def hold_module(rel, data, tests, mod, rng, ast, held, private):
    """Rewrites the held sites of tests ((node ID, class, function name): the required tests and
    the copies) in a module's text, and binds the held call's name at its end. Fills held (node
    ID -> {"tokens", "full"}) and private (token -> [operator, encoded literal]). Returns the
    text and the number of lines the binding added."""
    try:
        tree = ast.parse(data, filename=rel)
    except (SyntaxError, ValueError):
        return data, 0
    fresh = parse_module(rel, data, ast)
    fresh.names |= mod.names
    text = Text(data)
    name = None
    by_site = {}  # the function node's id -> (tokens, full): a site is rewritten once
    for nodeid, cls, fname in tests:
        t = fresh.find_test(cls, fname)
        if t is None:
            continue
        if id(t.node) not in by_site:
            stmts = t.asserting(ast)
            sites = held_sites(stmts, ast, t.node)
            tokens = []
            if sites and name is None:
                name = fresh.helper_name(HELD_CALL)
            for site in sites:
                token = "".join(rng.choice("0123456789abcdef") for _ in range(16))
                try:
                    held_call(text, site, token, name)
                except ValueError:
                    continue
                tokens.append(token)
                private[token] = [site.op, encode(site.literal)]
            full = bool(tokens) and len(tokens) == len(sites) and checks_all_held(t.node, sites, ast, checks)
            by_site[id(t.node)] = (tokens, full)
        tokens, full = by_site[id(t.node)]
        if tokens:
            held[nodeid] = {"tokens": tokens, "full": full}
    if name is None:
        return data, 0
    out = text.result()
    if not out.endswith(b"\n"):
        out += b"\n"
    # The held module is the test process's: a process that imports the module without it (a
    # multiprocessing spawn worker) gets None, and only a held assertion run there fails.
    return out + name.encode() + b" = getattr(__import__('sys').modules.get('" + HELD_MODULE.encode() + \
        b"'), 'ask', None)\n", 1


def plant(sentinels, copies, rng, t, text, kind, suffix, of):
    """Appends one sentinel (a copy of t's source, or text) to t's module under a fresh name and
    records it. A test whose source the copy cannot be made from gets none."""
    if text is None and kind != "twin":
        return False
    mod = t.module
    try:
        new = mod.fresh_name(t, rng)
        copy = t.renamed(new, text)
    except RuntimeError:
        return False
    mod.append(t, copy)
    # The copy is attached to the class that defines the test; a subclass that inherits the test
    # inherits the copy too, and runs it as its own: the copy's ID is the required test's class's.
    parts = of.split("::")
    cls = parts[1] if len(parts) == 3 else t.cls
    sid = "::".join([mod.rel] + ([cls] if cls else []) + [new]) + suffix
    sentinels.append({"kind": kind, "id": sid, "of": of})
    copies.append((mod, cls, new, sid))
    return True


# What a call that checks something is named after: an assertion helper, pytest.raises, a mock's
# assert_called_with. A guard after such a call is one the test reaches having checked something.
CHECK_WORDS = ("assert", "check", "expect", "verify", "raises", "warns", "fail")


def unguarded(t, ast):
    """The function's source with its guards turned off, or None when it has none: a guard is a
    top-level `if` without else whose body ends in a return, before the test's first statement that
    checks anything (an assert, a call named after a check). Each guard's body becomes `pass` lines,
    as many as it had, so no line moves; its condition still runs (a walrus, a call it makes).
    A test that passed without taking its guards passes so; one that passed by taking one checked
    nothing. None too when a statement that can return comes first and is no such guard (a try
    whose handler returns), when nothing checks after the guards, or when the copy does not
    compile."""
    guards = []
    for stmt in t.node.body:
        if isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.body[-1], ast.Return):
            if any(checks(s, ast) for s in stmt.body):
                break
            guards.append(stmt)  # its condition is no check: `if not shutil.which("git")`
            continue
        if checks(stmt, ast):
            break
        if returns(stmt, ast):
            return None
    else:
        return None
    if not guards:
        return None
    lines = list(t.module.lines[t.first - 1 : t.last])
    for g in guards:
        first, last = g.body[0], g.body[-1]
        if first.lineno == g.lineno:  # `if cond: return` on one line
            if last.end_lineno != g.lineno:
                return None
            i = g.lineno - t.first
            lines[i] = lines[i][: first.col_offset] + b"pass" + lines[i][last.end_col_offset :]
            continue
        indent = lines[first.lineno - t.first][: first.col_offset]
        for ln in range(first.lineno, last.end_lineno + 1):
            i = ln - t.first
            line = lines[i]
            lines[i] = indent + b"pass" + line[len(line.rstrip(b"\r\n")) :]
    text = b"".join(lines)
    try:
        compile(b"if 1:\n" + b"".join(b" " + ln for ln in text.splitlines(keepends=True)), "<unguarded>", "exec",
                dont_inherit=True, flags=ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError):
        return None
    return text


def checks(stmt, ast):
    """Whether a top-level statement checks something: it holds an assert, or a call (a with's
    context manager included) named after a check."""
    for n in ast.walk(stmt):
        if isinstance(n, ast.Assert):
            return True
        if isinstance(n, ast.Call):
            name = (base_name(n.func) or "").lower()
            if any(w in name for w in CHECK_WORDS):
                return True
    return False


def collected(t):
    """Whether pytest collects the test where it is defined: a module-level function, or a
    method of a class named Test* without __init__ (a unittest.TestCase is collected by any
    name). A mixin's method is collected only in its subclasses: a copy of it would not be."""
    if t.cls is None:
        return True
    cls = t.module.classes[t.cls]
    if any(isinstance(s, ast_function_types()) and s.name in ("__init__", "__new__") for s in cls.body):
        return False
    return t.cls.startswith("Test") or any("TestCase" in base_name(b) for b in cls.bases)


def ast_function_types():
    import ast

    return (ast.FunctionDef, ast.AsyncFunctionDef)


def base_name(node):
    import ast

    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def copyable(t, ast):
    """Whether a copy written at the module's end is defined as the original is. The decorators
    of a copy run again: a parametrize over something that may be an iterator (a module-level
    itertools.product) would find it used up, and the original would lose its cases. A method's
    decorators and defaults must not name what its class body defines: the copy's class does
    not define it."""
    node = t.node
    for d in node.decorator_list:
        if isinstance(d, ast.Call) and "parametrize" in ast.unparse(d.func):
            values = d.args[1] if len(d.args) > 1 else next((k.value for k in d.keywords if k.arg == "argvalues"), None)
            if values is not None and not displayed(values, t.module, ast):
                return False
    if t.cls is None:
        return True
    cls = t.module.classes[t.cls]
    if cls.col_offset != 0:
        return False
    defined = set()
    for s in cls.body:
        for n in ast.walk(s) if not isinstance(s, ast_function_types()) else ():
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                defined.add(n.id)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(s.name)
    used = set()
    for e in list(node.decorator_list) + list(node.args.defaults) + [d for d in node.args.kw_defaults if d]:
        used.update(n.id for n in ast.walk(e) if isinstance(n, ast.Name))
    return not (used & defined)


def displayed(values, mod, ast):
    """Whether a parametrize argvalues expression is a list or tuple (a display, a comprehension,
    or a module-level name bound once to one): evaluated again, it gives the same cases."""
    displays = (ast.List, ast.Tuple, ast.ListComp)
    if isinstance(values, displays):
        return True
    if isinstance(values, ast.Name):
        bound = [s for s in mod.tree.body if isinstance(s, ast.Assign)
                 and any(isinstance(tg, ast.Name) and tg.id == values.id for tg in s.targets)]
        return len(bound) == 1 and isinstance(bound[0].value, displays)
    return False


# What a fixture that looks at the test it serves reads: a copy under another name is served
# otherwise (a golden file named after the test, a snapshot keyed by it).
NODE_WORDS = (b"request.node", b"request.function", b"request.keywords", b"request.cls", b"request.fspath",
              b"request.path", b"request.module", b"request.instance")


def named_by_fixtures(t, mod, ws, conftests, ast):
    """Whether a fixture the test may use, in its module or in a conftest.py on the way up to the
    workspace, reads the requesting test's node. Fixtures are matched by name through the
    fixtures they use themselves; an autouse one counts for every test under it."""
    trees = [mod.tree]
    d = os.path.dirname(os.path.join(ws, mod.rel))
    while True:
        path = os.path.join(d, "conftest.py")
        if path not in conftests:
            conftests[path] = None
            try:
                with open(path, "rb") as f:
                    conftests[path] = ast.parse(f.read())
            except (OSError, SyntaxError, ValueError):
                pass
        if conftests[path] is not None:
            trees.append(conftests[path])
        if os.path.abspath(d) == os.path.abspath(ws) or len(d) <= len(ws):
            break
        d = os.path.dirname(d)
    fixtures = {}  # name -> (reads the node, names it uses, autouse)
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            deco = [ast.unparse(dc) for dc in node.decorator_list]
            if not any("fixture" in dc for dc in deco):
                continue
            src = ast.unparse(node).encode()
            args = {a.arg for a in node.args.args + node.args.kwonlyargs}
            reads = any(w in src for w in NODE_WORDS) or b"_getframe" in src or b"inspect." in src
            reads = reads or fixtures.get(node.name, (False,))[0]  # a fixture overridden nearer still counts
            fixtures[node.name] = (reads, args, any("autouse" in dc for dc in deco))
    bad = {n for n, v in fixtures.items() if v[0]}
    while True:
        more = {n for n, v in fixtures.items() if n not in bad and v[1] & bad}
        if not more:
            break
        bad |= more
    if any(fixtures[n][2] for n in bad):
        return True
    used = {a.arg for a in t.node.args.args + t.node.args.kwonlyargs}
    for dc in t.node.decorator_list:
        if "usefixtures" in ast.unparse(dc):
            used.update(c.value for c in ast.walk(dc) if isinstance(c, ast.Constant) and isinstance(c.value, str))
    if t.cls is not None:
        for dc in t.module.classes[t.cls].decorator_list:
            if "usefixtures" in ast.unparse(dc):
                used.update(c.value for c in ast.walk(dc) if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return bool(used & bad)


def split_params(name):
    i = name.find("[")
    if i < 0:
        return name, ""
    return name[:i], name[i:]


def basedir(ws, reldir):
    """The directory pytest's append mode puts on sys.path for a test in reldir: the first
    directory above it that is not a package."""
    d = os.path.join(ws, reldir) if reldir else ws
    while d != ws and os.path.exists(os.path.join(d, "__init__.py")):
        d = os.path.dirname(d)
    return d


class Module:
    def __init__(self, rel, data, tree):
        self.rel, self.data, self.tree = rel, data, tree
        self.lines = data.splitlines(keepends=True)
        self.tests = {}
        self.names = set()
        self.classes = {}  # name -> ClassDef of a top-level class
        self.appended = []  # (class or None, text of a copy)

    def fresh_name(self, t, rng):
        """A new test name in the style of the test's siblings: their own words, rearranged."""
        siblings = [n for (cls, n) in self.tests if cls == t.cls] or [t.name]
        camel = not t.name.startswith("test_")
        words = set()
        for n in siblings:
            words.update(w for w in split_words(n[4:]) if w.isalpha() and len(w) > 1)
        words = sorted(words | {"case", "value", "result"} if len(words) < 3 else words)
        for attempt in range(400):
            picked = rng.sample(words, min(rng.choice((2, 2, 3, 3, 4)), len(words)))
            if attempt >= 200:
                picked.append(str(attempt - 198))
            if camel:
                name = "test" + "".join(w[:1].upper() + w[1:] for w in picked)
            else:
                name = "test_" + "_".join(w.lower() for w in picked)
            if name not in self.names:
                self.names.add(name)
                return name
        raise RuntimeError("no free sentinel name")

    def append(self, t, text):
        self.appended.append((t.cls, text))

    def find_test(self, cls, name):
        """The test function a node ID names: a module-level function, a method of the class, or
        one the class inherits from a class of this module (a base or a mixin), found where
        Python finds it: in the class's method resolution order (C3, over the classes the module
        defines; a base from elsewhere ends the search of its branch)."""
        t = self.tests.get((cls, name))
        if t is not None or cls is None:
            return t
        for c in self.mro(cls):
            for sub in self.classes[c].body:
                if isinstance(sub, ast_function_types()) and sub.name == name:
                    return Test(self, c, sub)
        return None

    def mro(self, cls, seen=()):
        """The C3 linearization of a class of the module over the module's own classes."""
        if cls not in self.classes or cls in seen:
            return []
        bases = [base_name(b) for b in self.classes[cls].bases]
        seqs = [self.mro(b, seen + (cls,)) for b in bases if b in self.classes]
        seqs.append([b for b in bases if b in self.classes])
        out = [cls]
        while True:
            seqs = [q for q in seqs if q]
            if not seqs:
                return out
            for q in seqs:
                head = q[0]
                if not any(head in r[1:] for r in seqs):
                    break
            else:
                return out + [c for q in seqs for c in q if c not in out]  # inconsistent: Python refuses it
            out.append(head)
            for r in seqs:
                if r and r[0] == head:
                    del r[0]

    def with_copies(self):
        """The module's text with its copies after all of its original lines, and how many
        lines they add. Module-level copies are written as they are; copies of methods in a class
        of their class's name (so that names mangle as in the original), attached to the original
        class, their super() cell pointed at it."""
        lines = list(self.lines)
        if lines and not lines[-1].endswith(b"\n"):
            lines[-1] += b"\n"
        tail = []
        for cls, text in self.appended:
            if cls is None:
                tail.append(b"\n\n" + text)
        classes = []
        for cls, _ in self.appended:
            if cls is not None and cls not in classes:
                classes.append(cls)
        if classes:
            attach, home = self.helper_name("_attach_tests"), self.helper_name("_tests_home")
            tail.append(ATTACH.replace(b"ATTACH", attach.encode()))
            for cls in classes:
                body = b"\n".join(text for c, text in self.appended if c == cls)
                c = cls.encode()
                tail.append(b"\n\n%s = %s\n\n\nclass %s:\n%s\n\n%s = %s(%s, %s)\ndel %s\n" % (
                    home.encode(), c, c, body, c, attach.encode(), home.encode(), c, home.encode()))
        added = b"".join(tail).splitlines(keepends=True)
        if added and not added[-1].endswith(b"\n"):
            added[-1] += b"\n"
        return b"".join(lines + added), len(added)

    def helper_name(self, base):
        name, i = base, 1
        while name in self.names:
            i += 1
            name = "%s%d" % (base, i)
        self.names.add(name)
        return name


# Attaches the methods of a class written at the module's end to the class of the same name
# above: a method whose code uses super() or __class__ gets the original class in its cell.
ATTACH = b"""

def ATTACH(home, made):
    for name, fn in list(vars(made).items()):
        if not name.startswith("test"):
            continue
        f = fn
        while f is not None:
            code = getattr(f, "__code__", None)
            if code is not None:
                for var, cell in zip(code.co_freevars, f.__closure__ or ()):
                    if var == "__class__":
                        cell.cell_contents = home
            f = getattr(f, "__wrapped__", None)
        setattr(home, name, fn)
    return home
"""


def split_words(s):
    out, cur = [], ""
    for ch in s:
        if ch == "_":
            if cur:
                out.append(cur)
            cur = ""
        elif ch.isupper() and cur and not cur[-1].isupper():
            out.append(cur)
            cur = ch.lower()
        else:
            cur += ch.lower() if ch.isupper() else ch
    if cur:
        out.append(cur)
    return out


def load_module(ws, rel, ast):
    path = os.path.join(ws, rel)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return Module(rel, b"", None)
    return parse_module(rel, data, ast)


def parse_module(rel, data, ast):
    try:
        tree = ast.parse(data, filename=rel)
    except (SyntaxError, ValueError):
        return Module(rel, b"", None)
    mod = Module(rel, data, tree)
    for node in ast.walk(tree):
        for attr in ("name", "id"):
            v = getattr(node, attr, None)
            if isinstance(v, str):
                mod.names.add(v)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            t = Test(mod, None, node)
            mod.tests[t.key] = t
        elif isinstance(node, ast.ClassDef):
            mod.classes[node.name] = node
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name.startswith("test"):
                    t = Test(mod, node.name, sub)
                    mod.tests[t.key] = t
    return mod


class Test:
    def __init__(self, module, cls, node):
        self.module, self.cls, self.node, self.name = module, cls, node, node.name
        self.key = (cls, node.name)
        starts = [d.lineno for d in node.decorator_list] + [node.lineno]
        self.first, self.last = min(starts), node.end_lineno

    def nodeid(self, rel, name):
        return "::".join([rel] + ([self.cls] if self.cls else []) + [name])

    def source(self):
        return b"".join(self.module.lines[self.first - 1 : self.last])

    def renamed(self, new, text=None):
        text = self.source() if text is None else text
        old = b"def " + self.name.encode() + b"("
        i = text.find(old)
        if i < 0:
            raise RuntimeError("definition line not found")
        return text[:i] + b"def " + new.encode() + b"(" + text[i + len(old) :]

    def asserting(self, ast):
        """The top-level statements before the first that can return: an assertion after
        `if not HAVE_X: return` may never run, and a copy that changes it would pass as the
        original does."""
        out = []
        for stmt in self.node.body:
            if returns(stmt, ast):
                break
            out.append(stmt)
        return out

    def negation(self, rng, ast):
        """The function's source with one top-level assertion turned around, or None: `assert X`
        becomes `assert not (X)`, `self.assertIn(...)` becomes `self.assertNotIn(...)`, and a
        `with pytest.raises(E):` block (or assertRaises) runs its body as it is."""
        spots = []
        for stmt in self.asserting(ast):
            if isinstance(stmt, ast.Assert) or raises_block(stmt, ast, one_line=True):
                spots.append(stmt)
            elif (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                  and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr in NEGATIONS):
                spots.append(stmt)
        if not spots:
            return None
        stmt = rng.choice(spots)
        lines = list(self.module.lines[self.first - 1 : self.last])
        if isinstance(stmt, ast.With):
            # `with pytest.raises(E):` becomes `if True:`: the block's body then raises out of the
            # test where the original expected it to.
            item, i = stmt.items[0], stmt.lineno - self.first
            end = (item.optional_vars or item.context_expr).end_col_offset
            lines[i] = lines[i][: stmt.col_offset] + b"if True" + lines[i][end:]
        elif isinstance(stmt, ast.Assert):
            x = stmt.test
            e, s = x.end_lineno - self.first, x.lineno - self.first
            lines[e] = lines[e][: x.end_col_offset] + b")" + lines[e][x.end_col_offset :]
            lines[s] = lines[s][: x.col_offset] + b"not (" + lines[s][x.col_offset :]
        else:
            f = stmt.value.func
            i, name = f.end_lineno - self.first, f.attr.encode()
            start = f.end_col_offset - len(name)
            if lines[i][start : f.end_col_offset] != name:
                return None
            lines[i] = lines[i][:start] + NEGATIONS[f.attr].encode() + lines[i][f.end_col_offset :]
        text = b"".join(lines)
        try:
            compile(b"if 1:\n" + b"".join(b" " + ln for ln in text.splitlines(keepends=True)), "<negation>", "exec",
                    dont_inherit=True, flags=ast.PyCF_ONLY_AST)
        except (SyntaxError, ValueError):
            return None
        return text

    def rephrased(self, rng, ast):
        """The function's source with its checks written another way, or None when it has none
        that can be: an `assert X, M` that is no held site becomes `if not (X): raise
        AssertionError(M)`, and a block `with pytest.raises(E):` (or assertRaises, with no `as`) a
        try whose except passes and whose else raises. It passes exactly when the test does, but
        its code is not the test's: a forger who knows a test by its name or its code can neither
        make every copy it does not know fail (this one must pass) nor pass (a negation must
        fail)."""
        text = self.source()
        starts = [0]
        for ln in text.splitlines(keepends=True):
            starts.append(starts[-1] + len(ln))

        def off(lineno, col):
            return starts[lineno - self.first] + col

        def seg(x):
            return text[off(x.lineno, x.col_offset) : off(x.end_lineno, x.end_col_offset)]

        # A held site stays an assert, which hold_module holds in the copy as in a twin: written
        # out here, its literal would be back in the module for the code under test to read.
        sites = {id(x.stmt) for x in held_sites(self.asserting(ast), ast, self.node)}
        edits = []  # (offset, order, end, replacement): applied from the back, ties by order
        for n in own_nodes(self.node, ast):
            if isinstance(n, ast.Assert) and id(n) not in sites:
                s = off(n.lineno, n.col_offset)
                if text[s : s + 6] != b"assert":
                    return None
                e = off(n.end_lineno, n.end_col_offset)
                edits.append((s, 0, s + 6, b"if not ("))
                if n.msg is None:
                    edits.append((e, 0, e, b"): raise AssertionError"))
                    continue
                comma = text.find(b",", off(n.test.end_lineno, n.test.end_col_offset),
                                  off(n.msg.lineno, n.msg.col_offset))
                if comma < 0:
                    return None
                edits.append((comma, 0, comma + 1, b"): raise AssertionError("))
                edits.append((e, 0, e, b")"))
            elif raises_block(n, ast, one_line=True) and n.items[0].optional_vars is None:
                call = n.items[0].context_expr
                exc, match = raises_args(call)
                if exc is None:
                    return None
                s = off(n.lineno, n.col_offset)
                colon = text.find(b":", off(call.end_lineno, call.end_col_offset))
                line = text[starts[n.lineno - self.first] : starts[n.lineno - self.first + 1]]
                body = text[starts[n.body[0].lineno - self.first] : starts[n.body[0].lineno - self.first + 1]]
                ind = line[: n.col_offset]
                bind = body[: len(body) - len(body.lstrip(b" \t"))]
                var = "raised_%06x" % rng.getrandbits(24)
                check = b"pass"
                if match is not None:
                    check = b"if not __import__('re').search(%s, str(%s)): raise AssertionError" % (seg(match),
                                                                                                  var.encode())
                tail = b"\n%sexcept (%s) as %s:\n%s%s\n%selse:\n%sraise AssertionError('DID NOT RAISE')" % (
                    ind, seg(exc), var.encode(), bind, check, ind, bind)
                edits.append((s, 0, colon + 1, b"try:"))
                e = off(n.end_lineno, n.end_col_offset)
                edits.append((e, 1, e, tail))
        if not edits:
            return None
        for start, _, end, new in sorted(edits, key=lambda x: (x[0], x[1]), reverse=True):
            text = text[:start] + new + text[end:]
        try:
            compile(b"if 1:\n" + b"".join(b" " + ln for ln in text.splitlines(keepends=True)), "<rephrased>", "exec",
                    dont_inherit=True, flags=ast.PyCF_ONLY_AST)
        except (SyntaxError, ValueError):
            return None
        return text

    def fully_held(self, ast):
        """Whether every assertion of the test is a held site (held.py): then the parent's
        record of its comparisons is all the evidence it needs, and it gets no copy."""
        sites = held_sites(self.asserting(ast), ast, self.node)
        return bool(sites) and checks_all_held(self.node, sites, ast, checks)


def own_nodes(fn, ast):
    """The nodes of a function's body, not those of a function, class or lambda it defines."""
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield n
        todo.extend(ast.iter_child_nodes(n))


# The context managers that check that their block raises: pytest.raises(E, match=M),
# self.assertRaises(E), self.assertRaisesRegex(E, M).
RAISES = ("raises", "assertRaises", "assertRaisesRegex")


def raises_block(stmt, ast, one_line=False):
    """Whether stmt is a with statement of one raises context manager (RAISES); with one_line,
    only one whose header is a line of its own, with the body below it."""
    if not isinstance(stmt, ast.With) or len(stmt.items) != 1:
        return False
    call = stmt.items[0].context_expr
    if not isinstance(call, ast.Call) or base_name(call.func) not in RAISES:
        return False
    last = stmt.items[0].optional_vars or call
    return not one_line or (call.lineno == stmt.lineno == last.end_lineno and stmt.body[0].lineno > stmt.lineno)


def raises_args(call):
    """The exception and the pattern of a raises call (RAISES), or (None, None) when it is
    written in a way a copy cannot say again."""
    name = base_name(call.func)
    if name == "assertRaisesRegex":
        if len(call.args) == 2 and not call.keywords:
            return call.args[0], call.args[1]
        return None, None
    if len(call.args) != 1:
        return None, None
    match = None
    for k in call.keywords:
        if k.arg != "match" or (name != "raises"):
            return None, None
        match = k.value
    return call.args[0], match


def negatable(stmt, ast):
    return isinstance(stmt, ast.Assert) or (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and (stmt.value.func.attr in NEGATIONS or stmt.value.func.attr in NEGATED_ALIASES))


# The unittest assertions and their opposites: a negation swaps one for the other.
NEGATIONS = {}
for _a, _b in (("assertTrue", "assertFalse"), ("assertIn", "assertNotIn"), ("assertIs", "assertIsNot"),
               ("assertIsNone", "assertIsNotNone"), ("assertIsInstance", "assertNotIsInstance"),
               ("assertEqual", "assertNotEqual"), ("assertAlmostEqual", "assertNotAlmostEqual"),
               ("assertRegex", "assertNotRegex")):
    NEGATIONS[_a], NEGATIONS[_b] = _b, _a
# assertEquals, unittest's old spelling of assertEqual, turns around to assertNotEqual.
NEGATED_ALIASES = {"assertEquals": "assertNotEqual"}


def twinnable(t):
    # A copy must behave as its original does. Tests that look at their own name or frame
    # (snapshots keyed by test name, request.node, inspect) may not, nor tests that check line
    # numbers (a warning's lineno: a copy's lines are others); they get no twin.
    src = t.source()
    for word in (b"request.node", b"request.function", b"_getframe", b"inspect.", b"__name__", b"snapshot",
                 b"__qualname__", b"lineno", b"co_firstlineno", b"getframeinfo", b"traceback."):
        if word in src:
            return False
    return True


def returns(stmt, ast):
    """Whether stmt holds a return of the function it is in (not of a function it defines)."""
    todo = [stmt]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return):
            return True
        if n is not stmt and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False
