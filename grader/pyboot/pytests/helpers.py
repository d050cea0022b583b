# Helpers of the host-side tests: real test modules to derive sentinels from, the sources as the
# verifier runs them, and a reader of what a copy changed in the test it copies.
import ast
import os
import random
import re

import held
import sentinels

BOOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "boot")

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "fixtures", "gen", "src")

# The demo's required tests (engine_test.go's `required`): they live in the test patch.
REQUIRED = [
    "tests/test_formatting.py::test_group_digits_negative",
    "tests/test_formatting.py::test_format_number_negative_int",
    "tests/test_formatting.py::test_format_number_negative_float",
]

# The rules draw at random: a test checks its property under each of these seeds.
SEEDS = range(20)


def rngs():
    return [random.Random(s) for s in SEEDS]


def read_txtar(name):
    """The files of a txtar archive of fixtures/gen/src, as {name: bytes}."""
    files, cur = {}, None
    with open(os.path.join(FIXTURES, name), "rb") as f:
        for line in f.read().splitlines(keepends=True):
            m = re.match(rb"^-- (.+) --\n?$", line)
            if m:
                cur = m.group(1).decode()
                files[cur] = b""
            elif cur is not None:
                files[cur] += line
    return files


def write_tree(root, files):
    for name, data in files.items():
        path = os.path.join(str(root), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
    return str(root)


def config(ws, ids, **kw):
    """The planter's configuration (pyboot.PlantInput, with its counts) and its workspace."""
    cfg = {"workspace": ws, "ids": list(ids), "twins": 1, "negated": 1}
    cfg.update(kw)
    return cfg


def load(ws, rel):
    return sentinels.load_module(ws, rel, ast)


def module(tmp_path, source, rel="tests/test_style.py"):
    """A test module of the given source in a fresh workspace, loaded as the bootstrap loads it."""
    ws = write_tree(tmp_path, {rel: source})
    return ws, load(ws, rel)


def read(ws, rel):
    with open(os.path.join(ws, rel), "rb") as f:
        return f.read()


def tests_of(tree):
    """{(class or None, name): FunctionDef} of a module's tests, as load_module finds them."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[(None, node.name)] = node
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[(node.name, sub.name)] = sub
    return out


def key_of(nodeid):
    parts = nodeid.split("::")
    name = parts[-1].split("[", 1)[0]
    return (parts[1] if len(parts) == 3 else None, name)


def dump(node):
    return ast.dump(node, include_attributes=False)


def joined(var, env):
    """A source as the verifier runs it: the file TestBootstrapHostTests writes from the Go source
    (env), or, when pytest is run by hand, boot/ joined in the order pyboot.go gives as var."""
    path = os.environ.get(env)
    if path:
        with open(path) as f:
            return f.read()
    with open(os.path.join(os.path.dirname(BOOT), "pyboot.go")) as f:
        m = re.search(var + r"\s*=\s*\[\]string\{([^}]*)\}", f.read())
    assert m, "pyboot.go no longer declares %s as a []string literal; set %s" % (var, env)
    parts = []
    for name in re.findall(r'"([^"]+)"', m.group(1)):
        with open(os.path.join(BOOT, name)) as f:
            parts.append(f.read())
    return "\n\n".join(parts)


def boot_source():
    return joined("bootOrder", "TENDER_BOOTSTRAP")


def planter_source():
    return joined("planterOrder", "TENDER_PLANTER")


def names_of(source, last_call):
    """The namespace a joined source defines, its last line (the call that starts it) left out:
    what its functions see in the verifier."""
    body = source.rstrip()
    assert body.endswith("\n" + last_call), "the source no longer ends with %s" % last_call
    ns = {"__name__": "tender_source"}
    exec(compile(body[: -len(last_call)], "<joined>", "exec"), ns)
    return ns


# --- what a planted module says: held sites read back ------------------------------------------


def binding(name=held.HELD_CALL):
    """The line hold_module ends a module with: the held call's name bound to the child's ask."""
    return ("%s = getattr(__import__('sys').modules.get('%s'), 'ask', None)\n" % (name, held.HELD_MODULE)).encode()


def held_calls(tree, name=held.HELD_CALL):
    """The held calls under a node: [(Call node, token)] of each `NAME('TOKEN', VALUE)`, and of
    each pair site's `NAME('TOKEN', VALUE, OTHER)`."""
    out = []
    for n in ast.walk(tree):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name and len(n.args) in (2, 3)
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str) and not n.keywords):
            out.append((n, n.args[0].value))
    return out


