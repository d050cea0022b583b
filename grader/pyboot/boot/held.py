# Held comparisons. The expected value of a required test's top-level assertion never reaches
# the test process when it is a literal: the planter (Tender's own step, as root, before any
# code of the candidate's can run) takes it out of the test module and leaves a token in its
# place, `assert _tender_held(TOKEN, value)`. The bootstrap's parent holds the literals; the
# test process sends it the token and the value the test computed, in a canonical form of exact
# builtin types, and the parent compares them itself. So the code under test cannot read the
# value it should produce. A value of a type of its own is asked for its own equality with the
# literal among decoys and foreign variants (asker.py): one that claims to equal an object it has
# never seen lies, and is caught; one whose equality is loose (it claims decoys too) is only
# noted, as an honest equality can be that loose. The parent's record of each comparison, out of
# the test process's reach, is what Tender believes.
#
# Pure functions, in the planter (sites, edits), the child (encode) and the parent (decode,
# compare, decoys). Tested on the host (pytests/test_held.py).
HELD_CALL = "_tender_held"
HELD_MODULE = "_tender_held"

# The operators a held site can have, with the value the test computed on the left: value OP
# literal. "contains" is `literal in value`; "truth" and "falsy" hold a value alone.
FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<=", "is": "is", "is not": "is not",
        "in": "contains", "not in": "not contains"}
# An order's negation stays a negation ("not <"): `not a < b` is not `a >= b` where the order is
# not total (a NaN, sets).
NEGATE = {"==": "!=", "!=": "==", "<": "not <", "<=": "not <=", ">": "not >", ">=": "not >=",
          "not <": "<", "not <=": "<=", "not >": ">", "not >=": ">=", "is": "is not", "is not": "is",
          "in": "not in", "not in": "in", "contains": "not contains", "not contains": "contains",
          "truth": "falsy", "falsy": "truth"}

# unittest assertions a held site can be: name -> (operator, how many value arguments).
UNITTEST_HELD = {
    "assertEqual": ("==", 2), "assertEquals": ("==", 2), "failUnlessEqual": ("==", 2),
    "assertNotEqual": ("!=", 2), "assertNotEquals": ("!=", 2), "failIfEqual": ("!=", 2),
    "assertIn": ("in", 2), "assertNotIn": ("not in", 2),
    "assertIs": ("is", 2), "assertIsNot": ("is not", 2),
    "assertGreater": (">", 2), "assertGreaterEqual": (">=", 2), "assertLess": ("<", 2), "assertLessEqual": ("<=", 2),
    "assertIsNone": ("is None", 1), "assertIsNotNone": ("is not None", 1),
    "assertTrue": ("truth", 1), "assertFalse": ("falsy", 1), "failUnless": ("truth", 1), "failIf": ("falsy", 1),
}

SINGLETONS = (None, True, False)
# The operators of a pair site: two values the test computes, compared by the parent.
PAIR_OPS = ("==", "!=", "in", "not in")
MAX_ENCODED = 1 << 20  # an encoded value past this is sent as its digest
MAX_DEPTH = 40
MAX_ITEMS = 200000


class Site:
    """One held assertion: the statement, the node of the value the test computes, the
    operator (value OP literal, or, for a pair site, value OP other: two values the test
    computes, which the parent compares by their plain values), the literal's value, the unittest method it calls (None for an
    assert), and the local names bound to a literal whose binding it holds (bindings: their
    assignment statements, whose literal is taken out too)."""

    def __init__(self, stmt, value, op, literal=None, method=None, other=None):
        self.stmt, self.value, self.op, self.literal, self.method = stmt, value, op, literal, method
        self.other = other  # a pair site: the second value the test computes (value OP other)
        self.names = set()
        self.bindings = []


def literal_of(node, ast, bound=None):
    """(True, value) when node is a literal Python can evaluate without running anything (a
    constant, a negative number, a tuple, list, set or dict display of literals), or a local name
    bound holds (name -> (value, its assignment)), else (False, None)."""
    if bound and isinstance(node, ast.Name) and node.id in bound:
        return True, bound[node.id][0]
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return False, None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    return True, value


