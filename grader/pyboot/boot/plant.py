# The planter: Tender's own step in a verifier (see sandbox.Spec's Plant). It runs as root under
# python3 -I -B once the evaluator's files are written, while no process of the verifier user
# lives, reads its configuration (the required test IDs) on stdin and the workspace as its argument, plants the sentinels and the
# held sites (sentinels.py, held.py) into the test modules, which stay root's and read-only to
# the tests, and writes the plan on stdout as one JSON object: what Tender knows and the test
# process never sees (the held literals). It imports nothing from the workspace and runs none
# of its code. A configuration or workspace it cannot plant in gives {"error": ...}, never a
# traceback on stdout.
import sys


def plant_main():
    import json

    try:
        cfg = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        cfg["workspace"] = sys.argv[1]
        out = make_sentinels(cfg)
    except Exception as e:  # a broken configuration or workspace: no verdict
        out = {"error": {"stage": "plan", "type": type(e).__name__}}
    sys.stdout.write(json.dumps(out, separators=(",", ":"), sort_keys=True))
    sys.stdout.flush()