def message_of(stmt, n):
    """An assertion's message: an assert's, or a unittest call's argument after its n values."""
    if isinstance(stmt, ast.Assert):
        return stmt.msg
    call = stmt.value
    if len(call.args) > n:
        return call.args[n]
    return next((k.value for k in call.keywords if k.arg == "msg"), None)


def site_form(stmt, private, name=held.HELD_CALL):
    """What a top-level statement checks, the same whether it is held or not yet: for an
    assertion held_sites makes a site of, or a held site a planted module has in its place,
    ("held", operator, the literal's digest (a pair site's: the dump of its other value), the
    value's dump, the message's dump), with `not` in a truth value folded into the operator; for
    any other statement ("plain", its dump)."""
    calls = held_calls(stmt, name)
    if len(calls) == 1 and not isinstance(stmt, (ast.If, ast.With, ast.For, ast.While, ast.Try)):
        call, token = calls[0]
        op, enc = private[token]
        value, lit = call.args[1], None if op in ("truth", "falsy") else held.decode(enc)
        other = call.args[2] if len(call.args) == 3 else None
        msg = message_of(stmt, 1)
    else:
        sites = held.held_sites([stmt], ast)
        if not sites:
            return ("plain", dump(stmt))
        s = sites[0]
        op, lit, value, other = s.op, s.literal, s.value, s.other
        msg = message_of(stmt, 1 if s.method is None else held.UNITTEST_HELD[s.method.attr][1])
    while op in ("truth", "falsy") and isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        op, value = held.NEGATE[op], value.operand
    if other is not None:
        lit = dump(other)
    elif op not in ("truth", "falsy"):
        lit = held.digest(held.encode(lit))
    else:
        lit = None
    return ("held", op, lit, dump(value), dump(msg) if msg is not None else None)


def change(orig, new, private):
    """What a copy changed in the test it copies, both FunctionDef nodes (held or not):
    ("same",) for the same checks (its held sites with tokens of their own), ("negated", index)
    for one top-level assertion turned around (a held site's operator negated, `assert X` become
    `assert not (X)`, a unittest assertion become its opposite, a raises block become `if True:`), ("unguarded", indexes) for
    guards whose bodies became `pass`, ("rephrased",) for the same checks written another way
    (an assert as `if not (X): raise AssertionError`, a raises block as a try whose else raises),
    or None for anything else."""
    if dump(orig.args) != dump(new.args) or [dump(d) for d in orig.decorator_list] != [
            dump(d) for d in new.decorator_list] or len(orig.body) != len(new.body):
        return None
    a = [site_form(s, private) for s in orig.body]
    b = [site_form(s, private) for s in new.body]
    diffs = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    if not diffs:
        return ("same",)
    if all(isinstance(orig.body[i], ast.If) and isinstance(new.body[i], ast.If)
           and all(isinstance(s, ast.Pass) for s in new.body[i].body)
           and dump(orig.body[i].test) == dump(new.body[i].test) for i in diffs):
        return ("unguarded", diffs)
    if rephrased(orig, new, private):
        return ("rephrased",)
    if len(diffs) != 1:
        return None
    i = diffs[0]
    x, y = a[i], b[i]
    if x[0] == "held" and y[0] == "held":
        turned = "pair " + held.NEGATE[x[1][5:]] if x[1].startswith("pair ") else held.NEGATE.get(x[1])
        return ("negated", i) if turned == y[1] and x[2:] == y[2:] else None
    s, t = orig.body[i], new.body[i]
    same_msg = dump(getattr(s, "msg", None) or ast.Pass()) == dump(getattr(t, "msg", None) or ast.Pass())
    if isinstance(s, ast.Assert) and isinstance(t, ast.Assert) and same_msg:
        if isinstance(t.test, ast.UnaryOp) and isinstance(t.test.op, ast.Not) and dump(t.test.operand) == dump(s.test):
            return ("negated", i)
    if (sentinels.raises_block(s, ast) and isinstance(t, ast.If) and isinstance(t.test, ast.Constant)
            and t.test.value is True and not t.orelse and [dump(x) for x in s.body] == [dump(x) for x in t.body]):
        return ("negated", i)  # the raises block's body run as it is
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute):
        renamed = ast.parse(ast.unparse(s)).body[0]
        renamed.value.func.attr = sentinels.NEGATIONS.get(s.value.func.attr, "")
        if dump(renamed) == dump(t):
            return ("negated", i)
    return None


