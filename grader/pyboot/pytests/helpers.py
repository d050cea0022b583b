# Helpers of the host-side tests: real test modules to derive sentinels from, and a reader of
# what a sentinel changed in its copy.
import ast
import copy
import os
import random
import re

import sentinels

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
    """The configuration as the parent holds it after reading stdin, with pyboot.NewConfig's
    counts."""
    cfg = {"workspace": ws, "ids": list(ids), "twins": 2, "mutants": 3, "near": 6, "negated": 3}
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


def change(orig, new):
    """What a copy changed in its original, both FunctionDef nodes: ("same",) for a verbatim copy,
    ("constant", index, old, new) for one expected value replaced in top-level statement index,
    ("negated", index) for one top-level assertion turned around, or None for anything else."""
    if dump(orig.args) != dump(new.args) or [dump(d) for d in orig.decorator_list] != [
            dump(d) for d in new.decorator_list] or len(orig.body) != len(new.body):
        return None
    diffs = [i for i, (a, b) in enumerate(zip(orig.body, new.body)) if dump(a) != dump(b)]
    if not diffs:
        return ("same",)
    if len(diffs) != 1:
        return None
    i = diffs[0]
    a, b = orig.body[i], new.body[i]
    if isinstance(a, ast.Assert) and isinstance(b, ast.Assert) and dump(a.msg or ast.Pass()) == dump(
            b.msg or ast.Pass()):
        if isinstance(b.test, ast.UnaryOp) and isinstance(b.test.op, ast.Not) and dump(b.test.operand) == dump(
                a.test):
            return ("negated", i)
    if isinstance(a, ast.Expr) and isinstance(a.value, ast.Call) and isinstance(a.value.func, ast.Attribute):
        renamed = copy.deepcopy(a)
        renamed.value.func.attr = sentinels.NEGATIONS.get(a.value.func.attr, "")
        if dump(renamed) == dump(b):
            return ("negated", i)
    olds = [n for n in ast.walk(a)]
    news = [n for n in ast.walk(b)]
    if len(olds) != len(news):
        return None
    changed = [(x, y) for x, y in zip(olds, news) if isinstance(x, ast.Constant) and isinstance(y, ast.Constant)
               and (type(x.value), x.value) != (type(y.value), y.value)]
    rest = [(x, y) for x, y in zip(olds, news) if type(x) is not type(y)]
    if len(changed) == 1 and not rest:
        return ("constant", i, changed[0][0].value, changed[0][1].value)
    return None

