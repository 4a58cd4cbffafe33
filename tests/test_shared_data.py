"""Where the tests find the real data sets (tests/conftest.py): beside the
repository's checkout, or where ``$SKLEARN_LTR_DATA`` says, and a skip that
names what is missing otherwise."""

from pathlib import Path

import pytest
from conftest import REPOSITORY, require_shared_data, shared_data_dir


def test_the_repository_is_the_checkout_these_tests_are_in():
    assert REPOSITORY == Path(__file__).resolve().parent.parent
    assert (REPOSITORY / "setup.cfg").is_file() and (REPOSITORY / "sklearn_ltr").is_dir()


def test_the_data_is_found_beside_the_repository(monkeypatch):
    monkeypatch.delenv("SKLEARN_LTR_DATA", raising=False)
    beside = REPOSITORY.parent / "shared" / "data"
    assert shared_data_dir() == beside
    path = require_shared_data("mq2008")  # a skip where the data is not there
    assert path == beside / "mq2008"
    assert sorted(p.name for p in path.iterdir() if p.name.startswith("S")) == [
        f"S{i}.txt.gz" for i in range(1, 6)]


def test_the_environment_variable_wins(monkeypatch, tmp_path):
    (tmp_path / "mq2008").mkdir()
    monkeypatch.setenv("SKLEARN_LTR_DATA", str(tmp_path))
    assert shared_data_dir() == tmp_path
    assert require_shared_data("mq2008") == tmp_path / "mq2008"


def test_a_missing_directory_is_a_skip_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv("SKLEARN_LTR_DATA", str(tmp_path))
    with pytest.raises(pytest.skip.Exception) as info:
        require_shared_data("mq2008")
    message = str(info.value)
    assert str(tmp_path / "mq2008") in message and "SKLEARN_LTR_DATA" in message
