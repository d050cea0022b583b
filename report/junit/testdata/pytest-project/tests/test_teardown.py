import pytest


@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError("teardown exploded")


def test_passes_then_teardown_error(bad_teardown):
    assert True


def test_fails_then_teardown_error(bad_teardown):
    assert False, "call failed"
