"""Calibrated ranking with binary relevance: SigmoidCE, SoftmaxCE, their sum,
and the regression compatible ranking (RCR) loss.

All four objectives of Bai et al., *Regression Compatible Listwise Objectives
for Calibrated Ranking with Binary Relevance* (CIKM 2023) have the same shape
for a query with scores ``s`` and labels ``y`` in [0, 1]::

    loss_q = (1 - alpha) * sum_i SigmoidCE(s_i, y_i) + alpha * ListCE(z, y)

    SigmoidCE(s, y) = -y log sigmoid(s) - (1 - y) log(1 - sigmoid(s))   (eq. 1)
    ListCE(z, y)    = -(1 / C) sum_i y_i log softmax(z)_i,  C = sum_i y_i   (eq. 12)

where the listwise part sees *logits* ``z``: ``z = s`` gives SoftmaxCE (eq. 3,
``ListCE(exp)``), and the paper's virtual logits ``z = log sigmoid(s)``
(eq. 9) give ``ListCE(sigmoid)``, because
``softmax(log sigmoid(s))_i = sigmoid(s_i) / sum_j sigmoid(s_j)``.
``"sigmoid"`` is alpha = 0, ``"softmax"`` is alpha = 1 with ``z = s``,
``"sigmoid+softmax"`` is eq. 5 and ``"rcr"`` is eq. 20.

Derivatives of the listwise part
--------------------------------
With ``t = y / C`` and ``p = softmax(z)``, the softmax cross entropy has
gradient ``p - t`` and Hessian ``diag(p) - p p^T`` in ``z``. For ``z = s``
that is the whole story (diagonal ``p (1 - p)``). For ``z_k = log sigmoid(s_k)``
we have ``dz_k/ds_k = 1 - sigmoid(s_k) =: a_k`` and
``d2z_k/ds_k2 = -sigmoid(s_k) a_k``, so by the chain rule::

    g_k = a_k (p_k - t_k)
    H_kk = a_k^2 p_k (1 - p_k)  +  (t_k - p_k) sigmoid(s_k) a_k
    H_kj = -a_k a_j p_k p_j                                    (k != j)

The first term of ``H_kk`` is the Gauss-Newton diagonal (``J^T H_z J``, never
negative); the second is the curvature of the virtual logit itself and is
negative whenever ``p_k > t_k`` -- for example an irrelevant document
(``t_k = 0``) whose score is high, where ``log sum_j sigmoid(s_j)`` is
concave in ``s_k``. The exact diagonal can then be negative, which would
flip the Newton leaf value. We use ``max(exact, Gauss-Newton)``::

    h_k = a_k^2 p_k (1 - p_k) + max(0, t_k - p_k) sigmoid(s_k) a_k

i.e. the exact diagonal where the dropped term adds curvature (documents
ranked below their share, ``p_k < t_k``) and the Gauss-Newton diagonal where
it would remove it. It is positive whenever the query has two or more
documents with finite scores.

The pointwise part has the exact ``g = sigmoid(s) - y`` and
``h = sigmoid(s) (1 - sigmoid(s))``. Both parts are multiplied by the row's
sample weight. Queries with no positive label (``C = 0``) or a single
document have no listwise part (ListCE is undefined, resp. identically 0);
their pointwise part still counts.
"""

import numpy as np
from numba import njit, prange

from .._utils.parallel import pick, serial_twin
from ._base import BaseObjective, _query_reduce
from .listnet import _cross_entropy_one_query, _softmax

# How the listwise part turns scores into logits.
_LIST_NONE = 0  # no listwise part ("sigmoid")
_LIST_SOFTMAX = 1  # z = s (SoftmaxCE)
_LIST_SIGMOID = 2  # z = log sigmoid(s) (ListCE(sigmoid))


@njit(cache=True, error_model="numpy")
def _log_sigmoid(s):
    """``log(sigmoid(s)) = -log(1 + exp(-s))`` without overflow."""
    if s >= 0.0:
        return -np.log1p(np.exp(-s))
    return s - np.log1p(np.exp(s))


@njit(cache=True, error_model="numpy")
def _sigmoid(s):
    """``1 / (1 + exp(-s))``; for negative ``s`` via ``exp(s)`` so it cannot overflow."""
    if s >= 0.0:
        return 1.0 / (1.0 + np.exp(-s))
    e = np.exp(s)
    return e / (1.0 + e)


@njit(cache=True, error_model="numpy")
def _sigmoid_cross_entropy(s, y):
    """``-y log sigmoid(s) - (1 - y) log(1 - sigmoid(s))``, stably.

    Equal to ``softplus(s) - y s`` with ``softplus(s) = log(1 + exp(s))``.
    """
    return -_log_sigmoid(-s) - y * s


