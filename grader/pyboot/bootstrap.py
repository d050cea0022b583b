# Tender's pytest bootstrap. It is run as `python3 -I -B -c <this file>` inside a verifier,
# with its configuration on standard input, and it is the first code to run there.
#
# Two processes:
#   - the parent never imports anything from the workspace and never runs candidate code.
#     It reads the configuration (required test IDs, a nonce) from stdin, writes the forgery
#     sentinels into the test modules, and is the only writer of the control channel (the
#     exec's real stdout): one "plan" line, the relayed tripwire hits, one "end" line with the
#     child's exit status and the digest of the report as it stood when the child ended.
#   - the child imports pytest and its plugins before the workspace is on sys.path, marks the
#     absent standard-library names as missing, clears PYTEST_*/PYTHON* variables, installs
#     an audit hook (it cannot be removed), and runs pytest on the test IDs it gets from the
#     parent through a pipe (shuffled; they run in file and definition order): the IDs are
#     never on a command line or in a file.
#
# The child is forked before the configuration is read, so its memory never holds the
# required IDs apart from the sentinels, or the nonce. The parent makes itself non-dumpable,
# so the child cannot read its memory either. Everything the child reports is a hint
# (it runs the candidate's code); the parent's plan and end lines are evidence.
import os
import sys

CTRL = "TENDER-CONTROL"


def main():
    ctrl = os.dup(1)
    go_r, go_w = os.pipe()
    hit_r, hit_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ctrl)
        os.close(go_w)
        os.close(hit_r)
        child(go_r, hit_w)
        os._exit(70)
    os.close(go_r)
    os.close(hit_w)
    parent(pid, ctrl, go_w, hit_r)


# ---------------------------------------------------------------------------------------
# the parent


def parent(pid, ctrl, go_w, hit_r):
    import json

    nondumpable()
    nonce = ""

    def emit(kind, obj):
        line = "%s %s %s %s\n" % (CTRL, nonce, kind, json.dumps(obj, separators=(",", ":"), sort_keys=True))
        write_all(ctrl, line.encode())

    try:
        cfg = json.loads(read_all(0).decode("utf-8"))
        nonce = cfg["nonce"]
        ws, tender, junit = (os.environ[k] for k in ("TENDER_WORKSPACE", "TENDER_DIR", "TENDER_JUNIT"))
        cfg["workspace"], cfg["junit"] = ws, junit
        unlink(junit)  # a report must be written by this run, not planted before it
        plan = make_sentinels(cfg)
        emit("plan", plan["public"])
        ids = list(cfg["ids"]) + plan["ids"]
        import random

        random.SystemRandom().shuffle(ids)
        go = {
            "args": pytest_args(cfg) + ids,
            "plugins": cfg.get("plugins") or [],
            "paths": plan["paths"] + [os.path.join(ws, p) for p in cfg.get("python_path") or []],
            "workspace": ws,
            "tender": tender,
            "junit": junit,
            "watch": plan["files"],
        }
        write_all(go_w, json.dumps(go).encode())
    except Exception as e:  # a broken configuration or workspace: no verdict
        emit("error", {"stage": "plan", "type": type(e).__name__})
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os._exit(3)
    finally:
        os.close(go_w)

    hits = {"n": 0}
    outcomes, dups = {}, [0]

    def relay():
        buf = b""
        while True:
            try:
                chunk = os.read(hit_r, 65536)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                try:
                    hit = json.loads(raw.decode("utf-8"))
                except ValueError:
                    hit = {"kind": "garbled"}
                if not isinstance(hit, dict):
                    continue
                if hit.get("kind") == "outcome" and isinstance(hit.get("what"), str) and len(outcomes) < 200000:
                    # One outcome a test, as the test process saw it: the report must agree.
                    key, _, outcome = hit["what"].partition(":")
                    if key in outcomes:
                        dups[0] += 1
                    outcomes[key] = outcome
                    continue
                hits["n"] += 1
                if hits["n"] <= 200:
                    emit("hit", {k: hit[k] for k in ("kind", "what") if isinstance(hit.get(k), str)})

    import threading

    t = threading.Thread(target=relay, daemon=True)
    t.start()
    _, status = os.waitpid(pid, 0)
    # The report as it stood when the test process ended: before anything else runs here.
    junit_digest = file_sha256(cfg["junit"])
    # The stream ends when the last holder of its write end exits: the test process, and any
    # process it forked. What is still in the pipe is read to the end, however loaded the
    # machine; a forked process that keeps the stream open leaves it unfinished.
    t.join(10.0)
    end = {"hits": hits["n"], "junit_sha256": junit_digest, "stream_ended": not t.is_alive()}
    if os.WIFSIGNALED(status):
        end["signal"] = os.WTERMSIG(status)
        code = 128 + end["signal"]
    else:
        code = os.WEXITSTATUS(status)
    end["exit"] = code
    import hashlib

    passed = sorted(k for k, v in outcomes.items() if v == "passed")
    end["outcomes"], end["outcome_dups"] = len(outcomes), dups[0]
    end["passed_sha256"] = hashlib.sha256("\n".join(passed).encode()).hexdigest()
    emit("end", end)
    os._exit(code)


