# The parent's checks around the test process: the reap of what the test process left, which
# acts only inside a verifier.
import os
import subprocess

import main


def test_proc_start():
    """proc_start reads a live process's start time, and None for one that does not exist."""
    assert isinstance(main.proc_start(os.getpid()), int)
    assert main.proc_start(1 << 30) is None


def test_reap_only_inside_a_verifier():
    """On a host, every process started after this one is not the check's: none is killed."""
    assert not main.in_verifier()
    p = subprocess.Popen(["sleep", "30"])
    try:
        assert main.reap_descendants() is True
        assert p.poll() is None
    finally:
        p.kill()
        p.wait()
