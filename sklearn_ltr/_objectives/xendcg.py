"""XE-NDCG: cross entropy against a randomised NDCG-like target, Newton steps
from a truncated Neumann series of the inverse Hessian.

The per-row gradient/hessian pairs reproduce LightGBM's ``rank_xendcg``
(``RankXENDCG`` in ``src/objective/rank_objective.hpp``), generalised to any
number of series terms; see :class:`XENDCGObjective`.
"""

import numpy as np
from numba import njit, prange

from .._utils.parallel import pick, serial_twin
from ..metrics._checks import max_exponential_label
from ._base import BaseObjective, _mean_over_active, _query_reduce
from .listnet import (
    _add_neumann_terms, _check_hessian_terms,
    _cross_entropy_per_query, _softmax, _write_softmax_hessian,
)

# The value of gamma that makes loss() deterministic: the mean of U[0, 1].
_LOSS_GAMMA = 0.5


@njit(cache=True, error_model="numpy")
def _xendcg_one_query(
    scores, gains, gamma, n_terms, weights, has_weights, rho, term, acc,
    grad_out, hess_out,
):
    """XE-NDCG gradients with ``n_terms`` Neumann corrections, and hessians.

    Parameters
    ----------
    scores : ndarray of shape (n,), dtype float64
        Raw scores of the query's documents, ``n >= 2``.
    gains : ndarray of shape (n,), dtype float64
        ``2**y``.
    gamma : ndarray of shape (n,), dtype float64
        This iteration's draws from U[0, 1).
    n_terms : int
        Number of Neumann-series terms beyond the identity.
    weights : ndarray of shape (n,), dtype float64
        Sample weights multiplying each row's gradient and hessian; read only
        if ``has_weights``.
    has_weights : bool
    rho, term, acc : ndarray of shape (n,), dtype float64
        Scratch space: softmax, current series term, accumulated gradient.
    grad_out, hess_out : ndarray of shape (n,), dtype float32
        Outputs (slices of the booster's buffers).
    """
    n = scores.shape[0]
    _, top, one_minus_rho_top = _softmax(scores, rho)
    denominator = 0.0
    for i in range(n):
        denominator += gains[i] - gamma[i]
    inv_denominator = 1.0 / denominator
    for i in range(n):
        g = rho[i] - (gains[i] - gamma[i]) * inv_denominator
        acc[i] = g
        term[i] = g

    _add_neumann_terms(rho, top, one_minus_rho_top, n_terms, term, acc)

    for i in range(n):
        grad_out[i] = acc[i] * (weights[i] if has_weights else 1.0)
    _write_softmax_hessian(rho, top, one_minus_rho_top, weights, has_weights, hess_out)


@njit(parallel=True, cache=True)
def _xendcg_gradient_hessian(
    raw_scores, gains, gamma, offsets, active, n_terms, sample_weight,
    has_weights, rho, term, acc, grad_out, hess_out,
):
    """Run :func:`_xendcg_one_query` on every active query, in parallel.

    Inactive queries (``active[q] == 0``) get zero gradients and hessians.
    Each query is handled by one thread with its own slices of the per-row
    scratch arrays ``rho``, ``term`` and ``acc``, so results do not depend on
    the number of threads.
    """
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start = offsets[q]
        end = offsets[q + 1]
        if not active[q]:
            grad_out[start:end] = 0.0
            hess_out[start:end] = 0.0
            continue
        _xendcg_one_query(
            raw_scores[start:end],
            gains[start:end],
            gamma[start:end],
            n_terms,
            sample_weight[start:end] if has_weights else sample_weight,
            has_weights,
            rho[start:end],
            term[start:end],
            acc[start:end],
            grad_out[start:end],
            hess_out[start:end],
        )


_xendcg_gradient_hessian_serial = serial_twin(_xendcg_gradient_hessian)

