"""The estimator layer: the rankers over the shared booster.

``base`` holds :class:`~sklearn_ltr._rankers.base.BaseGBRanker` (parameters,
fit loop, early stopping), ``mixin`` the query-aware ``rank``/``score``,
``input`` and ``input_checks``/``categorical_input`` the preparation of X, y,
qid and weights, ``early_stopping_metric`` the metric that ``scoring`` names,
``foreign_names`` the hints for LightGBM's and XGBoost's parameter names,
``docs`` the shared docstring sections, ``registry`` the classes a model file
may name and ``model_file`` how a ranker is written to and read from one. The
rankers themselves live one family per module.
"""

# In this order, which is the registry's and so the order in which messages
# list the rankers.
from .lambdamart import LambdaMARTRanker  # isort: skip
from .listwise import ListNetRanker, XENDCGRanker  # isort: skip
from .yetirank import YetiRankRanker  # isort: skip
from .calibrated import CalibratedRanker  # isort: skip

# Pickle and skops name a class by its module and name. The public module, so
# that saved objects do not depend on where a class lives inside the package.
for _cls in (LambdaMARTRanker, XENDCGRanker, ListNetRanker, YetiRankRanker, CalibratedRanker):
    _cls.__module__ = "sklearn_ltr"
del _cls

__all__ = [
    "CalibratedRanker",
    "LambdaMARTRanker",
    "ListNetRanker",
    "XENDCGRanker",
    "YetiRankRanker",
]