def pytest_args(cfg):
    """pytest's command line: Tender's settings only. No ini file of the candidate's is read
    (-c /dev/null), no plugin loads by itself, test modules and conftests are imported by
    path (importlib), and the cache is off."""
    args = ["-c", os.devnull, "--rootdir", cfg["workspace"], "-o", "addopts=", "-o", "junit_family=xunit1",
            "-o", "junit_logging=no", "-o", "junit_log_passing_tests=false", "-p", "no:cacheprovider",
            "--import-mode=importlib", "--junitxml", cfg["junit"], "-q", "-rfE", "--tb=short", "--color=no"]
    for p in cfg.get("plugins") or []:
        args += ["-p", p]
    return args


def unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def nondumpable():
    # PR_SET_DUMPABLE 0: a process of the same user can neither ptrace this one nor read its
    # /proc/<pid>/mem, so the child cannot learn the nonce.
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass


def read_all(fd):
    out = []
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            return b"".join(out)
        out.append(b)


def write_all(fd, data):
    while data:
        n = os.write(fd, data)
        data = data[n:]


def file_sha256(path):
    import hashlib

    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return ""


# ---------------------------------------------------------------------------------------
# the sentinels


def make_sentinels(cfg):
    """Writes twins and mutants of the pair's own tests into their modules.

    A twin is a verbatim copy of a required test under a new name: when the test passes, its
    twin must pass. A mutant is a copy whose expected value in one top-level equality
    assertion is replaced by a random value of the same shape: it must not pass. Names follow
    the module's own style; each sentinel sits right before or right after its original.
    """
    import ast
    import random

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
    for word in (b"request.node", b"request.function", b"_getframe", b"inspect.", b"__name__", b"snapshot", b"__qualname__"):
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
            if isinstance(n, ast.Constant) and not isinstance(n.value, bool) and isinstance(n.value, (str, bytes, int, float)):
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
        if a != b and a.isalnum() and b.isalnum() and (a.isdigit() == b.isdigit()) and not (i == 0 and b == "0" and not quote):
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


# ---------------------------------------------------------------------------------------
# the child


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


LETHAL = {1, 2, 3, 6, 9, 11, 15, 19}


