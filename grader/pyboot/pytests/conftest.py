# Host-side tests of the bootstrap (grader/pyboot/boot): its pure half above all. They run on the
# host's python3 with pytest, driven by TestBootstrapHostTests in grader/pyboot/host_test.go, and
# are never embedded into the verifier's source (pyboot.go embeds boot/*.py only).
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BOOT = os.path.join(os.path.dirname(HERE), "boot")
sys.path.insert(0, BOOT)
sys.path.insert(0, HERE)

import helpers  # noqa: E402


@pytest.fixture
def demo(tmp_path):
    """The demo project at its base with the evaluator's test patch, as the bootstrap sees it."""
    files = helpers.read_txtar("base.txtar")
    files.update(helpers.read_txtar("test.txtar"))
    return helpers.write_tree(tmp_path, files)


@pytest.fixture
def boot_source():
    """The bootstrap as the verifier runs it: the file TestBootstrapHostTests writes from the Go
    source (TENDER_BOOTSTRAP), or, when pytest is run by hand, boot/ joined in pyboot.go's order."""
    path = os.environ.get("TENDER_BOOTSTRAP")
    if path:
        with open(path) as f:
            return f.read()
    with open(os.path.join(os.path.dirname(HERE), "pyboot.go")) as f:
        m = re.search(r"var bootOrder = \[\]string\{([^}]*)\}", f.read())
    assert m, "pyboot.go no longer declares bootOrder on one line; set TENDER_BOOTSTRAP"
    parts = []
    for name in re.findall(r'"([^"]+)"', m.group(1)):
        with open(os.path.join(BOOT, name)) as f:
            parts.append(f.read())
    return "\n\n".join(parts)