def is_literal(node, ast):
    return literal_of(node, ast)[0]


CMP_OPS = None


def cmp_op(op, ast):
    global CMP_OPS
    if CMP_OPS is None:
        CMP_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
                   ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
    return CMP_OPS.get(type(op))


def compare_site(stmt, expr, ast, negated=False, bound=None):
    """The site of `assert EXPR` (or `assert not EXPR` when negated) when EXPR compares a value
    with a literal, or holds a value alone; None when there is nothing to hold."""
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
        op = cmp_op(expr.ops[0], ast)
        left, right = expr.left, expr.comparators[0]
        lok, lval = literal_of(left, ast, bound)
        rok, rval = literal_of(right, ast, bound)
        if op is not None and lok != rok:
            value, lit, op = (right, lval, FLIP[op]) if lok else (left, rval, op)
            if op in ("is", "is not") and not any(lit is s for s in SINGLETONS):
                op = None
            if op is not None:
                return named(Site(stmt, value, NEGATE[op] if negated else op, lit), left if lok else right, ast,
                             bound)
        if op in PAIR_OPS and not lok and not rok:
            return Site(stmt, left, "pair " + (NEGATE[op] if negated else op), None, None, right)
    if is_literal(expr, ast):
        return None
    return Site(stmt, expr, "falsy" if negated else "truth")


def named(site, lit, ast, bound):
    """site, knowing which local name bound to a literal (if any) its literal side is."""
    if bound and isinstance(lit, ast.Name) and lit.id in bound:
        site.names.add(lit.id)
        site.bindings.append(bound[lit.id][1])
    return site


def held_sites(stmts, ast, func=None):
    """The held sites among a test's top-level statements (those before any that can return:
    each runs once whenever the test passes): asserts, and unittest's assertions called on
    self. With func (the test's function), a local name bound to a literal at the top level
    (`expected = "-1,234"`) counts as that literal when every use of it in the function is a
    side of such an assertion: its binding is taken out with the assertions."""
    bound = local_literals(stmts, ast, func) if func is not None else {}
    while True:
        sites = []
        for stmt in stmts:
            if isinstance(stmt, ast.Assert):
                expr, negated = stmt.test, False
                if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
                    expr, negated = expr.operand, True
                s = compare_site(stmt, expr, ast, negated, bound)
            else:
                s = unittest_site(stmt, ast, bound)
            if s is not None:
                sites.append(s)
        # A name some of whose uses no site holds would be left in the test: not held.
        held = {}
        for s in sites:
            for n in s.names:
                held[n] = held.get(n, 0) + 1
        loose = [n for n in bound if held.get(n, 0) != bound[n][2]]
        if not loose:
            return sites
        for n in loose:
            del bound[n]


def local_literals(stmts, ast, func):
    """name -> (literal value, its assignment, how often the function reads it) for each local
    name bound once, at the top level, to a literal, and never bound again."""
    stores, loads = {}, {}
    for n in ast.walk(func):
        if isinstance(n, ast.Name):
            d = loads if isinstance(n.ctx, ast.Load) else stores
            d[n.id] = d.get(n.id, 0) + 1
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for name in n.names:
                stores[name] = stores.get(name, 0) + 2
        elif isinstance(n, ast.arg):
            stores[n.arg] = stores.get(n.arg, 0) + 2
    out = {}
    for stmt in stmts:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stores.get(stmt.targets[0].id) == 1):
            ok, value = literal_of(stmt.value, ast)
            if ok:
                out[stmt.targets[0].id] = (value, stmt, loads.get(stmt.targets[0].id, 0))
    return out


