"""Learning-to-rank estimators for scikit-learn, on a numba histogram GBDT."""

__version__ = "0.1.0.dev0"

from ._ranker import LambdaMARTRanker, ListNetRanker, XENDCGRanker
from .calibration import CalibratedRanker
from .persistence import load_model, save_model

__all__ = [
    "CalibratedRanker",
    "LambdaMARTRanker",
    "ListNetRanker",
    "XENDCGRanker",
    "__version__",
    "load_model",
    "save_model",
]