@njit(cache=True, error_model="numpy")
def _logits(scores, list_kind, z):
    """Write the listwise logits of one query into ``z``."""
    n = scores.shape[0]
    if list_kind == _LIST_SIGMOID:
        for i in range(n):
            z[i] = _log_sigmoid(scores[i])
    else:
        for i in range(n):
            z[i] = scores[i]


@njit(cache=True, error_model="numpy")
def _rcr_one_query(
    scores, y, target, weights, has_weights, point_weight, list_weight,
    list_kind, z, p, grad_out, hess_out,
):
    """Gradient and hessian of ``point_weight * SigmoidCE + list_weight * ListCE``.

    Parameters
    ----------
    scores : ndarray of shape (n,), dtype float64
        Raw scores of the query's documents.
    y : ndarray of shape (n,), dtype float64
        Labels in [0, 1].
    target : ndarray of shape (n,), dtype float64
        ``y / sum(y)``; read only when ``list_kind != _LIST_NONE``.
    weights : ndarray of shape (n,), dtype float64
        Sample weights; read only if ``has_weights``.
    has_weights : bool
    point_weight, list_weight : float
        ``1 - alpha`` and ``alpha``.
    list_kind : int
        ``_LIST_NONE`` (no listwise part for this query), ``_LIST_SOFTMAX``
        or ``_LIST_SIGMOID``.
    z, p : ndarray of shape (n,), dtype float64
        Scratch space for the logits and their softmax.
    grad_out, hess_out : ndarray of shape (n,), dtype float32
        Outputs.
    """
    n = scores.shape[0]
    top = -1
    one_minus_p_top = 0.0
    if list_kind != _LIST_NONE:
        _logits(scores, list_kind, z)
        _, top, one_minus_p_top = _softmax(z, p)
    for i in range(n):
        sig = _sigmoid(scores[i])
        one_minus_sig = _sigmoid(-scores[i])  # accurate where sig rounds to 1
        g = point_weight * (sig - y[i])
        h = point_weight * sig * one_minus_sig
        if list_kind != _LIST_NONE:
            # 1 - p, accurate for the largest p (the only one that can be near 1).
            q = one_minus_p_top if i == top else 1.0 - p[i]
            diff = p[i] - target[i]
            if list_kind == _LIST_SOFTMAX:
                g += list_weight * diff
                h += list_weight * p[i] * q
            else:
                a = one_minus_sig
                g += list_weight * a * diff
                # Gauss-Newton diagonal plus the virtual logit's curvature
                # where it is positive (see the module docstring).
                h += list_weight * (a * a * p[i] * q + max(0.0, -diff) * sig * a)
        w = weights[i] if has_weights else 1.0
        grad_out[i] = g * w
        hess_out[i] = h * w


@njit(parallel=True, cache=True)
def _rcr_gradient_hessian(
    raw_scores, y, target, offsets, list_active, sample_weight, has_weights,
    point_weight, list_weight, list_kind, z, p, grad_out, hess_out,
):
    """Run :func:`_rcr_one_query` on every query, one thread per query.

    ``list_active[q] == 0`` switches the listwise part off for query ``q``.
    """
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start = offsets[q]
        end = offsets[q + 1]
        _rcr_one_query(
            raw_scores[start:end],
            y[start:end],
            target[start:end],
            sample_weight[start:end] if has_weights else sample_weight,
            has_weights,
            point_weight,
            list_weight,
            list_kind if list_active[q] else _LIST_NONE,
            z[start:end],
            p[start:end],
            grad_out[start:end],
            hess_out[start:end],
        )


@njit(parallel=True, cache=True)
def _rcr_loss_per_query(
    raw_scores, y, target, offsets, list_active, sample_weight, has_weights,
    query_weight, point_weight, list_weight, list_kind, z, out,
):
    """Loss of every query into ``out``.

    The pointwise part is weighted row by row, the listwise part by the
    query's mean row weight ``query_weight[q]``.
    """
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start = offsets[q]
        end = offsets[q + 1]
        total = 0.0
        if point_weight > 0.0:
            for i in range(start, end):
                w = sample_weight[i] if has_weights else 1.0
                total += w * _sigmoid_cross_entropy(raw_scores[i], y[i])
            total *= point_weight
        if list_active[q] and list_kind != _LIST_NONE:
            _logits(raw_scores[start:end], list_kind, z[start:end])
            ce = _cross_entropy_one_query(z[start:end], target[start:end])
            w = query_weight[q] if has_weights else 1.0
            total += list_weight * w * ce
        out[q] = total


_rcr_gradient_hessian_serial = serial_twin(_rcr_gradient_hessian)

# Fewer rows than this get their gradients from the serial twin of the kernel
# (see sklearn_ltr._utils.parallel): about 35 ns per row, so under 0.2 ms of work,
# where two threads save little once woken (about 0.04 ms); and no parallel
# kernel to compile for a small fit.
_MIN_PARALLEL_ROWS = 5_000


