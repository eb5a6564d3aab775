import pytest


@pytest.fixture(scope="session")
def tiny_vap(tmp_path_factory):
    """One tiny easy dataset (1 train + 1 val world) shared by the VAP tests; read it, never write into it."""
    from tests.support.vap import make_tiny

    out = tmp_path_factory.mktemp("vap") / "easy"
    res = make_tiny(out)
    return out, res