# Fewer rows than this get their gradients from the serial twin of the kernel
# (see sklearn_ltr._utils.parallel): about 20 ns per row, so under 0.1 ms of work,
# where two threads save little once woken (about 0.04 ms); and no parallel
# kernel to compile for a small fit. At 10,000, MQ2008 fold 1 (9,630 rows)
# ran serially: 0.107 s of gradients in a 500-tree fit on 2 threads, 0.085 s
# in parallel.
_MIN_PARALLEL_ROWS = 5_000


class XENDCGObjective(BaseObjective):
    """XE-NDCG: softmax cross entropy against ``phi``, with Newton-like leaves.

    For each query with scores ``s`` and labels ``y``, at every iteration::

        gamma_i ~ U[0, 1)                     (fresh draws, prepare_iteration)
        rho     = softmax(s)
        phi_i   = (2**y_i - gamma_i) / sum_j (2**y_j - gamma_j)
        loss    = -sum_i phi_i * log(rho_i)
        g_i     = rho_i - phi_i               (exact gradient of the loss)

    The Hessian of the loss is ``H = diag(rho) - rho rho^T``. Bruch (section
    4.4) writes ``H = D (I - S)`` with ``D = diag(rho * (1 - rho))`` and
    ``S[k, i] = rho_i / (1 - rho_k)`` for ``i != k`` (0 on the diagonal), and
    approximates the Newton direction ``H^-1 g`` by the truncated Neumann
    series::

        v = (I + S + ... + S^K) D^-1 g,       K = hessian_terms

    The booster, however, needs one (gradient, hessian) pair per row and sets
    a leaf to ``-sum(G) / sum(H)``. As LightGBM's ``rank_xendcg`` does, each
    row gets::

        H_k = rho_k * (1 - rho_k)             (= D_kk)
        G_k = D_kk * v_k = g_k + t1_k + ... + tK_k

    so that a leaf holding the single row ``k`` takes exactly the paper's step
    ``-v_k``, and a larger leaf takes the hessian-weighted mean of its rows'
    steps. The correction terms come from running sums in O(n) per term::

        t0_k     = g_k
        t(m+1)_k = rho_k * sum_{i != k} tm_i / (1 - rho_i)

    since ``D_kk (S^(m+1) D^-1 g)_k = rho_k sum_{i != k} rho_i (S^m D^-1 g)_i``
    and ``rho_i (S^m D^-1 g)_i = tm_i / (1 - rho_i)``. ``hessian_terms=0`` is the diagonal Newton step (ListNet's
    ``G = g``), 1 is ``I + S`` and 2, the default, is the paper's
    ``I + S + S^2`` and LightGBM's ``rank_xendcg``. Each row's ``G`` and ``H``
    are finally multiplied by its sample weight.

    The paper removes a mass ``epsilon`` from the softmax so that ``H`` is
    invertible and ``S`` has spectral radius below 1; this class uses the
    limit ``epsilon -> 0`` (as LightGBM does). Then ``S`` has the eigenvalue
    1 along the all-ones vector, the direction the loss is flat in, but
    ``sum(g) = 0`` puts no weight on it: every partial sum ``v`` satisfies
    ``sum_k D_kk v_k = 0`` and converges, as ``K`` grows, to the solution of
    ``H v = g`` with that normalisation whenever the other eigenvalues of
    ``S`` lie inside the unit circle (they are small for queries of many
    documents; for two documents ``S`` has the eigenvalue -1 and the series
    oscillates). Every ``G`` sums to 0 over the query for any ``K``.

    Queries with one document, or whose labels are all equal, contribute
    zeros (the random ``gamma`` alone would otherwise give them a target).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Non-negative relevance labels, rows in query order.
    offsets : array-like of shape (n_queries + 1,)
        Query boundaries: query ``q`` is rows ``offsets[q]:offsets[q + 1]``.
    sample_weight : array-like of shape (n_samples,), default=None
        Per-row weights multiplying gradients and hessians.
    hessian_terms : int, default=2
        Number ``K`` of Neumann-series terms beyond the identity in the
        inverse-Hessian approximation: 0 gives the diagonal Newton step, 1
        uses ``I + S``, 2 uses ``I + S + S^2`` (the paper's choice). Each term
        costs two passes over the query.

    Notes
    -----
    ``gamma`` is drawn by :meth:`prepare_iteration`, one value per training
    row from the fit's generator, including rows of queries that contribute
    nothing; a query's draws therefore depend only on its rows' positions,
    and results do not depend on the number of threads.

    :meth:`loss` uses ``gamma = 0.5`` (its mean) for every document instead of
    the current draws, so that it is a deterministic function of the scores:
    the mean over contributing queries of ``-sum_i phi_i log(rho_i)``, queries
    weighted by the mean sample weight of their rows.

    If a query's scores are so spread out that ``1 - rho`` of its top document
    underflows, that quantity is floored at 1e-300 when dividing by it (the
    hessian is then 0 as it should be), which keeps everything finite.

    Unlike LightGBM, labels may be any non-negative numbers (not only
    integers) and all-equal-label queries contribute nothing.

    References
    ----------
    S. Bruch. An Alternative Cross Entropy Loss for Learning-to-Rank.
    WWW 2020 (arXiv:1911.09798), sections 3 and 4.4.
    """

    name = "xendcg"

    def __init__(
        self, y, offsets, sample_weight=None, *, hessian_terms=2, **params
    ):
        super().__init__(y, offsets, sample_weight, **params)
        self.hessian_terms = _check_hessian_terms(hessian_terms)
        if np.any(self.y < 0):
            raise ValueError("y must be non-negative for the xendcg objective.")
        with np.errstate(over="ignore"):
            self.gains = np.exp2(self.y)
        limit = max_exponential_label(self.y.shape[0])
        if self.y.size and self.y.max() > limit:
            raise ValueError(
                f"y is too large: over {self.y.shape[0]} rows, sums of the gains 2**y "
                f"overflow float64 for labels above {limit}."
            )

        sizes = np.diff(self.offsets)
        lowest = _query_reduce(np.minimum, self.y, self.offsets)
        highest = _query_reduce(np.maximum, self.y, self.offsets)
        self._active = ((sizes >= 2) & (highest > lowest)).astype(np.uint8)
        # Target of loss(): phi with gamma = 0.5 everywhere.
        numerators = self.gains - _LOSS_GAMMA
        totals = _query_reduce(np.add, numerators, self.offsets)
        self._loss_target = numerators / np.repeat(
            np.where(totals > 0.0, totals, 1.0), sizes
        )

        n = self.y.shape[0]
        # Allocated once: the draws and the kernels' per-row scratch space.
        self._gamma = np.full(n, _LOSS_GAMMA)
        self._rho = np.empty(n)
        self._term = np.empty(n)
        self._acc = np.empty(n)
        self._weights = (
            np.empty(0) if self.sample_weight is None else self.sample_weight
        )

    def prepare_iteration(self, rng):
        """Draw a fresh ``gamma ~ U[0, 1)`` for every row.

        Parameters
        ----------
        rng : numpy.random.Generator
            The fit's seeded generator; exactly ``n_samples`` doubles are
            drawn from it.
        """
        rng.random(out=self._gamma)

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        """Fill the corrected gradients ``G`` and hessians ``rho * (1 - rho)``.

        Uses the ``gamma`` of the last :meth:`prepare_iteration` (0.5 for
        every row before the first one).

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
            _xendcg_gradient_hessian, _xendcg_gradient_hessian_serial,
            raw_scores.shape[0], _MIN_PARALLEL_ROWS,
        )
        kernel(
            raw_scores, self.gains, self._gamma, self.offsets, self._active,
            self.hessian_terms, self._weights, self.sample_weight is not None,
            self._rho, self._term, self._acc, grad_out, hess_out,
        )

    def loss(self, raw_scores):
        """Mean cross entropy against ``phi`` with ``gamma = 0.5``.

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
            raw_scores, self._loss_target, self.offsets, self._active, per_query
        )
        return _mean_over_active(per_query, self._active, self.query_weights)
