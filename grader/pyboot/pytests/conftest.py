# Host-side tests of the bootstrap (grader/pyboot/boot): its pure half above all. They run on the
# host's python3 with pytest, driven by TestBootstrapHostTests in grader/pyboot/host_test.go, and
# are never embedded into the verifier's source (pyboot.go embeds boot/*.py only).
import os
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
    source (TENDER_BOOTSTRAP), or boot/ joined in pyboot.go's bootOrder."""
    return helpers.boot_source()


@pytest.fixture
def planter_source():
    """The planter as the verifier runs it (TENDER_PLANTER, or boot/ joined in planterOrder)."""
    return helpers.planter_source()