class _CalibratedRankingObjective(BaseObjective):
    """Shared implementation; subclasses fix the listwise part."""

    _list_kind = _LIST_NONE
    _default_alpha = 0.0

    def __init__(self, y, offsets, sample_weight=None, *, alpha=None, **params):
        super().__init__(y, offsets, sample_weight, **params)
        if np.any(self.y < 0.0) or np.any(self.y > 1.0):
            raise ValueError(
                f"y must be binary or lie in [0, 1] for the {self.name!r} objective, "
                f"got values in [{self.y.min()}, {self.y.max()}]."
            )
        alpha = self._check_alpha(alpha)
        self.alpha = alpha
        self._point_weight = 1.0 - alpha
        self._list_weight = alpha
        sizes = np.diff(self.offsets)
        totals = _query_reduce(np.add, self.y, self.offsets)
        self._list_active = ((sizes >= 2) & (totals > 0.0)).astype(np.uint8)
        if self._list_kind == _LIST_NONE:
            self._list_active[:] = 0
        safe = np.where(self._list_active == 1, totals, 1.0)
        self._target = np.where(
            np.repeat(self._list_active, sizes) == 1, self.y / np.repeat(safe, sizes), 0.0
        )
        self._z = np.empty_like(self.y)
        self._p = np.empty_like(self.y)
        self._weights = np.empty(0) if self.sample_weight is None else self.sample_weight
        self._query_weight = np.empty(0) if self.query_weights is None else self.query_weights

    def _check_alpha(self, alpha):
        if alpha is None:
            return self._default_alpha
        raise ValueError(f"The {self.name!r} objective takes no alpha, got alpha={alpha!r}.")

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        """Fill the gradients and (positive) hessians of every row.

        Parameters
        ----------
        raw_scores : ndarray of shape (n_samples,), dtype float64
            Current raw scores, rows in query order.
        grad_out : ndarray of shape (n_samples,), dtype float32
            Output gradients of the summed query losses.
        hess_out : ndarray of shape (n_samples,), dtype float32
            Output hessians (see the module docstring for ListCE(sigmoid)).
        """
        self._check_buffers(raw_scores, grad_out, hess_out)
        kernel = pick(
            _rcr_gradient_hessian, _rcr_gradient_hessian_serial,
            raw_scores.shape[0], _MIN_PARALLEL_ROWS,
        )
        kernel(
            raw_scores, self.y, self._target, self.offsets, self._list_active,
            self._weights, self.sample_weight is not None, self._point_weight,
            self._list_weight, self._list_kind, self._z, self._p, grad_out, hess_out,
        )

    def loss(self, raw_scores):
        """Sum of the query losses divided by the number of queries.

        Without sample weights its gradient is exactly the gradient filled by
        :meth:`gradient_hessian` divided by ``n_queries``.

        Parameters
        ----------
        raw_scores : ndarray of shape (n_samples,), dtype float64
            Raw scores, rows in query order.

        Returns
        -------
        loss : float
        """
        raw_scores = self._check_scores(raw_scores)
        if self.n_queries == 0:
            return 0.0
        per_query = np.empty(self.n_queries)
        _rcr_loss_per_query(
            raw_scores, self.y, self._target, self.offsets, self._list_active,
            self._weights, self.sample_weight is not None, self._query_weight,
            self._point_weight, self._list_weight, self._list_kind, self._z, per_query,
        )
        return float(per_query.sum() / self.n_queries)

    def init_score_statistics(self):
        """Sums the baseline needs: ``sum(w y)``, ``sum(w)``, ``sum(y)``, ``n``.

        Returns
        -------
        statistics : ndarray of shape (4,)
            Without sample weights, ``w`` is 1.
        """
        y = self.y
        if self.sample_weight is None:
            return np.array([y.sum(), float(y.shape[0]), y.sum(), float(y.shape[0])])
        w = self.sample_weight
        return np.array([np.multiply(y, w).sum(), w.sum(), y.sum(), float(y.shape[0])])

    @classmethod
    def init_score_from(cls, statistics):
        """Log-odds of the (weighted) mean label, so ``sigmoid`` starts calibrated.

        Parameters
        ----------
        statistics : ndarray of shape (4,)
            :meth:`init_score_statistics`, summed over the training rows.

        Returns
        -------
        score : float
            Clipped to the log-odds of ``[eps, 1 - eps]`` (float32 epsilon)
            when all labels are 0 or all are 1; 0.0 without rows. Weights
            summing to zero or less fall back to the unweighted mean.
        """
        weighted_sum, weight, label_sum, n_rows = statistics
        if n_rows == 0:
            return 0.0
        mean = weighted_sum / weight if weight > 0 else label_sum / n_rows
        eps = float(np.finfo(np.float32).eps)
        mean = min(max(float(mean), eps), 1.0 - eps)
        return float(np.log(mean) - np.log1p(-mean))


