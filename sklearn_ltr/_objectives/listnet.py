"""ListNet: softmax cross entropy between a label distribution and the scores.

Within a query, the scores define the top-one distribution
``rho = softmax(scores)`` and the labels a target distribution ``P_y``; the
loss is the cross entropy ``-sum_i P_y[i] * log(rho[i])``. The softmax
helpers and the Neumann-series Newton step here are shared with the XE-NDCG
objective, which is the same loss with a randomised target.
"""

import numbers

import numpy as np
from numba import njit, prange

from .._utils.parallel import pick, serial_twin
from ._base import BaseObjective, _mean_over_active, _query_reduce

_LABEL_DISTRIBUTIONS = ("linear", "exponential")

# No kernel here (or anywhere in the package) is compiled with fastmath: with
# "reassoc" or "contract" the rounding of a sum depends on how LLVM compiles
# it in context, and an XE-NDCG fit whose kernels were compiled in the
# process grew other trees than the same fit with them loaded from numba's
# cache. Without those flags the 15% they gave these kernels is under 1% of
# a fit.


@njit(cache=True, error_model="numpy")
def _softmax(scores, rho):
    """Write ``softmax(scores)`` into ``rho``.

    The exponentials are taken relative to the largest score, so they lie in
    ``(0, 1]`` and cannot overflow. Only the largest score's probability can
    exceed 1/2, and ``1 - rho`` would lose all its digits there, so it is
    returned separately, computed from the sum of the other exponentials.

    Parameters
    ----------
    scores : ndarray of shape (n,), dtype float64
        Scores of one query, ``n >= 1``.
    rho : ndarray of shape (n,), dtype float64
        Output probabilities.

    Returns
    -------
    log_sum_exp : float
        ``log(sum(exp(scores)))``.
    top : int
        Index of the (first) largest score.
    one_minus_rho_top : float
        ``1 - rho[top]``, accurate even when ``rho[top]`` rounds to 1.
    """
    n = scores.shape[0]
    top = 0
    s_max = scores[0]
    for i in range(1, n):
        if scores[i] > s_max:
            s_max = scores[i]
            top = i
    for i in range(n):
        rho[i] = np.exp(scores[i] - s_max)
    # Sum of the exponentials other than the top one (which is exactly 1).
    rest = 0.0
    for i in range(top):
        rest += rho[i]
    for i in range(top + 1, n):
        rest += rho[i]
    total = 1.0 + rest
    inv_total = 1.0 / total
    for i in range(n):
        rho[i] *= inv_total
    return s_max + np.log1p(rest), top, rest * inv_total


@njit(cache=True, error_model="numpy")
def _cross_entropy_one_query(scores, target):
    """``-sum(target * log(softmax(scores)))`` for a target summing to 1.

    Written as ``logsumexp(scores) - sum(target * scores)``, which needs no
    logarithm of a probability and stays finite when one underflows.
    """
    n = scores.shape[0]
    s_max = scores[0]
    for i in range(1, n):
        s_max = max(s_max, scores[i])
    total = 0.0
    dot = 0.0
    for i in range(n):
        total += np.exp(scores[i] - s_max)
        dot += target[i] * scores[i]
    return s_max + np.log(total) - dot


# Floor of the top document's 1 - rho when dividing by it: it only binds when
# the query's scores span more than about 690, where 1 - rho underflows, and
# keeps the Neumann terms finite (those rows' hessians are 0 anyway).
_MIN_ONE_MINUS_RHO = 1e-300


