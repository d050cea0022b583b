import does_not_exist_module  # collection error


def test_never_collected():
    pass
