# The control channel, in the parent: the lines it writes for Go (grader/pyboot/control.go reads
# them), and Relay, its reader of the child's stream of tripwire hits and test outcomes. Nothing
# here runs in the child. Tested on the host (pytests/test_control.py, and host_test.go, where Go
# parses what these functions write).
import os

CTRL = "TENDER-CONTROL"


def control_line(nonce, kind, obj):
    """One control line: compact JSON with sorted keys, so that a line is one line."""
    import json

    return ("%s %s %s %s\n" % (CTRL, nonce, kind, json.dumps(obj, separators=(",", ":"), sort_keys=True))).encode()


class Relay:
    """Reads the child's stream (one JSON object a line) to its end. A test's outcome is kept,
    one a test, for the end line; any other object is a tripwire hit, relayed through emit as a
    hit line (the first 200 of them; all are counted)."""

    max_hits = 200
    max_outcomes = 200000

    def __init__(self, emit):
        import json

        self.json, self.emit = json, emit
        self.hits, self.dups, self.outcomes = 0, 0, {}
        self.buf = b""

    def run(self, fd):
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.feed(chunk)

    def feed(self, chunk):
        self.buf += chunk
        while b"\n" in self.buf:
            raw, self.buf = self.buf.split(b"\n", 1)
            self.line(raw)

    def line(self, raw):
        try:
            hit = self.json.loads(raw.decode("utf-8"))
        except ValueError:
            hit = {"kind": "garbled"}
        if not isinstance(hit, dict):
            return
        if hit.get("kind") == "outcome" and isinstance(hit.get("what"), str) and len(self.outcomes) < self.max_outcomes:
            # One outcome a test, as the test process saw it: the report must agree.
            key, _, outcome = hit["what"].partition(":")
            if key in self.outcomes:
                self.dups += 1
            self.outcomes[key] = outcome
            return
        self.hits += 1
        if self.hits <= self.max_hits:
            self.emit("hit", {k: hit[k] for k in ("kind", "what") if isinstance(hit.get(k), str)})

    def end(self, status, junit_digest, stream_ended):
        """The end line's object for the child's wait status, and the exit code the bootstrap
        ends with: the child's, or 128 + the signal that killed it."""
        import hashlib

        end = {"hits": self.hits, "junit_sha256": junit_digest, "stream_ended": stream_ended}
        if os.WIFSIGNALED(status):
            end["signal"] = os.WTERMSIG(status)
            code = 128 + end["signal"]
        else:
            code = os.WEXITSTATUS(status)
        end["exit"] = code
        passed = sorted(k for k, v in self.outcomes.items() if v == "passed")
        end["outcomes"], end["outcome_dups"] = len(self.outcomes), self.dups
        end["passed_sha256"] = hashlib.sha256("\n".join(passed).encode()).hexdigest()
        return end, code