@njit(cache=True, error_model="numpy")
def _add_neumann_terms(rho, top, one_minus_rho_top, n_terms, term, acc):
    """Add ``n_terms`` Neumann-series corrections of a softmax loss's gradient.

    On entry ``term`` and ``acc`` both hold the gradient ``g = rho - target``
    of one query; on exit ``acc`` holds ``D (I + S + ... + S^K) D^-1 g`` with
    ``K = n_terms``, ``D = diag(rho * (1 - rho))`` and
    ``S[k, i] = rho_i / (1 - rho_k)`` off the diagonal (Bruch, WWW 2020,
    section 4.4), from the recursion::

        t0_k     = g_k
        t(m+1)_k = rho_k * sum_{i != k} tm_i / (1 - rho_i)

    in O(n) per term. Shared by ListNet and XE-NDCG, whose losses differ only
    in the target.

    Parameters
    ----------
    rho : ndarray of shape (n,), dtype float64
        Softmax of the query's scores (restored on exit).
    top : int
        Index of the largest ``rho``, as returned by :func:`_softmax`.
    one_minus_rho_top : float
        Accurate ``1 - rho[top]``, as returned by :func:`_softmax`.
    n_terms : int
        Number ``K`` of terms beyond the identity; 0 leaves ``acc`` as is.
    term, acc : ndarray of shape (n,), dtype float64
        Current series term and accumulated gradient, updated in place.
    """
    n = rho.shape[0]
    # Only the top document's 1 - rho can be tiny, so it is kept out of the
    # loops (its rho is set to 0 meanwhile) and handled with the accurate
    # 1 - rho; the loops then need no branch and no sum minus a huge element.
    rho_top = rho[top]
    rho[top] = 0.0
    divisor_top = max(one_minus_rho_top, _MIN_ONE_MINUS_RHO)
    for _ in range(n_terms):
        p_top = term[top] / divisor_top
        term[top] = 0.0
        sum_other = 0.0
        for i in range(n):
            term[i] /= 1.0 - rho[i]
            sum_other += term[i]
        c = sum_other + p_top
        for i in range(n):
            t = rho[i] * (c - term[i])
            term[i] = t
            acc[i] += t
        t = rho_top * sum_other
        term[top] = t
        acc[top] += t
    rho[top] = rho_top


@njit(cache=True, error_model="numpy")
def _listnet_one_query(
    scores, target, n_terms, weights, has_weights, rho, term, acc, grad_out,
    hess_out,
):
    """ListNet gradient ``rho - target`` (with ``n_terms`` Neumann
    corrections) and hessian ``rho * (1 - rho)``.

    Parameters
    ----------
    scores : ndarray of shape (n,), dtype float64
        Raw scores of the query's documents, ``n >= 2``.
    target : ndarray of shape (n,), dtype float64
        The label distribution ``P_y`` (sums to 1).
    n_terms : int
        Number of Neumann-series terms beyond the identity (see
        :func:`_add_neumann_terms`); 0 is the plain gradient.
    weights : ndarray of shape (n,), dtype float64
        Sample weights multiplying each row's gradient and hessian; read only
        if ``has_weights``.
    has_weights : bool
    rho, term, acc : ndarray of shape (n,), dtype float64
        Scratch space: softmax, current series term, accumulated gradient
        (``term`` and ``acc`` are read only if ``n_terms > 0``).
    grad_out, hess_out : ndarray of shape (n,), dtype float32
        Outputs (slices of the booster's buffers).
    """
    n = scores.shape[0]
    _, top, one_minus_rho_top = _softmax(scores, rho)
    if n_terms == 0:
        for i in range(n):
            grad_out[i] = (rho[i] - target[i]) * (weights[i] if has_weights else 1.0)
    else:
        for i in range(n):
            g = rho[i] - target[i]
            acc[i] = g
            term[i] = g
        _add_neumann_terms(rho, top, one_minus_rho_top, n_terms, term, acc)
        for i in range(n):
            grad_out[i] = acc[i] * (weights[i] if has_weights else 1.0)
    _write_softmax_hessian(rho, top, one_minus_rho_top, weights, has_weights, hess_out)


@njit(cache=True, error_model="numpy", inline="always")
def _write_softmax_hessian(rho, top, one_minus_rho_top, weights, has_weights, hess_out):
    """The diagonal hessian ``rho * (1 - rho)`` of a softmax cross entropy
    (ListNet, XE-NDCG), times the sample weights. The top row's uses
    ``one_minus_rho_top`` from :func:`_softmax`, exact where ``1 - rho_top``
    would lose its digits to rounding."""
    for i in range(rho.shape[0]):
        hess_out[i] = rho[i] * (1.0 - rho[i]) * (weights[i] if has_weights else 1.0)
    w = weights[top] if has_weights else 1.0
    hess_out[top] = rho[top] * one_minus_rho_top * w


