"""What the tests share: the list of every ranker, taken from the registry of
model classes (so a new ranker is tested everywhere at once), and where the
real data sets are."""

import os
from pathlib import Path

import pytest

from sklearn_ltr._rankers.registry import model_classes

# Every ranker class of the package, in the registry's order.
RANKERS = tuple(model_classes().values())
RANKER_IDS = [cls.__name__ for cls in RANKERS]

REPOSITORY = Path(__file__).resolve().parent.parent


def shared_data_dir():
    """The real data sets (MQ2008, LightGBM's example): ``$SKLEARN_LTR_DATA``
    if set, else ``shared/data`` beside the repository's checkout."""
    return Path(os.environ.get("SKLEARN_LTR_DATA", REPOSITORY.parent / "shared" / "data"))


def require_shared_data(*parts):
    """The path ``shared_data_dir() / parts``, or a skip that names what is
    missing and how to provide it."""
    path = shared_data_dir().joinpath(*parts)
    if not path.exists():
        pytest.skip(
            f"{path} does not exist: these tests read the real data sets from "
            "../shared/data beside the checkout; set SKLEARN_LTR_DATA to their directory"
        )
    return path


def fit_labels(cls, y):
    """Labels ``cls`` can be fitted on: binary for CalibratedRanker (which
    takes binary or [0, 1] relevance), ``y`` unchanged for the others."""
    if cls.__name__ == "CalibratedRanker":
        return (y >= 1).astype(float)
    return y


@pytest.fixture(params=RANKERS, ids=RANKER_IDS)
def ranker_class(request):
    """Each ranker class in turn."""
    return request.param


# Session-scoped, so that module-scoped fixtures can use them.
@pytest.fixture(scope="session")
def mq2008_dir():
    """MQ2008 (LETOR 4.0, the five parts S1-S5), or a skip naming it."""
    return require_shared_data("mq2008")


@pytest.fixture(scope="session")
def example_dir():
    """LightGBM's lambdarank example, or a skip naming it."""
    return require_shared_data("lightgbm_lambdarank_example")


# Hypothesis draws the same examples on every run, so that a test passes or
# fails because of the code, never because of a run's luck; no deadline or
# too-slow health check, which depend on the machine's speed (and on numba
# compiling a kernel during the first example); no example database, whose
# saved failures would make one checkout's runs differ from another's. For an
# exploratory run with fresh examples: pytest --hypothesis-profile=default.
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # a test extra: the other tests run without it
    pass
else:
    settings.register_profile(
        "sklearn-ltr", derandomize=True, deadline=None, database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.load_profile("sklearn-ltr")
