# The sentinels, in the parent: copies of the pair's own tests, written into their modules before
# the child starts. Apart from make_sentinels, which reads and rewrites the test modules, it is pure:
# the source of a test in, the text of its copies out. Tested on the host (pytests/).
import os


def make_sentinels(cfg, rng=None):
    """Writes twins and mutants of the pair's own tests into their modules. rng is the
    bootstrap's SystemRandom; a test gives a seeded one.

    A twin is a verbatim copy of a required test under a new name: when the test passes, its
    twin must pass. A mutant is a copy whose expected value in one top-level equality
    assertion is replaced by a random value of the same shape: it must not pass. Names follow
    the module's own style; each sentinel sits right before or right after its original.
    """
    import ast
    import random

    if rng is None:
        rng = random.SystemRandom()
    ws = cfg["workspace"]
    want_twins, want_mutants, want_near = cfg.get("twins", 2), cfg.get("mutants", 3), cfg.get("near", 6)
    want_negated, negated_after = cfg.get("negated", 3), cfg.get("negated_after", False)
    files = {}  # rel path -> Module
    order = []
    for nodeid in cfg["ids"]:
        rel = nodeid.split("::", 1)[0]
        if rel.endswith(".py") and rel not in files:
            files[rel] = load_module(ws, rel, ast)
            order.append(rel)
    required = []  # (Module, Test, param suffix, nodeid)
    for nodeid in cfg["ids"]:
        parts = nodeid.split("::")
        mod = files.get(parts[0])
        if mod is None or mod.tree is None:
            continue
        name, suffix = split_params(parts[-1])
        t = mod.tests.get((parts[1] if len(parts) == 3 else None, name))
        if t is not None and len(parts) in (2, 3):
            required.append((mod, t, suffix, nodeid))
    rng.shuffle(required)
    sentinels, taken = [], set()

    twins = [r for r in required if twinnable(r[1])]
    for mod, t, suffix, nodeid in twins:
        if len([s for s in sentinels if s["kind"] == "twin"]) >= want_twins:
            break
        if (t.key, "twin") in taken:
            continue
        taken.add((t.key, "twin"))
        plant(sentinels, rng, t, None, "twin", suffix, nodeid)

    pool = [r[1] for r in required]
    extra = [t for rel in order if files[rel].tree is not None for t in files[rel].tests.values()]
    rng.shuffle(extra)
    for t in pool + extra:
        if len([s for s in sentinels if s["kind"] == "mutant"]) >= want_mutants:
            break
        if (t.key, "mutant") in taken:
            continue
        mod = t.module
        text = t.mutant(rng, ast, mutate_literal)
        if text is None:
            continue
        taken.add((t.key, "mutant"))
        plant(sentinels, rng, t, text, "mutant", "", None)

    # Near mutants: copies of a required test whose expected value is changed a little (two
    # characters swapped, a digit off by one, a separator moved). A plausible value a wrong
    # fix might give, so it cannot be judged alone; but the required test and its near
    # mutant never both pass, unless the code under test reads the expected value from the
    # calling test (or the report is forged).
    near = 0
    for mod, t, suffix, nodeid in required:
        for kind in rng.sample(NEAR_KINDS, len(NEAR_KINDS)):  # one near mutant of each kind that applies
            if near >= want_near:
                break
            text = t.mutant(rng, ast, lambda seg, rng: near_literal(seg, rng, kind))
            if text is None:
                continue
            if plant(sentinels, rng, t, text, "near", suffix, nodeid):
                near += 1

    # Negations: copies of a required test with one top-level assertion turned around,
    # before or after it at random (as a mutant: a forger that compares neighbouring tests
    # cannot tell which one is the original), or after it when the check asks
    # (assertTrue to assertFalse, assert x to assert not (x)). The test and its negation never
    # both pass; a candidate that neuters assertions wholesale (a wrapper that swallows
    # AssertionError, a trace function that jumps over them) makes both pass, even where no
    # literal is compared and so no mutant exists.
    negated = 0
    for mod, t, suffix, nodeid in required:
        if negated >= want_negated:
            break
        if (t.key, "negated") in taken or not twinnable(t):
            continue
        text = t.negation(rng, ast)
        if text is None:
            continue
        taken.add((t.key, "negated"))
        if plant(sentinels, rng, t, text, "negated", suffix, nodeid, after=negated_after):
            negated += 1

    shifts = {}
    for rel in order:
        mod = files[rel]
        if mod.inserts:
            shifts[rel] = mod.write(ws)
    paths = []
    for rel in order:
        base = basedir(ws, os.path.dirname(rel))
        if base != ws and base not in paths:
            paths.append(base)
    return {
        "public": {"v": 1, "sentinels": sentinels, "shifts": shifts},
        "ids": [s["id"] for s in sentinels],
        "paths": paths,
        "files": [os.path.join(ws, rel) for rel in order],
    }