@njit(parallel=True, cache=True)
def _listnet_gradient_hessian(
    raw_scores, target, offsets, active, n_terms, sample_weight, has_weights,
    rho, term, acc, grad_out, hess_out,
):
    """Run :func:`_listnet_one_query` on every active query, in parallel.

    Inactive queries (``active[q] == 0``) get zero gradients and hessians.
    Each query is handled by one thread, so results do not depend on the
    number of threads. ``rho``, ``term`` and ``acc`` are per-row scratch
    space (``term`` and ``acc`` may be empty when ``n_terms == 0``).
    """
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start = offsets[q]
        end = offsets[q + 1]
        if not active[q]:
            grad_out[start:end] = 0.0
            hess_out[start:end] = 0.0
            continue
        _listnet_one_query(
            raw_scores[start:end],
            target[start:end],
            n_terms,
            sample_weight[start:end] if has_weights else sample_weight,
            has_weights,
            rho[start:end],
            term[start:end] if n_terms > 0 else term,
            acc[start:end] if n_terms > 0 else acc,
            grad_out[start:end],
            hess_out[start:end],
        )


@njit(parallel=True, cache=True)
def _cross_entropy_per_query(raw_scores, target, offsets, active, out):
    """Cross entropy of every active query into ``out`` (0 for the others)."""
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start = offsets[q]
        end = offsets[q + 1]
        if active[q]:
            out[q] = _cross_entropy_one_query(
                raw_scores[start:end], target[start:end]
            )
        else:
            out[q] = 0.0


_listnet_gradient_hessian_serial = serial_twin(_listnet_gradient_hessian)


def _check_hessian_terms(hessian_terms):
    """``hessian_terms`` as an int, or a ValueError naming it."""
    if (
        isinstance(hessian_terms, bool)
        or not isinstance(hessian_terms, numbers.Integral)
        or hessian_terms < 0
    ):
        raise ValueError(
            f"hessian_terms must be a non-negative integer, got "
            f"{hessian_terms!r}."
        )
    return int(hessian_terms)

# Fewer rows than this get their gradients from the serial twin of the kernel
# (see sklearn_ltr._utils.parallel): about 9 ns per row, so under 0.2 ms of work,
# where two threads save little once woken (about 0.04 ms); and no parallel
# kernel to compile for a small fit.
_MIN_PARALLEL_ROWS = 20_000


