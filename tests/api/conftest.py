import pytest


@pytest.fixture(scope="session")
def reverse():
    import attention_lens

    return attention_lens.load("reverse")


@pytest.fixture(scope="session")
def reverse_run(reverse):
    return reverse.run("attention")
