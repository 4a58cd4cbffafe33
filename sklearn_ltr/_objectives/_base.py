"""The interface every training objective implements, and its base class.

The booster reorders the training rows so that each query is contiguous and
describes the queries by ``offsets`` (query ``q`` is rows
``offsets[q]:offsets[q + 1]``). It allocates the float32 gradient and hessian
buffers once per fit and, at every iteration, calls the hooks of
:class:`~sklearn_ltr._gbdt.objective.Objective` (the engine's protocol, which
speaks of row groups: here the groups are queries). Gradients are derivatives
of the loss with respect to the raw scores, so the booster's Newton leaf
value is ``-sum(gradients) / sum(hessians)``. :class:`TrainingObjective`
adds what the estimators use: the name, the baseline score and the loss.

An objective is one module: an ``@njit`` kernel for one query, an
``@njit(parallel=True)`` loop over queries that calls it, and a small subclass
of :class:`BaseObjective`, registered in ``OBJECTIVES``. The base class gives
every optional hook a default that does nothing.
"""

import numbers
from typing import Protocol, runtime_checkable

import numpy as np

from .._gbdt.common import G_H_DTYPE, Y_DTYPE
from .._gbdt.objective import Objective
from .._utils.sums import fixed_order_dot


@runtime_checkable
class TrainingObjective(Objective, Protocol):
    """An objective as the estimators use it: the engine's
    :class:`~sklearn_ltr._gbdt.objective.Objective` plus a name, a loss and
    the baseline score. :class:`BaseObjective` documents each member.

    Attributes
    ----------
    name : str
        Key of the objective in ``OBJECTIVES``.
    """

    name: str

    def loss(self, raw_scores: np.ndarray) -> float:
        """Scalar loss of the raw scores (lower is better)."""

    def init_score(self) -> float:
        """Baseline raw score the boosting starts from."""

    def init_score_statistics(self) -> np.ndarray:
        """This objective's rows' part of the sums the baseline depends on."""

    @classmethod
    def init_score_from(cls, statistics: np.ndarray) -> float:
        """Baseline raw score from statistics summed over all rows."""


class BaseObjective:
    """Base class of the training objectives: implements
    :class:`TrainingObjective`, with the optional hooks doing nothing.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels, rows in query order.
    offsets : array-like of shape (n_queries + 1,)
        Query boundaries: query ``q`` is rows ``offsets[q]:offsets[q + 1]``.
    sample_weight : array-like of shape (n_samples,), default=None
        Per-row weights; ``None`` means all ones.
    **params : dict
        Objective-specific parameters. Subclasses take theirs as keywords, so
        any that reach this class are unknown and raise a ValueError.

    Attributes
    ----------
    name : str
        Key of the objective in ``OBJECTIVES``.
    n_queries : int
        Number of queries.
    constant_hessian : float or None
        The value of every hessian if the objective guarantees they are all
        equal, else None (here: None). See
        :class:`~sklearn_ltr._gbdt.objective.Objective`.
    """

    name = None
    constant_hessian = None

    def __init__(self, y, offsets, sample_weight=None, **params):
        self.y = check_labels(y)
        self.offsets = _check_offsets(offsets, self.y.shape[0])
        self.n_queries = self.offsets.shape[0] - 1
        self.sample_weight = _check_sample_weight(sample_weight, self.y.shape[0])
        # Mean row weight per query (LightGBM's query weight), None unweighted.
        self.query_weights = _query_weights(self.sample_weight, self.offsets)
        if params:
            # Subclasses consume their own keywords; anything left is a typo.
            raise ValueError(
                f"Unknown parameters for objective {self.name!r}: "
                f"{sorted(params)}."
            )

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        """Fill the gradient and hessian of every row.

        Parameters
        ----------
        raw_scores : ndarray of shape (n_samples,), dtype float64
            Current raw scores, rows in query order.
        grad_out : ndarray of shape (n_samples,), dtype float32
            Output: derivative of the loss with respect to each score.
        hess_out : ndarray of shape (n_samples,), dtype float32
            Output: (approximate) second derivative, non-negative.
        """
        raise NotImplementedError

    def loss(self, raw_scores):
        """Scalar loss to log and to monitor for early stopping (lower is better).

        Parameters
        ----------
        raw_scores : ndarray of shape (n_samples,), dtype float64
            Raw scores, rows in query order.

        Returns
        -------
        loss : float
        """
        raise NotImplementedError

    def init_score(self):
        """Baseline raw score the boosting starts from.

        Returns
        -------
        score : float
            0.0 unless the objective says otherwise: ranking objectives are
            invariant to a constant shift.
        """
        return self.init_score_from(self.init_score_statistics())

    def init_score_statistics(self):
        """Sums over the training rows that :meth:`init_score` depends on.

        A distributed fit adds these over the workers' rows and passes the
        total to :meth:`init_score_from`, so the baseline is that of all rows.

        Returns
        -------
        statistics : ndarray of shape (n_statistics,)
            Empty here: the baseline depends on no data.
        """
        return np.zeros(0)

    @classmethod
    def init_score_from(cls, statistics):
        """Baseline raw score from :meth:`init_score_statistics`, summed over rows.

        Parameters
        ----------
        statistics : ndarray of shape (n_statistics,)

        Returns
        -------
        score : float
        """
        return 0.0

    def set_iteration(self, iteration):
        """Be told the index of the tree about to be grown; nothing to do
        here (objectives with iteration-dependent schedules override it).

        Parameters
        ----------
        iteration : int
            0 for the first tree of the model, counting trees a warm start
            kept.
        """

    def prepare_iteration(self, rng):
        """Draw whatever randomness the next iteration needs.

        Called once before each :meth:`gradient_hessian`. Kernels never draw
        random numbers themselves, so that results do not depend on threads.

        Parameters
        ----------
        rng : numpy.random.Generator
            The fit's seeded generator.
        """

    def iteration_statistics(self):
        """Sums over this iteration's rows that the objective's own estimates
        depend on (Unbiased LambdaMART's pair costs by position), or None.

        Called after :meth:`gradient_hessian`. A distributed fit adds them
        over the workers and passes the total to :meth:`end_iteration` on
        every worker, so all of them update their estimates alike.

        Returns
        -------
        statistics : ndarray or None
            None here: nothing is estimated besides the trees.
        """
        return None

    def end_iteration(self, statistics):
        """Update the objective's estimates from :meth:`iteration_statistics`
        summed over all training rows; nothing to do here."""

    def fitted_attributes(self):
        """Estimator attributes learned by the objective (name -> value);
        none here."""
        return {}

    def _check_scores(self, raw_scores):
        """Raw scores for :meth:`loss`, as a contiguous float64 array."""
        raw_scores = np.ascontiguousarray(raw_scores, dtype=Y_DTYPE)
        if raw_scores.shape != self.y.shape:
            raise ValueError(
                f"raw_scores must have shape {self.y.shape}, got {raw_scores.shape}."
            )
        return raw_scores

    def _check_buffers(self, raw_scores, grad_out, hess_out):
        n = self.y.shape[0]
        if raw_scores.shape != (n,) or raw_scores.dtype != Y_DTYPE:
            raise ValueError(
                f"raw_scores must be a float64 array of shape ({n},), got "
                f"{raw_scores.dtype} of shape {raw_scores.shape}."
            )
        for name, buf in (("grad_out", grad_out), ("hess_out", hess_out)):
            if buf.shape != (n,) or buf.dtype != G_H_DTYPE:
                raise ValueError(
                    f"{name} must be a float32 array of shape ({n},), got "
                    f"{buf.dtype} of shape {buf.shape}."
                )


