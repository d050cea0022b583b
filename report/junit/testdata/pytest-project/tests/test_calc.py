import pytest


def add(a, b):
    return a + b


def test_add():
    assert add(1, 2) == 3


def test_add_wrong():
    assert add(1, 2) == 4, "one plus two"


@pytest.mark.parametrize("a,b,want", [(1, 1, 2), (2, 3, 5), ("x", "y", "xy")])
def test_add_param(a, b, want):
    assert add(a, b) == want


@pytest.mark.parametrize("path", ["a/b.py", "c::d", "e[f]"])
def test_odd_params(path):
    assert path


@pytest.mark.skip(reason="not on this platform")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known bug #12")
def test_xfail():
    assert add(2, 2) == 5


@pytest.mark.xfail(reason="fixed already", strict=True)
def test_xpass_strict():
    assert add(2, 2) == 4


@pytest.mark.xfail(reason="maybe fixed")
def test_xpass_lenient():
    assert add(2, 2) == 4


@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded <&>")


def test_fixture_error(broken):
    pass


class TestCalc:
    def test_in_class(self):
        assert add(0, 0) == 0

    @pytest.mark.parametrize("n", [0, 1])
    def test_class_param(self, n):
        assert add(n, 0) == n

    class TestNested:
        def test_nested(self):
            assert True