def unittest_site(stmt, ast, bound=None):
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    f = call.func
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"):
        return None
    held = UNITTEST_HELD.get(f.attr)
    if held is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    op, n = held
    if len(call.args) < n or len(call.args) > n + 1 or any(k.arg != "msg" for k in call.keywords):
        return None
    if n == 1:
        value = call.args[0]
        if is_literal(value, ast):
            return None
        if op in ("is None", "is not None"):
            return Site(stmt, value, op.replace(" None", ""), None, f)
        return Site(stmt, value, op, None, f)
    a, b = call.args[0], call.args[1]
    aok, aval = literal_of(a, ast, bound)
    bok, bval = literal_of(b, ast, bound)
    if not aok and not bok and op in PAIR_OPS:
        return Site(stmt, a, "pair " + op, None, f, b)
    if aok == bok:
        return None
    value, lit, op = (b, aval, FLIP[op]) if aok else (a, bval, op)
    if op in ("is", "is not") and not any(lit is s for s in SINGLETONS):
        return None
    return named(Site(stmt, value, op, lit, f), a if aok else b, ast, bound)


def checks_all_held(func, sites, ast, checks):
    """Whether every assertion of the test is a held site: no assert, and no call named after a
    check, anywhere else in its body (nested in a block, or after a statement that can return)."""
    held = {id(s.stmt) for s in sites}
    for stmt in func.body:
        if id(stmt) in held:
            continue
        if checks(stmt, ast):
            return False
    return True


def source_encoding(data):
    """A module's source encoding, as its coding declaration (PEP 263) says; UTF-8 without one."""
    import io
    import tokenize

    try:
        return tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except (SyntaxError, LookupError):
        return "utf-8"


class Text:
    """A module's source as bytes, with edits that keep every line where it is: an edit's
    replacement has as many newlines as the text it replaces."""

    def __init__(self, data):
        # The AST's columns count the UTF-8 bytes of each decoded line: a module in another
        # encoding (PEP 263) is edited as UTF-8 and written back in its own.
        self.encoding = source_encoding(data)
        if self.encoding not in ("utf-8", "utf-8-sig"):
            data = data.decode(self.encoding).encode("utf-8")
        self.data = data
        self.starts = [0]
        for i, ch in enumerate(data):
            if ch == 10:
                self.starts.append(i + 1)
        self.edits = []
        self.blanked = set()  # the bindings whose literal is already taken out

    def offset(self, line, col):
        return self.starts[line - 1] + col

    def span(self, node):
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def replace(self, start, end, new):
        if self.data[start:end].count(b"\n") != new.count(b"\n"):
            raise ValueError("an edit would move lines")
        self.edits.append((start, end, new))

    def result(self):
        out = self.data
        for start, end, new in sorted(self.edits, key=lambda e: e[0], reverse=True):
            out = out[:start] + new + out[end:]
        if self.encoding not in ("utf-8", "utf-8-sig"):
            out = out.decode("utf-8").encode(self.encoding)
        return out


def held_call(text, site, token, name):
    """Edits text so that site asks the parent: `assert EXPR` becomes
    `assert NAME('TOKEN', VALUE)`, and `self.assertX(a, b, msg)` becomes
    `self.assertTrue(NAME('TOKEN', VALUE), msg)`. The value's own source is kept as it is; the
    newlines of the text taken out move inside the call's parentheses, so no line moves."""
    vs, ve = text.span(site.value)
    if site.method is None:
        s, e = text.span(site.stmt.test)
    else:
        n = UNITTEST_HELD[site.method.attr][1]
        args = site.stmt.value.args[:n]
        s = text.offset(args[0].lineno, args[0].col_offset)
        e = text.offset(args[-1].end_lineno, args[-1].end_col_offset)
        me = text.offset(site.method.end_lineno, site.method.end_col_offset)
        text.replace(me - len(site.method.attr.encode()), me, b"assertTrue")
    if site.other is not None:  # a pair: both values, in their order, and only them
        os_, oe = text.span(site.other)
        pad = b"\n" * (text.data[s:vs].count(b"\n") + text.data[ve:os_].count(b"\n") + text.data[oe:e].count(b"\n"))
        text.replace(s, e, name.encode() + b"('" + token.encode() + b"', " + text.data[vs:ve] + b", " +
                     text.data[os_:oe] + pad + b")")
        return
    pad = b"\n" * (text.data[s:vs].count(b"\n") + text.data[ve:e].count(b"\n"))
    text.replace(s, e, name.encode() + b"('" + token.encode() + b"', " + text.data[vs:ve] + pad + b")")
    for stmt in site.bindings:
        if id(stmt) in text.blanked:
            continue
        text.blanked.add(id(stmt))
        bs, be = text.span(stmt.value)
        text.replace(bs, be, b"(None" + b"\n" * text.data[bs:be].count(b"\n") + b")")