class Tripwires:
    """The audit hook and the checks around each test. They record what no honest test run
    does to the test machinery. Hits carry only Tender's own words (a kind and a fixed
    'what'), never a path or a value. Trust is decided by code-object identity, captured
    before any candidate code ran, never by a file name (which compile() lets anyone choose)."""

    def __init__(self, fd, go):
        import importlib._bootstrap as boot

        import _pytest.config
        import _pytest.junitxml
        from _pytest.assertion.rewrite import AssertionRewritingHook

        self.fd = fd
        self.tender = os.path.realpath(go["tender"]) + os.sep
        self.home = os.path.join(self.tender, "home") + os.sep
        self.junit = os.path.realpath(go["junit"])
        self.watch = set(os.path.realpath(p) for p in go["watch"])
        self.workspace = os.path.realpath(go["workspace"]) + os.sep
        self.pid = os.getpid()
        self.pgid = os.getpgid(0)
        self.busy = False
        self.seen = set()
        # The only frames that may run a test module's code, and write the report.
        self.exec_callers = (boot._call_with_frames_removed.__code__, AssertionRewritingHook.exec_module.__code__)
        self.report_writer = _pytest.junitxml.LogXML.pytest_sessionfinish.__code__
        pm = _pytest.config.PytestPluginManager
        self.conftest_callers = (pm.consider_conftest.__code__, pm._importconftest.__code__)
        self.genuine = {}  # test module path -> code objects compiled by the import system
        self.outcomes = {}  # nodeid -> "passed" or "not", as the phases came in
        self.write = os.write  # taken now: the code under test may replace os.write later
        self.snapshot = snapshot_machinery()
        self.builtins = snapshot_builtins()
        self.handlers = {
            "open": self.on_open,
            "os.rename": self.on_move,
            "os.replace": self.on_move,
            "os.link": self.on_move,
            "os.symlink": self.on_move,
            "os.remove": self.on_remove,
            "os.rmdir": self.on_remove,
            "os.truncate": self.on_remove,
            "os.kill": self.on_kill,
            "os.killpg": self.on_killpg,
            "exec": self.on_exec,
            "object.__setattr__": self.on_setattr,
            "ctypes.dlopen": self.note("ctypes", "loaded a C library through ctypes"),
            "ctypes.call_function": self.note("ctypes", "called a C function through ctypes"),
            "gc.get_objects": self.note("gc", "walked every object of the interpreter"),
            "gc.get_referrers": self.note("gc", "walked the referrers of an object"),
            "sys._current_frames": self.note("frames", "read the frames of every thread"),
            "sys.settrace": self.note("trace", "installed a trace function"),
            "sys.setprofile": self.note("trace", "installed a profile function"),
        }

    def hook(self, event, args):
        h = self.handlers.get(event)
        if h is None or self.busy:
            return
        self.busy = True
        try:
            h(args)
        except Exception:
            pass
        finally:
            self.busy = False

    def send(self, kind, what):
        if (kind, what) in self.seen:
            return
        self.seen.add((kind, what))
        try:
            self.write(self.fd, ('{"kind":"%s","what":"%s"}\n' % (kind, what)).encode())
        except OSError:
            pass

    def note(self, kind, what):
        return lambda args: self.send("note:" + kind, what)

    def outcome(self, report):
        """Keeps each test's outcome as pytest reports it, phase by phase, and sends it when the
        test is done: the parent compares the report file with these."""
        import hashlib

        state = self.outcomes.setdefault(report.nodeid, "passed")
        if not report.passed:
            state = "not"
        self.outcomes[report.nodeid] = state
        if report.when == "teardown":
            key = hashlib.sha256(report.nodeid.encode("utf-8", "surrogateescape")).hexdigest()[:16]
            try:
                self.write(self.fd, ('{"kind":"outcome","what":"%s:%s"}\n' % (key, state)).encode())
            except OSError:
                pass

    def guarded(self, path):
        if not isinstance(path, (str, bytes)):
            return None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        p = os.path.realpath(path)
        if p == self.junit:
            return "report"
        if p.startswith(self.tender) and not p.startswith(self.home):
            return "tender"
        if p in self.watch or self.is_test_file(p):
            return "test"
        return None

    def is_test_file(self, p):
        """A test module or conftest of the workspace, by the names pytest collects: what no
        honest test run rewrites while it runs."""
        if not p.startswith(self.workspace) or not p.endswith(".py"):
            return False
        name = os.path.basename(p)
        return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"

    def evaluator_conftest(self, frame, plugin):
        """Whether pytest itself is registering an evaluator's conftest: the two frames below
        are pytest's own conftest loader, the module's file is an evaluator file, and its hooks
        were compiled from that file."""
        import types

        if frame.f_code is not self.conftest_callers[0] or frame.f_back is None or frame.f_back.f_code is not self.conftest_callers[1]:
            return False
        if not isinstance(plugin, types.ModuleType) or not isinstance(getattr(plugin, "__file__", None), str):
            return False
        path = os.path.realpath(plugin.__file__)
        if not self.evaluator_file(path):
            return False
        for k, v in list(vars(plugin).items()):
            code = getattr(v, "__code__", None)
            if k.startswith("pytest_") and (code is None or os.path.realpath(code.co_filename) != path):
                return False
        return True

    def evaluator_file(self, p):
        """A file of the evaluator's by the default restored paths: a test file, or anything
        under a tests/ or test/ directory."""
        if not p.startswith(self.workspace):
            return False
        parts = p[len(self.workspace):].split(os.sep)
        return self.is_test_file(p) or "tests" in parts[:-1] or "test" in parts[:-1]

    def on_open(self, args):
        path, mode, flags = args[0], args[1], args[2]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
        if not writing:
            return
        what = self.guarded(path)
        if what == "report" and sys._getframe(2).f_code is self.report_writer:
            return  # pytest's junitxml, writing the report at the end of the session
        if what:
            self.send("write", what)

    def on_move(self, args):
        for p in args[:2]:
            what = self.guarded(p)
            if what:
                self.send("write", what)

    def on_remove(self, args):
        what = self.guarded(args[0])
        if what:
            self.send("write", what)

    def on_kill(self, args):
        pid, sig = args[0], args[1]
        if sig in LETHAL and pid in (0, -1, 1, self.pid, -self.pgid, os.getppid()):
            self.send("signal", "own process group")

    def on_killpg(self, args):
        pgid, sig = args[0], args[1]
        if sig in LETHAL and pgid in (0, self.pgid):
            self.send("signal", "own process group")

    def on_exec(self, args):
        # Compiling a test module is honest (astroid parses its own test data). Running the
        # code of one of this check's test modules is the import system's job alone: its code
        # objects become the genuine ones each test is checked against. Anyone else running
        # it is an import hook that rewrites tests.
        code = args[0]
        fn = getattr(code, "co_filename", None)
        if not isinstance(fn, str) or fn.startswith("<"):
            return
        p = os.path.realpath(fn)
        if p not in self.watch:
            return
        if sys._getframe(2).f_code in self.exec_callers and code.co_name == "<module>":
            self.genuine[p] = list(nested_codes(code))
        else:
            self.send("recompile", "test module")

    def on_setattr(self, args):
        obj, name = args[0], args[1]
        if name == "__code__":
            code = getattr(obj, "__code__", None)
            fn = getattr(code, "co_filename", "")
            if isinstance(fn, str) and (os.path.realpath(fn) in self.watch or self.is_test_file(os.path.realpath(fn)) or "_pytest" in fn or "pluggy" in fn):
                self.send("patch", "test or pytest function code")
        elif isinstance(obj, type) and getattr(obj, "__module__", "").startswith(("_pytest", "pytest", "pluggy")):
            self.send("patch", "pytest class")

    def check_machinery(self):
        # Only what existed when the child started counts: pytest's own plugins add modules
        # and attributes as they load (legacypath adds Config.rootdir, for instance).
        now = snapshot_machinery()
        changed = [k for k, v in self.snapshot.items() if now.get(k) != v]
        if any(k[0].startswith(("_pytest", "pytest", "pluggy")) for k in changed):
            self.send("patch", "pytest or pluggy internals")
        if any(k[0].startswith("unittest") for k in changed):
            self.send("patch", "unittest internals")

    def check_builtins(self):
        """Replaced builtins (an all() that is always true for a test's frame) and standard
        functions (a math.isclose that always agrees) are looked for when collection ends, before
        any test ran, and when the session ends, after every fixture is torn down: a test's own
        monkeypatch of one is undone by then."""
        now = snapshot_builtins()
        if any(now.get(k) != v for k, v in self.builtins.items()):
            self.send("patch", "builtins")

    def check_loaders(self, items):
        import importlib.machinery

        from _pytest.assertion.rewrite import AssertionRewritingHook

        seen = set()
        for item in items:
            mod = getattr(item, "module", None)
            if mod is None or id(mod) in seen:
                continue
            seen.add(id(mod))
            loader = getattr(getattr(mod, "__spec__", None), "loader", None)
            if type(loader) not in (importlib.machinery.SourceFileLoader, AssertionRewritingHook) or any(
                    callable(v) for v in getattr(loader, "__dict__", {}).values()):
                self.send("loader", "test module loaded by a foreign importer")

    def genuine_code(self, item):
        """The code object the import system compiled for item's test function; None when
        the item is not a test of this check's modules, False when there is none."""
        mod = getattr(item, "module", None)
        fn = getattr(mod, "__file__", None)
        if not fn or os.path.realpath(fn) not in self.watch or not hasattr(item, "function"):
            return None
        name = getattr(item, "originalname", None) or item.name
        cls = getattr(item, "cls", None)
        qual = cls.__qualname__ + "." + name if cls is not None else name
        codes = [c for c in self.genuine.get(os.path.realpath(fn), ()) if c.co_qualname == qual]
        return codes[-1] if codes else False

    def watch_registrations(self, pm_class):
        """Plugins are pytest's to register (builtins, conftests, -p): a registration from a
        module of the workspace that is not the evaluator's is the code under test."""
        original = pm_class.register
        wire = self

        def register(pm, plugin, name=None):
            # An evaluator's conftest is loaded lazily, sometimes while the code under test is
            # on the stack (a warning it raised asks for the hooks of a directory): it is the
            # evaluator's, whoever caused the load.
            if wire.evaluator_conftest(sys._getframe(1), plugin):
                return original(pm, plugin, name)
            # Anywhere on the stack: pm.import_plugin() from the candidate's code registers
            # from pytest's own frame.
            f = sys._getframe(1)
            while f is not None:
                fn = f.f_code.co_filename
                if not fn.startswith("<"):
                    fn = os.path.realpath(fn)
                    if fn.startswith(wire.workspace) and not wire.evaluator_file(fn):
                        wire.send("plugin", "a pytest plugin of the code under test")
                        break
                f = f.f_back
            return original(pm, plugin, name)

        pm_class.register = register


