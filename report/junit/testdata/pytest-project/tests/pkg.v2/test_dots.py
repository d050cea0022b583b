def test_in_dotted_dir():
    assert True