# --- values: the child encodes, the parent decodes and compares ------------------------------


# What decides a comparison: a subclass of a builtin value type that takes any of these from a
# class of its own compares as that class says, not as its plain value.
HELD_COMPARING = ("__eq__", "__ne__", "__hash__", "__contains__", "__lt__", "__le__", "__gt__", "__ge__")
BUILTIN_VALUES = (str, bytes, bytearray, int, float, complex, tuple, list, dict, set, frozenset, bool, object)


def plain(t):
    """Whether instances of t compare as the builtin value type they subclass: no class of t's
    own (its MRO up to the builtin) defines a comparing method."""
    for name in HELD_COMPARING:
        for c in type.__getattribute__(t, "__mro__"):
            if name in type.__getattribute__(c, "__dict__"):
                if c not in BUILTIN_VALUES:
                    return False
                break
    return True


def encode(v, depth=0, budget=None, trusted=None):
    """The value a test computed, as JSON-able lists of exact builtin types, made by the base
    types' own methods (which a subclass cannot override for a call through the base): a str
    subclass's characters, an int subclass's value. A value of another type, or of a subclass
    with a comparison of its own (honest, as collections.Counter's, or lying), is sent as what it
    converts to (an index, a float) for the parent to compare with a number, or as opaque: the
    parent then has the test process ask the value's own comparison, among decoys."""
    if budget is None:
        budget = [MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        return ["o", "too big"]
    if v is None:
        return ["n"]
    t = type(v)
    if t is bool:
        return ["b", v]
    if not plain(t):
        ok = trusted(t) if trusted is not None else None
        base = next((b for b in BUILTIN_VALUES[:-2] if isinstance(v, b)), None)
        if base is not None and ok is not None:
            # A builtin value with a comparison of its own: its plain value too, and whether that
            # comparison is the standard library's, pytest's or an evaluator file's (trusted).
            return ["u", encode(base_copy(base, v), depth + 1, budget), views(v, ok), bool(ok)]
        return views(v, ok)
    if isinstance(v, int) and t is not bool:
        return ["i", int.__format__(int.__int__(v), "x")]  # hex: no digit limit (3.11's 4300)
    if isinstance(v, float):
        return ["f", float.__repr__(float.__float__(v))]
    if isinstance(v, complex):
        return ["c", float.__repr__(complex.real.__get__(v)), float.__repr__(complex.imag.__get__(v))]
    if isinstance(v, str):
        return ["s", str.__str__(v)]
    if isinstance(v, (bytes, bytearray)):
        import base64

        raw = bytes.__getitem__(v, slice(None)) if isinstance(v, bytes) else bytes(bytearray.copy(v))
        return ["y", base64.b64encode(raw).decode()]
    if isinstance(v, (list, tuple)):
        items = list.__iter__(v) if isinstance(v, list) else tuple.__iter__(v)
        return ["l" if isinstance(v, list) else "t", [encode(x, depth + 1, budget, trusted) for x in items]]
    if isinstance(v, dict):
        return ["d", [[encode(k, depth + 1, budget, trusted), encode(x, depth + 1, budget, trusted)]
                      for k, x in dict.items(v)]]
    if isinstance(v, (set, frozenset)):
        items = set.__iter__(v) if isinstance(v, set) else frozenset.__iter__(v)
        return ["S" if isinstance(v, set) else "F", [encode(x, depth + 1, budget, trusted) for x in items]]
    return views(v, trusted(t) if trusted is not None else None)


def base_copy(base, v):
    """v, an instance of a subclass of the builtin base, as a plain base value, made by the
    base's own methods."""
    if base in (str, bytes, tuple):
        return base.__getitem__(v, slice(None)) if base is not tuple else tuple(tuple.__iter__(v))
    if base is bytearray:
        return bytes(bytearray.copy(v))
    if base is int:
        return int.__int__(v)
    if base is float:
        return float.__float__(v)
    if base is complex:
        return complex(complex.real.__get__(v), complex.imag.__get__(v))
    if base is list:
        return list(list.__iter__(v))
    if base is dict:
        return dict(dict.items(v))
    return base(base.__iter__(v))  # set, frozenset


def views(v, trusted=None):
    """What an object of another type converts to, exactly: its index (numpy's integers,
    sympy's Integer), else its ratio of integers (Decimal, Fraction, numpy's floats), each only
    when it has one. A conversion that rounds (float()) would answer otherwise than Python.
    trusted says whether its comparison is the standard library's, pytest's or an evaluator
    file's (None: not known)."""
    import operator

    out = {}
    try:
        out["index"] = int.__format__(int.__int__(operator.index(v)), "x")
    except Exception:
        pass
    if "index" not in out:
        try:
            n, d = v.as_integer_ratio()
            out["ratio"] = [int.__format__(int.__int__(n), "x"), int.__format__(int.__int__(d), "x")]
        except Exception:
            pass
    name = type.__getattribute__(type(v), "__name__")
    return ["x", out, name if isinstance(name, str) else "?", trusted]


class Undecidable(Exception):
    """The parent cannot compare this value with the literal: it converts to nothing the
    literal's type compares with."""


class View:
    """An object of the test's that the parent knows only by what it converts to."""

    def __init__(self, views, name, trusted=None):
        self.views, self.name, self.trusted = views, name, trusted

    def _as(self, other):
        if isinstance(other, bool) or other is None or not isinstance(other, (int, float)):
            raise Undecidable()
        if "index" in self.views:
            return int(self.views["index"], 16)
        if "ratio" in self.views:
            from fractions import Fraction

            n, d = self.views["ratio"]
            return Fraction(int(n, 16), int(d, 16))  # compares with an int or a float exactly
        raise Undecidable()

    def __eq__(self, other):
        if isinstance(other, View):
            raise Undecidable()
        return self._as(other) == other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __lt__(self, other):
        return self._as(other) < other

    def __le__(self, other):
        return self._as(other) <= other

    def __gt__(self, other):
        return self._as(other) > other

    def __ge__(self, other):
        return self._as(other) >= other

    __hash__ = None

    def __bool__(self):
        raise Undecidable()

    def __contains__(self, item):
        raise Undecidable()  # the object's own membership, which the parent does not know


class Opaque(View):
    def __init__(self, name):
        View.__init__(self, {}, name)


def decode(enc, depth=0, foreign=None):
    """The parent's copy of an encoded value, in exact builtin types (a View or Opaque where
    the test's value was of another type). A malformed encoding is Undecidable."""
    import base64

    if not isinstance(enc, list) or not enc or depth > MAX_DEPTH + 1:
        raise Undecidable()
    k = enc[0]
    try:
        if k == "n":
            return None
        if k == "b":
            return bool(enc[1]) if isinstance(enc[1], bool) else _bad()
        if k == "i":
            return int(enc[1], 16)
        if k == "f":
            return float(enc[1])
        if k == "c":
            return complex(float(enc[1]), float(enc[2]))
        if k == "s":
            return enc[1] if isinstance(enc[1], str) else _bad()
        if k == "y":
            return base64.b64decode(enc[1], validate=True)
        if k in ("l", "t"):
            items = [decode(x, depth + 1, foreign) for x in enc[1]]
            return items if k == "l" else tuple(items)
        if k == "d":
            return dict((decode(a, depth + 1, foreign), decode(b, depth + 1, foreign)) for a, b in enc[1])
        if k in ("S", "F"):
            items = [decode(x, depth + 1, foreign) for x in enc[1]]
            return set(items) if k == "S" else frozenset(items)
        if k == "x":
            return View(dict(enc[1]), str(enc[2]), enc[3] if len(enc) > 3 else None)
        if k == "u":
            # A builtin value with a comparison of its own answers for itself, among decoys of
            # what it is compared with: its plain value need not be what it equals (boltons'
            # OrderedMultiDict is a dict of lists that equals the dict of their last items).
            return decode(enc[2], depth + 1, foreign)
        if k == "o":
            return Opaque(str(enc[1]))
        if k == "z" and foreign is not None:  # the child's own, among the literals it is sent
            return foreign()
    except Undecidable:
        raise
    except Exception:
        raise Undecidable()
    raise Undecidable()


# A foreign object's place in an encoded literal (foreign_variants).
FOREIGN = ["z"]


def foreign_variants(enc, value, rng, n):
    """The encoded literal with a foreign object (FOREIGN, an object of a class the child makes,
    equal to itself alone) in its own place, and copies with one in the place of up to n items
    (of a list or tuple) or dict values, chosen at random among those where the value the test
    computed holds an object of the code under test's inside its own plain containers. An
    honest object never equals what it has never seen; an object there that claims to, lies.
    (A foreign object is never put inside what the object itself stands for: an honest equality
    may ignore a dict's values, as boltons' OrderedMultiDict's does.)"""
    spots = list(_untrusted_spots(enc, value, ()))
    chosen = rng.sample(spots, min(n, len(spots)))
    return [FOREIGN] + [_foreign_at(enc, path) for path in sorted(chosen)]


def _untrusted_spots(enc, value, path):
    """The paths (item numbers) in encoded literal enc at which value, through plain lists, tuples
    and dicts that match the literal's, holds a View of an untrusted object."""
    if not isinstance(enc, list) or len(enc) < 2 or not isinstance(enc[1], list):
        return
    pairs = []
    if enc[0] in ("l", "t") and isinstance(value, (list, tuple)) and len(value) == len(enc[1]):
        pairs = list(enumerate(zip(enc[1], value)))
    elif enc[0] == "d" and isinstance(value, dict):
        for i, kv in enumerate(enc[1]):
            try:
                k = decode(kv[0])
                if k in value:
                    pairs.append((i, (kv[1], value[k])))
            except Exception:
                continue
    for i, (lit, v) in pairs:
        if isinstance(v, View):
            if v.trusted is not True:
                yield path + (i,)
        else:
            yield from _untrusted_spots(lit, v, path + (i,))


def _foreign_at(enc, path):
    """A copy of encoded enc with FOREIGN at path."""
    if not path:
        return FOREIGN
    items = list(enc[1])
    i = path[0]
    if enc[0] == "d":
        items[i] = [items[i][0], _foreign_at(items[i][1], path[1:])]
    else:
        items[i] = _foreign_at(items[i], path[1:])
    return [enc[0], items]


def _bad():
    raise Undecidable()


def compare(op, value, literal):
    """Whether `value OP literal` holds, by Python's own rules on exact builtin values: the
    parent's judgement of a held site. Undecidable when the value holds an object the parent
    knows only as a View or Opaque and the comparison reaches it."""
    try:
        if op == "truth":
            return _truth(value)
        if op == "falsy":
            return not _truth(value)
        if op == "is":  # the literal is None, True or False: the planter holds no other
            return value is literal
        if op == "is not":
            return value is not literal
        if op == "==":
            return _bool(value == literal)
        if op == "!=":
            return _bool(value != literal)
        if op in ORDERS:
            return _bool(ORDERS[op](value, literal))
        if op.startswith("not ") and op[4:] in ORDERS:
            return not _bool(ORDERS[op[4:]](value, literal))
        if op == "in":
            return _bool(value in literal)
        if op == "not in":
            return _bool(value not in literal)
        if op == "contains":
            return _bool(literal in value)
        if op == "not contains":
            return _bool(literal not in value)
    except Undecidable:
        raise
    except TypeError:
        # Python raises too (None < 1, 1 in 5): the assertion errors, it does not hold. Where a
        # View is reached, it was the parent's copy that refused, not the test's object.
        if has_view(value) or has_view(literal):
            raise Undecidable()
        return False
    raise Undecidable()


def has_view(v):
    """Whether the parent's copy of a value holds a View (or Opaque) anywhere."""
    todo = [v]
    while todo:
        x = todo.pop()
        if isinstance(x, View):
            return True
        if isinstance(x, (list, tuple, set, frozenset)):
            todo.extend(x)
        elif isinstance(x, dict):
            todo.extend(x.keys())
            todo.extend(x.values())
    return False


ORDERS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _bool(r):
    if type(r) is not bool:
        raise Undecidable()
    return r


def _truth(value):
    if isinstance(value, View):
        raise Undecidable()
    return bool(value)


# What a decoy may be drawn from: each character class keeps its own.
DIGITS = "0123456789"
LOWER = "abcdefghijklmnopqrstuvwxyz"


def decoys(literal, rng, n=2):
    """Values of the literal's shape that are not the literal: when the parent must ask the
    test's own object whether it equals the literal, it asks the same of these, in random
    order, and an object that claims equality with one of them is lying about its equality.
    Empty when the literal has no such neighbours (None, a bool, an empty string)."""
    out = []
    for _ in range(n * 8):
        if len(out) == n:
            break
        d = decoy(literal, rng)
        if d is not None and d != literal and type(d) is type(literal) and d not in out:
            out.append(d)
    return out


def decoy(v, rng):
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        s = str(abs(v))
        new = "".join(rng.choice(DIGITS[1:] if i == 0 and len(s) > 1 else DIGITS) for i in range(len(s)))
        return int(new) * (-1 if v < 0 else 1)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return None
        return v + (abs(v) or 1.0) * rng.choice((-1, 1)) * (0.5 + rng.random())
    if isinstance(v, str):
        return _mutated(v, rng) if len(v) >= 2 else None
    if isinstance(v, bytes):
        s = v.decode("latin-1")
        m = _mutated(s, rng) if len(s) >= 2 else None
        return None if m is None else m.encode("latin-1")
    if isinstance(v, (list, tuple)) and v:
        i = rng.randrange(len(v))
        d = decoy(v[i], rng)
        if d is None:
            return None
        items = list(v)
        items[i] = d
        return type(v)(items)
    if isinstance(v, dict) and v:
        k = rng.choice(sorted(v, key=repr))
        d = decoy(v[k], rng)
        if d is None:
            return None
        out = dict(v)
        out[k] = d
        return out
    return None


def _mutated(s, rng):
    spots = [i for i, ch in enumerate(s) if ch.isascii() and ch.isalnum()]
    if len(spots) < 2:
        return None
    chosen = set(rng.sample(spots, max(2, len(spots) // 3)))
    out = []
    for i, ch in enumerate(s):
        if i not in chosen:
            out.append(ch)
            continue
        pool = DIGITS if ch.isdigit() else LOWER if ch.islower() else LOWER.upper()
        out.append(rng.choice([c for c in pool if c != ch]))
    return "".join(out)


def canonical(enc):
    """An encoding with its dicts' items and its sets' elements sorted, so that equal values of
    one type encode alike: what a digest is made of."""
    import json

    if not isinstance(enc, list) or not enc:
        return enc
    k = enc[0]
    if k in ("l", "t") and len(enc) > 1:
        return [k, [canonical(x) for x in enc[1]]]
    if k == "d" and len(enc) > 1:
        items = [[canonical(a), canonical(b)] for a, b in enc[1]]
        return [k, sorted(items, key=lambda it: json.dumps(it[0], sort_keys=True))]
    if k in ("S", "F") and len(enc) > 1:
        return [k, sorted((canonical(x) for x in enc[1]), key=lambda x: json.dumps(x, sort_keys=True))]
    return enc


def digest(enc):
    """The sha256 of an encoding's canonical form: what the test process sends in place of a
    value whose encoding is over MAX_ENCODED, and what the parent compares it with (for == and
    != only)."""
    import hashlib
    import json

    data = json.dumps(canonical(enc), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def test_key(nodeid):
    """The key a test's outcomes and held asks carry: the first 16 hex digits of the sha256 of
    its node ID."""
    import hashlib

    return hashlib.sha256(nodeid.encode("utf-8", "surrogateescape")).hexdigest()[:16]