def plant(sentinels, rng, t, text, kind, suffix, of, after=False):
    """Writes one sentinel (a copy of t's source, or text) beside t under a fresh name and
    records it. A test whose source the copy cannot be made from gets none."""
    mod = t.module
    try:
        new = mod.fresh_name(t, rng)
        copy = t.renamed(new, text)
    except RuntimeError:
        return False
    mod.insert(t, copy, rng, after=after or kind == "twin")
    entry = {"kind": kind, "id": t.nodeid(mod.rel, new) + suffix}
    if of:
        entry["of"] = of
    sentinels.append(entry)
    return True


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
        self.inserts = []  # (line index to insert before, text)

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

    def insert(self, t, text, rng, after=False):
        """Puts text right before or right after t, at random, or always after (a twin; a
        negation in the regression check), so that the test it copies runs as it would without
        it: a test that cannot run twice in one process fails in the second place."""
        blank = b"\n" if t.cls else b"\n\n"
        if not after and rng.random() < 0.5:
            self.inserts.append((t.first - 1, text + blank))
        else:
            self.inserts.append((t.last, blank + text))

    def write(self, ws):
        lines = list(self.lines)
        if lines and not lines[-1].endswith(b"\n"):
            lines[-1] += b"\n"
        shifts = []
        for at, text in sorted(self.inserts, key=lambda x: x[0], reverse=True):
            added = text.splitlines(keepends=True)
            lines[at:at] = added
            shifts.append([at, len(added)])
        path = os.path.join(ws, self.rel)
        with open(path, "wb") as f:
            f.write(b"".join(lines))
        return sorted(shifts)


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
        tree = ast.parse(data, filename=rel)
    except (OSError, SyntaxError, ValueError):
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
        becomes `assert not (X)`, `self.assertIn(...)` becomes `self.assertNotIn(...)`."""
        spots = []
        for stmt in self.asserting(ast):
            if isinstance(stmt, ast.Assert):
                spots.append(stmt)
            elif (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                  and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr in NEGATIONS):
                spots.append(stmt)
        if not spots:
            return None
        stmt = rng.choice(spots)
        lines = list(self.module.lines[self.first - 1 : self.last])
        if isinstance(stmt, ast.Assert):
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

    def mutant(self, rng, ast, change):
        """The function's source with one expected value replaced by change(), or None."""
        spots = []
        for stmt in self.asserting(ast):
            for lit in expected_literals(stmt, ast):
                spots.append(lit)
        rng.shuffle(spots)
        for lit in spots:
            seg = segment(self.module.lines, lit)
            if seg is None:
                continue
            new = change(seg, rng)
            if new is None:
                continue
            lines = list(self.module.lines[self.first - 1 : self.last])
            i = lit.lineno - self.first
            line = lines[i]
            lines[i] = line[: lit.col_offset] + new + line[lit.end_col_offset :]
            return b"".join(lines)
        return None


# The unittest assertions and their opposites: a negation swaps one for the other.
NEGATIONS = {}
for _a, _b in (("assertTrue", "assertFalse"), ("assertIn", "assertNotIn"), ("assertIs", "assertIsNot"),
               ("assertIsNone", "assertIsNotNone"), ("assertIsInstance", "assertNotIsInstance"),
               ("assertEqual", "assertNotEqual"), ("assertAlmostEqual", "assertNotAlmostEqual"),
               ("assertRegex", "assertNotRegex")):
    NEGATIONS[_a], NEGATIONS[_b] = _b, _a


def twinnable(t):
    # A copy must behave as its original does. Tests that look at their own name or frame
    # (snapshots keyed by test name, request.node, inspect) may not; they get no twin.
    src = t.source()
    for word in (b"request.node", b"request.function", b"_getframe", b"inspect.", b"__name__", b"snapshot",
                 b"__qualname__"):
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


