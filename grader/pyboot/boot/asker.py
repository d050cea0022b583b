# The held comparisons' two ends (held.py says what they are). In the child, the module
# _tender_held, whose ask the planted test modules call: it sends the test's value to the parent
# and raises AssertionError when the parent says the comparison does not hold. In the parent,
# Asker, which holds the literals, compares, answers and keeps the record Tender reads.
#
# The exchange, one JSON object a line: the child sends {"t": token, "k": test key, "v": value}
# and the parent answers {"r": true|false}. When the parent cannot compare the value (an object
# it knows only by what it converts to, or not at all), it answers {"eval": op, "lits": [...]}:
# the literal among decoys of its shape, shuffled; the child compares its own object with each,
# by Python's rules, and sends {"t", "k", "told": [results]}; the parent then answers from the
# literal's result. Among them is the literal with an object of a class the child makes for the
# purpose in its place, or in an item's (foreign_variants): a value that claims to equal one of
# them lies about its equality.
import os

MAX_LINE = 8 << 20  # an exchange line longer than this is garbled
# Decoys of a literal the test's own object compares with: an object that claims equality with
# exactly one of them and the literal at random is right once in DECOYS + 1 tries, and fails the
# assertion (unresolved) the other times. One that claims them all is only noted: an honest
# equality may be that loose (boltons' OrderedMultiDict equals every dict with its keys).
DECOYS = 15
# Places inside a literal (items, a dict's values) where a foreign object stands in, besides the
# literal's own.
FOREIGN_SPOTS = 4


