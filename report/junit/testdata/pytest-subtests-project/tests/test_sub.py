import unittest

import pytest


def test_plain():
    assert True


def test_all_pass(subtests):
    for i in range(3):
        with subtests.test(msg="even", i=i):
            assert i < 3


def test_one_fails(subtests):
    for i in range(3):
        with subtests.test(msg="is_even", i=i * 2 + (i == 1)):
            assert i != 1, "odd"


def test_skips_one(subtests):
    with subtests.test(msg="runs"):
        pass
    with subtests.test(msg="skips"):
        pytest.skip("not here")


class TestUnit(unittest.TestCase):
    def test_sub_pass(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertLess(i, 2)

    def test_sub_fail(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertEqual(i, 0)