class ListNetObjective(BaseObjective):
    """ListNet: softmax cross entropy against a label distribution.

    For each query with scores ``s`` and labels ``y``::

        rho     = softmax(s)
        P_y     = y / sum(y)          (label_distribution="linear")
                = softmax(y)          (label_distribution="exponential")
        loss    = -sum_i P_y[i] * log(rho[i])
        grad_i  = rho[i] - P_y[i]
        hess_i  = rho[i] * (1 - rho[i])

    The linear target is Bruch, Wang, Bendersky and Najork's eq. (6),
    ``P_y(x_i) = y_i / sum_j y_j``; the exponential one is the original
    ListNet top-one target that Bruch (WWW 2020) writes as eq. (3),
    ``phi_ListNet(y_i) = e^{y_i} / sum_j e^{y_j}``, and uses for the ListNet
    of its Table 1.

    ``grad`` is the exact gradient of the loss and ``hess`` the exact diagonal
    of its Hessian; with ``hessian_terms=0`` (the default) the off-diagonal
    terms ``-rho[i] * rho[j]`` are dropped (the per-row Newton step a GBDT
    needs; the full Hessian is singular). With ``hessian_terms=K > 0`` the
    gradient is replaced, as in :class:`XENDCGObjective`, by
    ``G = D (I + S + ... + S^K) D^-1 grad`` with ``D = diag(hess)`` and
    ``S[k, i] = rho_i / (1 - rho_k)`` off the diagonal, so that a one-row leaf
    takes the truncated-Neumann approximation of the full Newton step
    ``H^-1 grad`` (Bruch, WWW 2020, section 4.4, which applies it to ListNet
    as well as XE-NDCG); ``hess`` stays the diagonal. Each row's gradient and
    hessian are then multiplied by its sample weight.

    Queries with one document, and under ``"linear"`` queries whose labels
    sum to 0, have no target and contribute zeros.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Relevance labels, rows in query order; non-negative for
        ``label_distribution="linear"``.
    offsets : array-like of shape (n_queries + 1,)
        Query boundaries: query ``q`` is rows ``offsets[q]:offsets[q + 1]``.
    sample_weight : array-like of shape (n_samples,), default=None
        Per-row weights multiplying gradients and hessians.
    label_distribution : {"linear", "exponential"}, default="linear"
        How labels become the target distribution: ``"linear"`` normalises
        the labels, the form Bruch et al. (2019) analyse and show to bound
        MRR and NDCG for binary labels; ``"exponential"`` is the softmax
        of the labels, the original ListNet top-one target.
    hessian_terms : int, default=0
        Number ``K`` of Neumann-series terms beyond the identity in the
        inverse-Hessian approximation, as in :class:`XENDCGObjective`: 0 is
        the diagonal Newton step (plain ListNet), 2 is Bruch's (2020)
        ``I + S + S^2``.

    Notes
    -----
    :meth:`loss` is the mean cross entropy over the queries that contribute,
    weighted by the mean sample weight of their rows.

    References
    ----------
    Z. Cao, T. Qin, T.-Y. Liu, M.-F. Tsai, H. Li. Learning to Rank: From
    Pairwise Approach to Listwise Approach. ICML 2007.

    S. Bruch, X. Wang, M. Bendersky, M. Najork. An Analysis of the Softmax
    Cross Entropy Loss for Learning-to-Rank with Binary Relevance. ICTIR 2019
    (the target ``P_y = y / sum(y)``, eq. 6).
    """

    name = "listnet"

    def __init__(
        self, y, offsets, sample_weight=None, *, label_distribution="linear",
        hessian_terms=0, **params,
    ):
        super().__init__(y, offsets, sample_weight, **params)
        self.hessian_terms = _check_hessian_terms(hessian_terms)
        if (
            not isinstance(label_distribution, str)
            or label_distribution not in _LABEL_DISTRIBUTIONS
        ):
            raise ValueError(
                f"label_distribution must be one of {_LABEL_DISTRIBUTIONS}, "
                f"got {label_distribution!r}."
            )
        self.label_distribution = label_distribution
        if label_distribution == "linear" and np.any(self.y < 0):
            raise ValueError(
                "y must be non-negative for the listnet objective with "
                "label_distribution='linear'."
            )
        sizes = np.diff(self.offsets)
        # The target depends only on the labels: compute it once.
        if label_distribution == "linear":
            totals = _query_reduce(np.add, self.y, self.offsets)
            self._active = ((sizes >= 2) & (totals > 0.0)).astype(np.uint8)
            numerators = self.y
        else:
            top = _query_reduce(np.maximum, self.y, self.offsets)
            numerators = np.exp(self.y - np.repeat(top, sizes))
            totals = _query_reduce(np.add, numerators, self.offsets)
            self._active = (sizes >= 2).astype(np.uint8)
        safe_totals = np.where(self._active == 1, totals, 1.0)
        self._target = np.where(
            np.repeat(self._active, sizes) == 1,
            numerators / np.repeat(safe_totals, sizes),
            0.0,
        )
        self._rho = np.empty_like(self.y)
        n_scratch = self.y.shape[0] if self.hessian_terms > 0 else 0
        self._term = np.empty(n_scratch)
        self._acc = np.empty(n_scratch)
        self._weights = (
            np.empty(0) if self.sample_weight is None else self.sample_weight
        )

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        """Fill the gradients ``rho - P_y`` (with the Neumann corrections
        if ``hessian_terms > 0``) and hessians ``rho * (1 - rho)``.

        Parameters
        ----------
        raw_scores : ndarray of shape (n_samples,), dtype float64
            Current raw scores, rows in query order.
        grad_out : ndarray of shape (n_samples,), dtype float32
            Output gradients (negative for documents to move up).
        hess_out : ndarray of shape (n_samples,), dtype float32
            Output hessians (non-negative).
        """
        self._check_buffers(raw_scores, grad_out, hess_out)
        kernel = pick(
            _listnet_gradient_hessian, _listnet_gradient_hessian_serial,
            raw_scores.shape[0], _MIN_PARALLEL_ROWS,
        )
        kernel(
            raw_scores, self._target, self.offsets, self._active,
            self.hessian_terms, self._weights, self.sample_weight is not None,
            self._rho, self._term, self._acc, grad_out, hess_out,
        )

    def loss(self, raw_scores):
        """Mean cross entropy over the contributing queries.

        Parameters
        ----------
        raw_scores : ndarray of shape (n_samples,), dtype float64
            Raw scores, rows in query order.

        Returns
        -------
        loss : float
            Non-negative; 0 if no query contributes.
        """
        raw_scores = self._check_scores(raw_scores)
        per_query = np.empty(self.n_queries)
        _cross_entropy_per_query(
            raw_scores, self._target, self.offsets, self._active, per_query
        )
        return _mean_over_active(per_query, self._active, self.query_weights)