class Asker:
    """The parent's side: the held literals (token -> [operator, encoded literal], from the
    planter through Tender), the answers, and the record of every comparison by token and the
    test that asked (held_records in the end line)."""

    def __init__(self, held):
        import random

        self.held = held
        self.literals = {}  # token -> decoded literal
        self.decoys = {}  # literal's digest -> decoys: one set a value, whoever asks
        self.rng = random.SystemRandom()
        self.counts = {}  # (token, key) -> [matched, mismatched, decided in the test process, lies]
        self.pending = {}  # (token, key) -> (index of the literal among the values sent, operator)
        self.unknown = 0

    def run(self, ask_r, ans_w):
        import json

        buf = b""
        while True:
            try:
                chunk = os.read(ask_r, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            if len(buf) > MAX_LINE and b"\n" not in buf:
                buf = b""
                self.unknown += 1
                continue
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(raw.decode("utf-8"))
                    reply = self.answer(msg) if isinstance(msg, dict) else {"r": False}
                except Exception:
                    self.unknown += 1
                    reply = {"r": False}
                try:
                    write_all(ans_w, (json.dumps(reply, separators=(",", ":")) + "\n").encode())
                except OSError:
                    return

    def count(self, token, key, i):
        c = self.counts.setdefault((token, key), [0, 0, 0, 0])
        c[i] += 1

    def literal(self, token):
        if token not in self.literals:
            op, enc = self.held[token]
            self.literals[token] = decode(enc) if op not in ("truth", "falsy") else None
        return self.literals[token]

    def answer(self, msg):
        token, key = msg.get("t"), msg.get("k")
        if not isinstance(token, str) or not isinstance(key, str) or token not in self.held:
            self.unknown += 1
            return {"r": False}
        op = self.held[token][0]
        if "told" in msg:
            return self.told(token, key, msg["told"])
        enc = msg.get("v")
        if op.startswith("pair "):
            return self.pair(token, key, op[5:], enc, msg.get("w"))
        lit = self.literal(token)
        try:
            if isinstance(enc, list) and enc[:1] == ["h"]:
                if op not in ("==", "!="):
                    raise Undecidable()
                same = len(enc) > 1 and enc[1] == digest(self.held[token][1])
                r = same if op == "==" else not same
            else:
                r = compare(op, decode(enc), lit)
        except Undecidable:
            return self.evaluate(token, key, op, lit, enc, None, trusted_object(enc))
        self.count(token, key, 0 if r else 1)
        return {"r": r}

    def pair(self, token, key, op, a, b):
        """A pair site: both values the test computed, compared by their plain values. When one
        is an object the parent cannot compare and the other a plain value (a parametrized
        expected value, say), the object's own equality decides, asked among decoys of the plain
        value; with neither plain, the test process compares them (counted as decided there)."""
        try:
            if isinstance(a, list) and a[:1] == ["h"] or isinstance(b, list) and b[:1] == ["h"]:
                if op not in ("==", "!="):
                    raise Undecidable()
                same = isinstance(a, list) and isinstance(b, list) and (digest(a) if a[:1] != ["h"] else a[1]) == (
                    digest(b) if b[:1] != ["h"] else b[1])
                r = same if op == "==" else not same
            else:
                r = compare(op, decode(a), decode(b))
        except Undecidable:
            if op in ("==", "!="):
                for side, known, obj in ((0, b, a), (1, a, b)):  # side: which value is the test's object
                    lit = plain_value(known)
                    if lit is not NOTHING:
                        return self.evaluate(token, key, op, lit, obj, side, trusted_object(obj))
            self.pending[(token, key)] = (0, "pair", True, trusted_object(a) and trusted_object(b), (), 1, False)
            return {"eval": op, "lits": [], "pair": True}
        self.count(token, key, 0 if r else 1)
        return {"r": r}

    def evaluate(self, token, key, op, lit, obj, side=None, trusted=False):
        """Asks the test process to compare its own object (the value, or at a pair site the one
        on side; obj is its encoding), with the literal among decoys and foreign variants. At a
        pair site either side may be the test's own permissive object (mock.ANY, pytest.approx):
        a claim of a foreign variant there is only noted."""
        if op in ("truth", "falsy"):
            self.pending[(token, key)] = (0, op, False, False, (), 1, False)
            return {"eval": op, "lits": []}
        encs = [encode(lit)]
        if op == "==":  # != has no liar to catch: an honest value may well equal a decoy
            d = digest(encs[0])
            if d not in self.decoys:
                self.decoys[d] = decoys(lit, self.rng, DECOYS)
            encs += [encode(v) for v in self.decoys[d]]
            try:
                value = decode(obj)
            except Undecidable:
                value = None
            foreign = foreign_variants(encs[0], value, self.rng, FOREIGN_SPOTS)
            encs += foreign
        else:
            foreign = []
        # The foreign variants are asked first: an object that claims whatever it is first
        # compared with (a guess) claims one, every time, and is a liar, not one unlucky draw.
        first = list(range(len(encs) - len(foreign), len(encs)))
        rest = list(range(len(encs) - len(foreign)))
        self.rng.shuffle(first)
        self.rng.shuffle(rest)
        order = first + rest
        at_foreign = frozenset(range(len(foreign)))
        # A scalar literal's decoys are other values of its type, two letters or digits apart at
        # least: no honest equality holds for two of them and the literal (there are no dict
        # values to ignore), so claiming two is a lie as well.
        strict = op == "==" and scalar(lit)
        self.pending[(token, key)] = (order.index(0), op, side is not None, trusted, at_foreign, len(encs), strict)
        return {"eval": op, "lits": [encs[i] for i in order], "side": side or 0}

    def told(self, token, key, results):
        """What the test process's own comparison said. A value of the code under test's that
        claims to equal the literal with a foreign object in it (in its place, or in an item's)
        lies about its equality: no honest equality accepts an object of a class it has never
        seen, whose own equality is identity. A comparison that
        does not hold is a mismatch, as the parent's own would be; one that holds is counted as
        decided in the test process, even when the value also claimed decoys (an equality looser
        than the literal's, as boltons' OrderedMultiDict's, which ignores a dict's values)."""
        pending = self.pending.pop((token, key), None)
        if pending is None or not isinstance(results, list) or len(results) != pending[5]:
            self.unknown += 1
            return {"r": False}
        at, op, pair, trusted, foreign, _, strict = pending
        r = results[at]
        decided = 0 if trusted else 2  # a trusted object's own comparison (pytest.approx) is no news
        if op == "pair":
            self.count(token, key, decided if r is True else 1)
            return {"r": r is True}
        if any(results[i] is True for i in foreign) or strict and sum(1 for x in results if x is True) > 1:
            if not (pair and trusted):  # the code under test's object: it equals what it cannot equal
                self.count(token, key, 3)
                return {"r": False}
            self.count(token, key, decided)  # a permissive object of the test's own (mock.ANY)
            return {"r": r is True}
        if type(r) is not bool:
            self.count(token, key, 1)
            return {"r": False}
        if op == "falsy":
            r = not r
        self.count(token, key, decided if r else 1)
        return {"r": r}

    def records(self, limit=20000):
        """[[token, test key, matched, mismatched, decided in the test process, lies], ...]."""
        out = []
        for (token, key), c in sorted(self.counts.items())[:limit]:
            out.append([token, key] + c)
        return out


NOTHING = object()


def scalar(v):
    """Whether a literal is a str, bytes or number (not a bool, whose decoys there are none)."""
    return isinstance(v, (str, bytes, int, float, complex)) and not isinstance(v, bool)


def trusted_object(enc):
    """Whether an encoded value at a pair site holds only objects whose comparison the standard
    library, pytest or an evaluator's file defines (as the test process said), so that its claim
    of a decoy of the other side is a permissive matcher's (mock.ANY in a dict), not a lie."""
    if isinstance(enc, list) and enc[:1] == ["h"]:
        return False  # a value too big to send: compared in the test process, and said so
    todo = [enc]
    while todo:
        e = todo.pop()
        if not isinstance(e, list) or not e:
            continue
        if e[0] in ("x", "u"):
            if len(e) < 4 or e[3] is not True:
                return False
        elif e[0] in ("l", "t", "S", "F") and len(e) > 1 and isinstance(e[1], list):
            todo.extend(e[1])
        elif e[0] == "d" and len(e) > 1 and isinstance(e[1], list):
            for kv in e[1]:
                if isinstance(kv, list):
                    todo.extend(kv)
    return True


def plain_value(enc):
    """The parent's copy of an encoded value when it is plain through and through (no View or
    Opaque inside), else NOTHING."""
    try:
        v = decode(enc)
    except Undecidable:
        return NOTHING
    return NOTHING if has_view(v) else v


# Python's rules for the child's own comparison of its object with a literal sent back.
PY_OPS = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "is": lambda a, b: a is b, "is not": lambda a, b: a is not b,
    "in": lambda a, b: a in b, "not in": lambda a, b: a not in b, "contains": lambda a, b: b in a,
    "not contains": lambda a, b: b not in a,
    "not <": lambda a, b: not a < b, "not <=": lambda a, b: not a <= b, "not >": lambda a, b: not a > b,
    "not >=": lambda a, b: not a >= b,
}


