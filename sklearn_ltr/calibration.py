"""Rankers whose scores are probabilities: :class:`CalibratedRanker`.

The class lives in the estimator layer (``sklearn_ltr._rankers.calibrated``);
this module is its public import path.
"""

from ._rankers.calibrated import CalibratedRanker

__all__ = ["CalibratedRanker"]