def _check_mixture_alpha(alpha, name, default):
    if alpha is None:
        return default
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)):
        raise ValueError(f"alpha must be a real number in [0, 1], got {alpha!r}.")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1] for the {name!r} objective, got {alpha}.")
    return float(alpha)


class SigmoidCEObjective(_CalibratedRankingObjective):
    """Pointwise sigmoid cross entropy (logistic regression), eq. 1.

    ``g = sigmoid(s) - y``, ``h = sigmoid(s) (1 - sigmoid(s))``, both times
    the sample weight. The baseline is the log-odds of the mean label.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels in [0, 1], rows in query order.
    offsets : array-like of shape (n_queries + 1,)
        Query boundaries: query ``q`` is rows ``offsets[q]:offsets[q + 1]``.
    sample_weight : array-like of shape (n_samples,), default=None
        Per-row weights multiplying gradients and hessians.
    """

    name = "sigmoid"
    _list_kind = _LIST_NONE


class SoftmaxCEObjective(_CalibratedRankingObjective):
    """Listwise softmax cross entropy, eq. 3 (ListNet with target ``y / sum(y)``).

    ``g = softmax(s) - y / sum(y)``, ``h = rho (1 - rho)`` per query; queries
    without a positive label or with one document contribute zeros. Scores
    are only defined up to a per-query shift, so they are not probabilities;
    the baseline is 0.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels in [0, 1], rows in query order.
    offsets : array-like of shape (n_queries + 1,)
        Query boundaries: query ``q`` is rows ``offsets[q]:offsets[q + 1]``.
    sample_weight : array-like of shape (n_samples,), default=None
        Per-row weights multiplying gradients and hessians.
    """

    name = "softmax"
    _list_kind = _LIST_SOFTMAX
    _default_alpha = 1.0

    @classmethod
    def init_score_from(cls, statistics):
        """0: the loss is invariant to a constant shift of the scores.

        Parameters
        ----------
        statistics : ndarray of shape (4,)
            Ignored.

        Returns
        -------
        score : float
        """
        return 0.0


class SigmoidSoftmaxCEObjective(_CalibratedRankingObjective):
    """``(1 - alpha) SigmoidCE + alpha SoftmaxCE``, eq. 5 (the multi-objective baseline).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels in [0, 1], rows in query order.
    offsets : array-like of shape (n_queries + 1,)
        Query boundaries: query ``q`` is rows ``offsets[q]:offsets[q + 1]``.
    sample_weight : array-like of shape (n_samples,), default=None
        Per-row weights multiplying gradients and hessians.
    alpha : float in [0, 1], default=0.5
        Weight of the listwise part.
    """

    name = "sigmoid+softmax"
    _list_kind = _LIST_SOFTMAX
    _default_alpha = 0.5

    def _check_alpha(self, alpha):
        return _check_mixture_alpha(alpha, self.name, self._default_alpha)


class RCRObjective(_CalibratedRankingObjective):
    """Regression compatible ranking: ``(1 - alpha) SigmoidCE + alpha ListCE(sigmoid)``, eq. 20.

    Per query with ``sig = sigmoid(s)``, ``a = 1 - sig``, ``p = sig / sum(sig)``
    and ``t = y / sum(y)``::

        g = (1 - alpha) (sig - y) + alpha a (p - t)
        h = (1 - alpha) sig a + alpha (a^2 p (1 - p) + max(0, t - p) sig a)

    The listwise hessian is the larger of the exact diagonal and the
    Gauss-Newton diagonal (derivation in the module docstring). Both parts
    share their minimiser ``sigmoid(s) = E[y]`` (the paper's Proposition 4),
    so the ranking term does not pull the probabilities off calibration.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels in [0, 1], rows in query order.
    offsets : array-like of shape (n_queries + 1,)
        Query boundaries: query ``q`` is rows ``offsets[q]:offsets[q + 1]``.
    sample_weight : array-like of shape (n_samples,), default=None
        Per-row weights multiplying gradients and hessians.
    alpha : float in [0, 1], default=0.5
        Weight of the listwise part; 0 is SigmoidCE, 1 is ListCE(sigmoid).

    References
    ----------
    A. Bai, R. Jagerman, Z. Qin, L. Yan, P. Kar, B.-R. Lin, X. Wang,
    M. Bendersky, M. Najork. Regression Compatible Listwise Objectives for
    Calibrated Ranking with Binary Relevance. CIKM 2023.
    """

    name = "rcr"
    _list_kind = _LIST_SIGMOID
    _default_alpha = 0.5

    def _check_alpha(self, alpha):
        return _check_mixture_alpha(alpha, self.name, self._default_alpha)