def nested_codes(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            yield from nested_codes(c)


def snapshot_machinery():
    """The identity of every module-level name and class attribute of pytest and pluggy, and of
    the code of unittest (a test's verdict rests on TestCase's assertions as much as on pytest:
    a candidate that makes every assert method pass needs to know no test). Of unittest, plain
    values are left out: a project's conftest may set TestCase.maxDiff."""
    snap = {}
    for name, mod in list(sys.modules.items()):
        if mod is None:
            continue
        dunders = False  # a class's own hooks: __init_subclass__ could rewrite each TestCase subclass
        if name.startswith(("_pytest", "pytest", "pluggy")):
            keep = lambda v: True  # noqa: E731
        elif (name == "unittest" or name.startswith("unittest.")) and not name.startswith("unittest.mock"):
            keep = lambda v: not isinstance(v, (int, float, str, bytes, type(None)))  # noqa: E731
            dunders = True
        else:
            continue
        for k, v in list(getattr(mod, "__dict__", {}).items()):
            if k.startswith("__"):
                continue
            if keep(v):
                snap[(name, k)] = id(v)
            if isinstance(v, type) and getattr(v, "__module__", None) == name:
                for ck, cv in list(vars(v).items()):
                    if (dunders or not ck.startswith("__")) and ck not in ("__dict__", "__weakref__") and keep(cv):
                        snap[(name, k, ck)] = id(cv)
    for k in HONEST_REBINDS:
        snap.pop(k, None)
    return snap


def snapshot_builtins():
    """The identity of each builtin but those honest code rebinds (gettext's _, a site's exit,
    mocks of open, print and input), and of each function and class of the standard modules
    tests compare with (math.isclose, re.fullmatch, operator.eq, ...)."""
    import builtins
    import importlib

    snap = {("builtins", k): id(v) for k, v in list(vars(builtins).items()) if k not in HONEST_BUILTINS}
    for name in ASSERTING_MODULES:
        mod = importlib.import_module(name)
        for k, v in list(vars(mod).items()):
            if not k.startswith("_") and callable(v):
                snap[(name, k)] = id(v)
    return snap


HONEST_BUILTINS = {"_", "open", "print", "input", "exit", "quit", "help", "copyright", "credits", "license",
                   "breakpoint", "__spec__", "__loader__"}

# Standard modules whose functions decide a comparison in a test.
ASSERTING_MODULES = ("math", "cmath", "operator", "re", "difflib", "fractions", "decimal", "collections",
                     "itertools", "functools", "posixpath", "string", "json")


# What pytest itself rebinds during an honest run (found by running honest suites with the
# check on: the demo and real projects). Everything else must stay as it was.
HONEST_REBINDS = {
    ("_pytest.config", "Config", "_getini_unknown_type"),  # legacypath
    ("_pytest.debugging", "pytestPDB", "_pluginmanager"),  # debugging's configure
    ("_pytest.debugging", "pytestPDB", "_config"),
    ("_pytest.debugging", "pytestPDB", "_saved"),
    ("_pytest.assertion.util", "_reprcompare"),  # assertion's runtest hooks
    ("_pytest.assertion.util", "_assertion_pass"),
    ("_pytest.assertion.util", "_config"),
}


def tender_plugin(wire):
    """Tender's pytest plugin: the checks that run around collection and around each test."""
    import pytest

    class TenderPlugin:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, session, config, items):
            """The tests run in the order pytest gives them when it collects each file whole:
            files by path, then as defined, parameter sets in order. The IDs arrive shuffled, and
            some projects' tests depend on their order (astroid's test_do_not_load_twice fails
            when another test loaded its module first)."""

            def key(item):
                path, line, _ = item.location
                indices = getattr(getattr(item, "callspec", None), "indices", None) or {}
                return (path, -1 if line is None else line, sorted(indices.items()))

            items.sort(key=key)

        def pytest_collection_finish(self, session):
            wire.check_loaders(session.items)
            wire.check_machinery()
            wire.check_builtins()

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session):
            wire.check_machinery()
            wire.check_builtins()  # after the runner tore down the session's fixtures

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_logreport(self, report):
            wire.outcome(report)

        @pytest.hookimpl(hookwrapper=True, tryfirst=True)
        def pytest_runtest_call(self, item):
            """A test of this check must run its own code: the code object the import system
            compiled for it. A test that passes without that code ever starting was replaced."""
            target = wire.genuine_code(item)
            if target is None:
                yield
                return
            ran = [False]
            before = sys.getprofile()

            def watch(frame, event, arg):
                if event == "call" and frame.f_code is target:
                    ran[0] = True
                    wire.busy = True
                    sys.setprofile(before)
                    wire.busy = False

            wire.busy = True  # Tender's own profile function is no tripwire
            sys.setprofile(watch)
            wire.busy = False
            outcome = yield
            if sys.getprofile() is watch:
                wire.busy = True
                sys.setprofile(before)
                wire.busy = False
            if outcome.excinfo is None and not ran[0]:
                wire.send("bypass", "a test passed without its own code running")
            wire.check_machinery()  # a patch made for one test and undone later is seen here

    return TenderPlugin()


main()