class Unrephrase(ast.NodeTransformer):
    """Writes a rephrased copy's checks back the way a test writes them: `if not (X): raise
    AssertionError(M)` as `assert X, M`, and a try whose one handler passes (or searches the
    exception's text for a pattern) and whose else raises as a raises block (Canon's form)."""

    def visit_If(self, node):
        self.generic_visit(node)
        t = node.test
        if not (isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and not node.orelse
                and len(node.body) == 1 and isinstance(node.body[0], ast.Raise)):
            return node
        exc = node.body[0].exc
        if isinstance(exc, ast.Name) and exc.id == "AssertionError":
            return ast.Assert(test=t.operand, msg=None)
        if isinstance(exc, ast.Call) and sentinels.base_name(exc.func) == "AssertionError" and len(exc.args) == 1:
            return ast.Assert(test=t.operand, msg=exc.args[0])
        return node

    def visit_Try(self, node):
        self.generic_visit(node)
        if len(node.handlers) != 1 or len(node.orelse) != 1 or not isinstance(node.orelse[0], ast.Raise) or (
                node.finalbody):
            return node
        h = node.handlers[0]
        match = None
        if len(h.body) == 1 and isinstance(h.body[0], ast.Assert) and isinstance(h.body[0].test, ast.Call):
            match = h.body[0].test.args[0]  # __import__('re').search(M, str(e)), written back as an assert
        elif not (len(h.body) == 1 and isinstance(h.body[0], ast.Pass)):
            return node
        return canon_raises(h.type, match, node.body)


def canon_raises(exc, match, body):
    call = ast.Call(func=ast.Name(id="RAISES", ctx=ast.Load()), args=[exc],
                    keywords=[ast.keyword(arg="match", value=match)] if match is not None else [])
    return ast.With(items=[ast.withitem(context_expr=call)], body=body)


class Canon(ast.NodeTransformer):
    """Every raises block (pytest.raises, assertRaises, assertRaisesRegex) in one form."""

    def visit_With(self, node):
        self.generic_visit(node)
        if not sentinels.raises_block(node, ast) or node.items[0].optional_vars is not None:
            return node
        exc, match = sentinels.raises_args(node.items[0].context_expr)
        return node if exc is None else canon_raises(exc, match, node.body)


def rephrased(orig, new, private):
    """Whether new has orig's checks, with some written another way (Unrephrase)."""
    import copy

    back = Canon().visit(Unrephrase().visit(copy.deepcopy(new)))
    fwd = Canon().visit(copy.deepcopy(orig))
    if dump(back) == dump(new) and dump(Canon().visit(copy.deepcopy(new))) == dump(new):
        return False  # nothing written another way
    if len(back.body) != len(fwd.body):
        return False
    return all(site_form(a, private) == site_form(b, private) for a, b in zip(fwd.body, back.body))