def expected_literals(stmt, ast):
    """Literal expected values of a top-level equality assertion: `assert x == LIT`,
    `assert LIT == x`, `self.assertEqual(x, LIT)`. Only single-line literals."""
    sides = []
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare):
        c = stmt.test
        if len(c.ops) == 1 and isinstance(c.ops[0], ast.Eq):
            sides = [c.left, c.comparators[0]]
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        f = stmt.value.func
        if isinstance(f, ast.Attribute) and f.attr in ("assertEqual", "assertEquals") and len(stmt.value.args) >= 2:
            sides = stmt.value.args[:2]
    out = []
    for side in sides:
        nodes = side.elts if isinstance(side, (ast.Tuple, ast.List)) else [side]
        for n in nodes:
            if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Constant):
                n = n.operand
            if (isinstance(n, ast.Constant) and not isinstance(n.value, bool)
                    and isinstance(n.value, (str, bytes, int, float))):
                if n.lineno == n.end_lineno:
                    out.append(n)
    return out


def segment(lines, node):
    if node.lineno != node.end_lineno:
        return None
    return lines[node.lineno - 1][node.col_offset : node.end_col_offset]


DIGITS = "0123456789"
LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = LOWER.upper()


def mutate_literal(seg, rng):
    """A literal of the same shape as seg (bytes of source) that differs from it in at least
    two characters, or None when seg is too small to mutate without risking a value that a
    wrong implementation could produce."""
    try:
        s = seg.decode("ascii")
    except UnicodeDecodeError:
        return None
    if s.isdigit():
        return mutate_chars(s, rng, 2, leading=True)
    if s.count(".") == 1 and s.replace(".", "").isdigit():
        return mutate_chars(s, rng, 3, leading=False)
    prefix = ""
    while s and s[0] in "bBuU":
        prefix, s = prefix + s[0], s[1:]
    if len(s) < 2 or s[0] not in "'\"" or s[-1] != s[0] or s.startswith(s[0] * 3):
        return None
    body = s[1:-1]
    if "\\" in body or s[0] in body or prefix.lower().count("r"):
        return None
    new = mutate_chars(body, rng, 3, leading=False)
    if new is None:
        return None
    return (prefix + s[0]).encode() + new + s[0].encode()


NEAR_KINDS = ("swap", "move", "digit")


def near_literal(seg, rng, kind):
    """A literal close to seg: two neighbouring characters swapped, a digit off by one, or a
    separator moved by one place. Never equal to seg; None when seg offers no such change."""
    try:
        s = seg.decode("ascii")
    except UnicodeDecodeError:
        return None
    prefix, quote = "", ""
    body = s
    if not s.replace(".", "", 1).isdigit():
        while body and body[0] in "bBuU":
            prefix, body = prefix + body[0], body[1:]
        if len(body) < 2 or body[0] not in "'\"" or body[-1] != body[0] or body.startswith(body[0] * 3):
            return None
        quote, body = body[0], body[1:-1]
        if "\\" in body or quote in body:
            return None
    swaps, moves, digits = [], [], []
    for i in range(len(body) - 1):
        a, b = body[i], body[i + 1]
        if (a != b and a.isalnum() and b.isalnum() and (a.isdigit() == b.isdigit())
                and not (i == 0 and b == "0" and not quote)):
            swaps.append(body[:i] + b + a + body[i + 2:])
        if a.isalnum() and not b.isalnum() and b in ",._-:/ " and i + 2 < len(body) and body[i + 2].isalnum():
            moves.append(body[:i] + b + a + body[i + 2:])  # the separator one place left
    for i, ch in enumerate(body):
        if ch.isdigit():
            d = int(ch)
            for n in (d - 1, d + 1):
                if 0 <= n <= 9 and not (n == 0 and i == 0 and not quote and len(body) > 1):
                    digits.append(body[:i] + str(n) + body[i + 1:])
    # Each kind fools a different reader of the expected value: a moved separator keeps every
    # digit, a swap keeps every character, a digit off by one keeps the shape.
    # A number must change its value, not only its spelling: 0.0 with the point moved is .00.
    changes = [c for c in {"swap": swaps, "move": moves, "digit": digits}[kind]
               if c != body and (quote or float(c) != float(body))]
    if not changes:
        return None
    return (prefix + quote + rng.choice(changes) + quote).encode()


def mutate_chars(s, rng, minimum, leading):
    spots = [i for i, ch in enumerate(s) if ch.isascii() and ch.isalnum()]
    if len(spots) < minimum:
        return None
    k = max(2, len(spots) // 3)
    chosen = set(rng.sample(spots, k))
    out = []
    for i, ch in enumerate(s):
        if i not in chosen:
            out.append(ch)
            continue
        pool = DIGITS if ch.isdigit() else LOWER if ch.islower() else UPPER
        if leading and i == spots[0] and ch.isdigit():
            pool = "123456789"
        out.append(rng.choice([c for c in pool if c != ch]))
    return "".join(out).encode()
