"""Learning-to-rank estimators for scikit-learn, on a numba histogram GBDT."""

import os as _os

# numba runs our parallel kernels on GNU OpenMP (libgomp) on Linux. At every
# barrier its idle threads spin for about 300,000 iterations before sleeping;
# when another process holds a core, the spinning thread takes the time slice
# that the working thread needs, and a small fit on a busy 2-core machine ran
# 10x slower (16 s instead of 1.6 s). A short spin costs nothing measurable on
# an idle machine. libgomp reads the variable when it is first loaded, so it
# applies unless OpenMP code ran before this import; a value set by the user
# is kept.
_os.environ.setdefault("GOMP_SPINCOUNT", "1000")

from ._rankers import (
    CalibratedRanker,
    LambdaMARTRanker,
    ListNetRanker,
    XENDCGRanker,
    YetiRankRanker,
)
from ._version import __version__
from .persistence import load_model, save_model

__all__ = [
    "CalibratedRanker",
    "LambdaMARTRanker",
    "ListNetRanker",
    "XENDCGRanker",
    "YetiRankRanker",
    "__version__",
    "load_model",
    "save_model",
]