def check_labels(y):
    y = np.ascontiguousarray(y, dtype=Y_DTYPE)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {y.shape}.")
    if not np.all(np.isfinite(y)):
        raise ValueError("y must not contain NaN or infinity.")
    return y


def _check_offsets(offsets, n_samples):
    offsets = np.asarray(offsets)
    if offsets.ndim != 1 or offsets.shape[0] < 1:
        raise ValueError(
            f"offsets must be a 1-dimensional array of length n_queries + 1, "
            f"got shape {offsets.shape}."
        )
    if not np.issubdtype(offsets.dtype, np.integer):
        raise ValueError(f"offsets must hold integers, got dtype {offsets.dtype}.")
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if offsets[0] != 0 or offsets[-1] != n_samples:
        raise ValueError(
            f"offsets must start at 0 and end at n_samples={n_samples}, got "
            f"{offsets[0]} and {offsets[-1]}."
        )
    if np.any(np.diff(offsets) < 0):
        raise ValueError("offsets must be non-decreasing.")
    return offsets


def _check_sample_weight(sample_weight, n_samples):
    if sample_weight is None:
        return None
    sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
    if sample_weight.shape != (n_samples,):
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), got "
            f"{sample_weight.shape}."
        )
    if not np.all(np.isfinite(sample_weight)) or np.any(sample_weight < 0):
        raise ValueError("sample_weight must be finite and non-negative.")
    return sample_weight


def _check_positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}.")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}.")
    return int(value)


def _check_positive_float(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}.")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value}.")
    return float(value)


def _check_non_negative_float(value, name):
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not np.isfinite(value) or value < 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}.")
    return float(value)


def _query_reduce(ufunc, values, offsets, empty=0.0):
    """``ufunc.reduce`` of ``values`` over each query; ``empty`` for empty ones.

    Parameters
    ----------
    ufunc : numpy.ufunc
        For example ``np.add`` or ``np.maximum``.
    values : ndarray of shape (n_samples,)
    offsets : ndarray of shape (n_queries + 1,), dtype int64

    Returns
    -------
    reduced : ndarray of shape (n_queries,), dtype float64
    """
    sizes = np.diff(offsets)
    out = np.full(sizes.shape[0], empty, dtype=np.float64)
    nonempty = sizes > 0
    if nonempty.any():
        # Starts of non-empty queries are strictly increasing and each segment
        # runs to the next one, so reduceat sees exactly the query's rows.
        out[nonempty] = ufunc.reduceat(values, offsets[:-1][nonempty])
    return out


def _query_weights(sample_weight, offsets):
    """Mean row weight of each query (0 for an empty query), or None."""
    if sample_weight is None:
        return None
    sizes = np.diff(offsets)
    return _query_reduce(np.add, sample_weight, offsets) / np.maximum(sizes, 1)


def _mean_over_active(per_query, active, query_weights):
    """Mean of ``per_query`` over active queries, weighted if asked; 0 if none."""
    mask = active.astype(bool)
    weights = np.ones(mask.sum()) if query_weights is None else query_weights[mask]
    total = weights.sum()
    if total == 0.0:
        return 0.0
    return fixed_order_dot(weights, per_query[mask]) / float(total)
