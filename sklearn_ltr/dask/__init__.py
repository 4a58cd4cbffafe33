"""sklearn-ltr on a Dask cluster.

Two ways to use a cluster:

- **Model selection**: ``GridSearchCV``, ``RandomizedSearchCV`` and
  ``cross_validate`` over the ordinary rankers run their fits on the workers
  under ``joblib.parallel_config(backend="dask")``; :func:`warm_up_workers`
  loads the compiled kernels on every worker first.
- **Data-parallel training** when the training data does not fit one
  machine: :class:`DaskLambdaMARTRanker`, :class:`DaskXENDCGRanker`,
  :class:`DaskListNetRanker`, :class:`DaskYetiRankRanker` and
  :class:`DaskCalibratedRanker` fit on dask
  DataFrames or Arrays whose partitions hold whole queries
  (:func:`repartition_by_query`, :func:`rechunk_by_query`), on the workers
  that hold them, and give the model a single process would fit.

dask and distributed are an optional dependency (``pip install
sklearn-ltr[dask]``): ``import sklearn_ltr`` never imports this package, and
this package imports them only when a function that needs them is called.
"""

from ._estimators import (
    DaskCalibratedRanker,
    DaskLambdaMARTRanker,
    DaskListNetRanker,
    DaskXENDCGRanker,
    DaskYetiRankRanker,
)
from ._partitions import rechunk_by_query, repartition_by_query
from ._warm_up import warm_up_workers

__all__ = [
    "DaskCalibratedRanker",
    "DaskLambdaMARTRanker",
    "DaskListNetRanker",
    "DaskXENDCGRanker",
    "DaskYetiRankRanker",
    "rechunk_by_query",
    "repartition_by_query",
    "warm_up_workers",
]
