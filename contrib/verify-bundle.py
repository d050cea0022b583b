#!/usr/bin/python3
"""Check a Tender evidence bundle without Tender: the DSSE signature (PAE, ed25519 through
openssl) and every file's sha256. Needs only python3's standard library and openssl >= 3.0.

usage: verify-bundle.py BUNDLE_DIR PUBLIC_KEY.pem [PREDICATE_TYPE]

Exit 0 when the envelope is signed by the key, its statement is an in-toto v1 statement of the
predicate type (default https://tender.dev/evidence/v2), and the bundle holds exactly the
subjects' files with their digests; exit 1, with one line per problem, otherwise.
"""
import base64, hashlib, json, os, posixpath, stat, subprocess, sys, tempfile

IN_TOTO = "application/vnd.in-toto+json"


def pae(payload_type, payload):  # DSSE v1 pre-authentication encoding
    t = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def signature_ok(key, message, sig):
    with tempfile.TemporaryDirectory() as tmp:
        msg, sg = os.path.join(tmp, "pae"), os.path.join(tmp, "sig")
        open(msg, "wb").write(message)
        open(sg, "wb").write(sig)
        cmd = ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", key, "-rawin", "-in", msg, "-sigfile", sg]
        return subprocess.run(cmd, capture_output=True).returncode == 0


def files_on_disk(root):
    found, bad = set(), []
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            rel = os.path.relpath(os.path.join(d, name), root).replace(os.sep, "/")
            mode = os.lstat(os.path.join(d, name)).st_mode
            if stat.S_ISLNK(mode) or not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                bad.append(rel + ": not a regular file or directory")
            elif stat.S_ISREG(mode) and rel != "bundle.dsse.json":
                found.add(rel)
    return found, bad


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def statement(root, key, want_type):
    """The signed statement, or an error line."""
    env = json.load(open(os.path.join(root, "bundle.dsse.json"), "rb"))
    if env.get("payloadType") != IN_TOTO or len(env.get("signatures") or []) != 1:
        return None, "bundle.dsse.json: want an in-toto payload with exactly one signature"
    payload = base64.b64decode(env["payload"], validate=True)
    sig = base64.b64decode(env["signatures"][0]["sig"], validate=True)
    if not signature_ok(key, pae(env["payloadType"], payload), sig):
        return None, "bundle.dsse.json: the signature does not verify with " + key
    st = json.loads(payload)
    if st.get("_type") != "https://in-toto.io/Statement/v1" or st.get("predicateType") != want_type:
        return None, "bundle.dsse.json: not an in-toto v1 statement of predicate type " + want_type
    return st, None


def check_files(root, st):
    found, problems = files_on_disk(root)
    for s in st["subject"]:
        name, want = s["name"], s["digest"]["sha256"]
        if posixpath.isabs(name) or posixpath.normpath(name) != name or name.startswith("../"):
            problems.append(name + ": not a clean relative path")
        elif name not in found:
            problems.append(name + ": listed but missing (or not a regular file)")
        elif sha256(os.path.join(root, name)) != want:
            problems.append(name + ": sha256 differs from the signed statement")
        found.discard(name)
    problems += [name + ": present but not listed" for name in sorted(found)]
    return problems


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    root, key = argv[1], argv[2]
    want_type = argv[3] if len(argv) == 4 else "https://tender.dev/evidence/v2"
    try:
        st, problem = statement(root, key, want_type)
        problems = [problem] if problem else check_files(root, st)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        problems = ["bundle.dsse.json: cannot read the envelope or its statement: %r" % e]
    for p in problems:
        print("FAIL " + p)
    if problems:
        return 1
    deps = len(st["predicate"].get("resolvedDependencies", []))
    print("OK %s: signed by %s; %d subjects, %d resolved dependencies" % (root, key, len(st["subject"]), deps))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