def held_install(ask_w, ans_r, trusted=None):
    """The child's side: the module _tender_held, and the function that tells it which test is
    running (Tender's plugin calls it as each test's call starts and ends). trusted says of a
    builtin value's subclass with a comparison of its own whether that comparison is the
    standard library's or pytest's (values.py)."""
    import _thread
    import json
    import types

    lock = _thread.allocate_lock()
    write, read = os.write, os.read
    state = {"key": "", "buf": b""}

    def exchange(obj):
        data = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
        while data:
            n = write(ask_w, data)
            data = data[n:]
        while b"\n" not in state["buf"]:
            chunk = read(ans_r, 1 << 16)
            if not chunk:
                raise AssertionError("Tender's held comparison got no answer: its channel was closed")
            state["buf"] += chunk
        line, state["buf"] = state["buf"].split(b"\n", 1)
        return json.loads(line.decode())

    def sendable(value):
        enc = encode(value, trusted=trusted)
        if len(json.dumps(enc, separators=(",", ":"))) > MAX_ENCODED:
            enc = ["h", digest(enc)]
        return enc

    def ask(token, value, *other):
        """Whether the held comparison `token` holds for value (and, at a pair site, the other
        value the test computed); AssertionError when it does not."""
        msg = {"t": token, "k": state["key"], "v": sendable(value)}
        if other:
            msg["w"] = sendable(other[0])
        raised = None
        with lock:
            reply = exchange(msg)
            if "eval" in reply:
                told, raised = evaluate(value, reply, other)
                reply = exchange({"t": token, "k": msg["k"], "told": told})
        if raised is not None:
            raise raised  # as Python's own comparison would have
        if reply.get("r") is True:
            return True
        raise AssertionError("Tender's held comparison %s does not hold for the value the test computed: %s "
                             "(the expected value is held by Tender, outside the test process)" % (token, shown(value)))

    def evaluate(value, reply, other):
        """The test's own object compared by Python's rules, in this process: the results, and
        the exception the comparison raised (it is raised again once the parent answered)."""
        op = reply.get("eval")
        if op in ("truth", "falsy"):
            try:
                return [bool(value)], None
            except Exception as e:
                return [None], e
        f = PY_OPS.get(op)
        if reply.get("pair"):
            try:
                r = f(value, other[0])
                return [r if type(r) is bool else bool(r)], None
            except Exception as e:
                return [None], e
        obj = other[0] if reply.get("side") == 1 and other else value
        out = []
        for lit in reply.get("lits") or []:
            try:
                r = f(obj, decode(lit, foreign=Foreign))
            except Exception:
                r = None
            out.append(r if type(r) is bool else None)
        return out, None

    class Foreign:
        """An object no code under test has seen: it equals itself alone, by identity."""

        __slots__ = ()

    def running(key):
        state["key"] = key or ""

    mod = types.ModuleType(HELD_MODULE)
    mod.ask = ask
    return mod, running


def shown(value):
    try:
        text = repr(value)
    except Exception:
        return "a value of type %s" % type(value).__name__
    return text if len(text) <= 200 else text[:200] + "..."
