"""LambdaMART: LambdaRank gradients weighted by |delta NDCG|, Newton leaves.

The lambdas follow LightGBM's ``LambdarankNDCG`` objective
(``src/objective/rank_objective.hpp``) pair for pair; see
:class:`LambdaRankObjective` for the few deliberate differences.
"""

import numba
import numpy as np
from numba import get_thread_id, njit, prange

from .._utils.parallel import per_thread_scratch, pick, serial_twin
from .._utils.sorting import argsort_descending
from .._utils.sums import fixed_order_dot
from ..metrics._checks import check_label_gain, label_gains, max_exponential_label
from ._base import (
    BaseObjective,
    _check_positive_float,
    _check_positive_int,
)
from ._dcg import (
    _discounts,
    _inverse_max_dcg,
    _inverse_max_dcg_of_gains,
    _label_gain,
    _ndcg_at_k,
)
from ._lambda_pairs import _pairs_of_lowest_gain_rank, _pairs_of_rank

# LightGBM writes this constant as the float literal 0.01f; using its float32
# value keeps our normalised |delta NDCG| equal to theirs.
_SCORE_GAP_EPS = float(np.float32(0.01))

# exp(+-x) is finite and normal for |x| <= 700, so a query whose scores span at
# most 700 / sigma can use per-document exponentials (see _lambdarank_one_query).
_MAX_EXP_SPAN = 700.0

# A rank with its query's lowest gain takes the pairs one at a time
# (_pairs_of_lowest_gain_rank) when fewer than one in this many of the ranks
# below it have a higher gain; otherwise the vectorised _pairs_of_rank,
# which computes every pair, is faster. Either gives the same bits. (One
# thread, MQ2008, 81% of rows at label 0: the kernel took 0.49 ms a call
# against 0.67 with every pair computed, and make_ranking data, half at
# label 0, the same 8.3 ms; 3 was within the noise of 4, 2 made
# make_ranking data about 4% slower and 8 made MQ2008 about 10% slower.)
_SPARSE_PAIRS_RATIO = 4

# Rows of a thread's work space (lambdarank_scratch): a query's scores and
# gains in rank order, its lambdas and hessians, its exponentials, one
# rank's pair terms, and the ranks whose gain is above the query's lowest
# (int64, in the bytes of a float64 row).
N_WORK_ROWS = 9
(_SORTED_SCORES, _SORTED_GAINS, _LAMBDAS, _HESSIANS, _EXP, _EXP_INV, _PAIR_LAMBDAS,
 _PAIR_HESSIANS, _HIGHER_RANKS) = range(N_WORK_ROWS)


@njit(cache=True)
def _query_lambda_factor(pair_lambda_sum):
    """LightGBM's per-query lambda normalisation (``lambdarank_norm``): the
    factor ``log2(1 + S) / S`` that scales a query's lambdas and hessians,
    ``S`` the sum of the pairs' ``|lambda|`` counting each pair for both its
    rows; 1 if ``S`` is 0."""
    if pair_lambda_sum > 0.0:
        return np.log2(1.0 + pair_lambda_sum) / pair_lambda_sum
    return 1.0


@njit(cache=True)
def _sort_ranks(scores, order, sorted_scores):
    """Sort ``order`` so that ``scores[order]`` is descending, ties by row.

    ``order`` holds a permutation of ``0 .. n - 1`` on entry, normally the
    previous iteration's ranking; ``sorted_scores`` receives
    ``scores[order]``. Ordering by (score descending, row ascending) is a
    total order, so the result is the stable descending argsort whatever
    ``order`` held (LightGBM's ``std::stable_sort`` with ``score[a] >
    score[b]``). The starting permutation only changes the speed: scores move
    little between boosting iterations, so insertion sort from the previous
    ranking does few moves, and a mergesort takes over past
    ``n * log2(n)`` moves to bound the cost.
    """
    n = scores.shape[0]
    for r in range(n):
        sorted_scores[r] = scores[order[r]]
    budget = n * max(1, int(np.log2(n)))
    moves = 0
    for a in range(1, n):
        key = sorted_scores[a]
        row = order[a]
        b = a - 1
        while b >= 0 and (
            sorted_scores[b] < key
            or (sorted_scores[b] == key and order[b] > row)
        ):
            sorted_scores[b + 1] = sorted_scores[b]
            order[b + 1] = order[b]
            b -= 1
        sorted_scores[b + 1] = key
        order[b + 1] = row
        moves += a - 1 - b
        if moves > budget:
            fresh = argsort_descending(scores)
            for r in range(n):
                order[r] = fresh[r]
                sorted_scores[r] = scores[fresh[r]]
            return


@njit(cache=True)
def _lambdarank_one_query(
    scores,
    gains,
    inverse_max_dcg,
    discounts,
    sigma,
    truncation_level,
    normalize,
    order,
    weights,
    has_weights,
    grad_out,
    hess_out,
    work,
):
    """Lambda gradients and hessians of one query.

    Parameters
    ----------
    scores : ndarray of shape (n,), dtype float64
        Raw scores of the query's documents.
    gains : ndarray of shape (n,), dtype float64
        Gains ``2**y - 1`` (or ``label_gain[y]``); a pair with equal gains
        adds nothing.
    inverse_max_dcg : float
        ``1 / maxDCG@truncation_level`` of the query, 0 if that DCG is 0.
    discounts : ndarray of shape (>= n,), dtype float64
        ``1 / log2(2 + rank)``.
    sigma : float
        Sigmoid steepness.
    truncation_level : int
        Only pairs whose better-ranked document is in the top
        ``truncation_level`` positions contribute.
    normalize : bool
        Divide each pair's weight by ``0.01 + |score gap|`` and rescale the
        query's lambdas by ``log2(1 + S) / S``.
    order : ndarray of shape (n,), dtype int32
        A permutation of ``0 .. n - 1``, ideally the previous ranking;
        overwritten with the current one (see :func:`_sort_ranks`).
    weights : ndarray of shape (n,), dtype float64
        Sample weights multiplying each row's gradient and hessian after the
        normalisation (as LightGBM does); read only if ``has_weights``.
    has_weights : bool
    grad_out, hess_out : ndarray of shape (n,), dtype float32
        Outputs (slices of the booster's buffers).
    work : ndarray of shape (N_WORK_ROWS, >= n), dtype float64
        Scratch, overwritten (see :func:`lambdarank_scratch`).
    """
    n = scores.shape[0]
    if n < 2 or inverse_max_dcg == 0.0:
        # One document, or all labels 0: no pair can change NDCG.
        grad_out[:] = 0.0
        hess_out[:] = 0.0
        return
    # Work in rank order on contiguous copies so the pair loop streams through
    # memory; accumulate in float64 and round to float32 once per row.
    s = work[_SORTED_SCORES, :n]
    _sort_ranks(scores, order, s)
    g = work[_SORTED_GAINS, :n]
    lowest_gain = np.inf
    for r in range(n):
        g[r] = gains[order[r]]
        lowest_gain = min(lowest_gain, g[r])
    # The ranks whose gain is above the query's lowest, in rank order.
    higher = work[_HIGHER_RANKS, :n].view(np.int64)
    n_higher = 0
    for r in range(n):
        # Without a branch: half the ranks may qualify, in no pattern.
        higher[n_higher] = r
        n_higher += g[r] > lowest_gain
    first_higher_after = 0
    lam = work[_LAMBDAS, :n]
    lam[:] = 0.0
    hess = work[_HESSIANS, :n]
    hess[:] = 0.0
    e = work[_EXP, :n]
    e_inv = work[_EXP_INV, :n]
    pair_signed = work[_PAIR_LAMBDAS, :n]
    pair_hess = work[_PAIR_HESSIANS, :n]

    # LightGBM divides by the score gap only if the scores are not all equal.
    if normalize and s[0] != s[n - 1]:
        gap_eps, gap_scale = _SCORE_GAP_EPS, 1.0
    else:
        gap_eps, gap_scale = 1.0, 0.0
    span = sigma * (s[0] - s[n - 1])
    factored = span <= _MAX_EXP_SPAN
    if factored:
        # exp(sigma * (s_j - s_i)) = e[j] * e_inv[i]: n exponentials per query
        # instead of one per pair, all finite and normal thanks to the span.
        for r in range(n):
            x = sigma * (s[r] - s[0])
            e[r] = np.exp(x)
            e_inv[r] = np.exp(-x)
    total = 0.0
    for i in range(min(n - 1, truncation_level)):
        if factored:
            e_i = e[i]
            e_inv_i = e_inv[i]
        else:
            # Rare very spread-out scores: exponentials relative to s[i],
            # which may overflow to inf and then give p = 0 exactly.
            for r in range(i + 1, n):
                x = sigma * (s[r] - s[i])
                e[r] = np.exp(x)
                e_inv[r] = np.exp(-x)
            e_i = 1.0
            e_inv_i = 1.0
        if g[i] > lowest_gain:
            first_higher_after += 1
            sparse = False
        else:
            sparse = _SPARSE_PAIRS_RATIO * (n_higher - first_higher_after) < n - i - 1
        if sparse:
            total += _pairs_of_lowest_gain_rank(
                i, s, g, e, e_inv_i, discounts, inverse_max_dcg, sigma, gap_eps,
                gap_scale, higher[first_higher_after:n_higher], lam, hess,
            )
        else:
            total += _pairs_of_rank(
                i, s, g, e, e_inv, e_i, e_inv_i, discounts, inverse_max_dcg,
                sigma, gap_eps, gap_scale, lam, hess, pair_signed, pair_hess,
            )
    factor = _query_lambda_factor(2.0 * total) if normalize else 1.0
    for r in range(n):
        row = order[r]
        scale = factor * weights[row] if has_weights else factor
        grad_out[row] = lam[r] * scale
        hess_out[row] = hess[r] * scale


@njit(parallel=True, cache=True)
def _lambdarank_gradient_hessian(
    raw_scores,
    gains,
    offsets,
    inverse_max_dcg,
    discounts,
    sample_weight,
    has_weights,
    sigma,
    truncation_level,
    normalize,
    rank_order,
    grad_out,
    hess_out,
    scratch,
):
    """Run :func:`_lambdarank_one_query` on every query, in parallel.

    Queries are independent and each is handled by one thread start to
    finish, so the result does not depend on the number of threads.
    ``sample_weight`` is ignored unless ``has_weights``. ``rank_order`` holds
    each query's previous ranking (query-local positions) and is updated.
    ``scratch[t]`` is the work space of numba's thread ``t`` (see
    :func:`lambdarank_scratch`).
    """
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start = offsets[q]
        end = offsets[q + 1]
        _lambdarank_one_query(
            raw_scores[start:end],
            gains[start:end],
            inverse_max_dcg[q],
            discounts,
            sigma,
            truncation_level,
            normalize,
            rank_order[start:end],
            sample_weight[start:end] if has_weights else sample_weight,
            has_weights,
            grad_out[start:end],
            hess_out[start:end],
            scratch[get_thread_id()],
        )


_lambdarank_gradient_hessian_serial = serial_twin(_lambdarank_gradient_hessian)

# Fewer rows than this get their lambdas from the serial twin of the kernel
# (see sklearn_ltr._utils.parallel): about 65 ns per row with 20 documents per
# query, so under 0.15 ms of work, where two threads save little once woken
# (about 0.04 ms); and no parallel kernel to compile for a small fit.
_MIN_PARALLEL_ROWS = 2_000


def lambdarank_scratch(offsets):
    """Work space of :func:`_lambdarank_gradient_hessian`, allocated once
    per fit: a ``(N_WORK_ROWS, longest query)`` array for every thread numba
    may start (``NUMBA_NUM_THREADS``), indexed by thread id. Allocating
    each query's eight arrays afresh took 3 to 4% of the kernel's time
    (MQ2008, one thread: 0.97 against 0.94 ms a call)."""
    return per_thread_scratch((N_WORK_ROWS, int(np.max(np.diff(offsets), initial=0))))


def lambdarank_kernel(n_rows):
    """The parallel or the serial :func:`_lambdarank_gradient_hessian` for
    ``n_rows`` rows."""
    return pick(_lambdarank_gradient_hessian, _lambdarank_gradient_hessian_serial, n_rows,
                _MIN_PARALLEL_ROWS)


class LambdaRankObjective(BaseObjective):
    """LambdaMART objective: pairwise RankNet gradients weighted by |delta NDCG|.

    For each query, documents are sorted by score (stable, descending). Every
    pair of ranks ``(i, j)`` with ``i < min(n - 1, truncation_level)``,
    ``j > i`` and different labels contributes, with ``h``/``l`` the more/less
    relevant document of the pair::

        w     = |G(y_h) - G(y_l)| * |D(r_h) - D(r_l)| / maxDCG@truncation_level
        w    /= 0.01 + |s_h - s_l|           (normalize, scores not all equal)
        p     = 1 / (1 + exp(sigma * (s_h - s_l)))
        g_h  -= sigma * w * p                  g_l += sigma * w * p
        h_h  += sigma**2 * w * p * (1 - p)     h_l += the same

    with ``D(r) = 1 / log2(2 + r)`` and the gain ``G(y) = 2**y - 1``, or
    ``G(y) = label_gain[y]`` with a gain table. Gradients are derivatives of the loss
    with respect to the scores, so the more relevant document of a pair gets a
    negative gradient. With ``normalize_lambdas``, all gradients and hessians
    of a query are then multiplied by ``log2(1 + S) / S``, where
    ``S = sum over pairs of 2 * sigma * w * p``. Finally each row's gradient
    and hessian are multiplied by its sample weight.

    This is LightGBM's ``lambdarank`` objective with ``sigmoid=sigma``,
    ``lambdarank_truncation_level=truncation_level`` and
    ``lambdarank_norm=normalize_lambdas`` and ``label_gain``. Deliberate
    differences:

    - the sigmoid is computed exactly (as ``1 / (1 + exp(a) * exp(-b))`` with
      per-document exponentials) instead of read from LightGBM's
      1,048,576-bin lookup table (which is off by up to ~1e-5 per pair);
    - each row's lambdas are accumulated in float64 and rounded to float32
      once, instead of being accumulated in float32 pair by pair;
    - without ``label_gain``, labels may be any finite non-negative numbers
      (gain ``2**y - 1``), while LightGBM requires integers below 31;
      queries may be larger than LightGBM's limit of 10,000 rows;
    - ``label_gain`` must be non-decreasing (LightGBM takes any table, but
      its maximum DCG ranks by label, which is the ideal ranking only for
      non-decreasing gains);
    - scores equal to LightGBM's ``kMinScore`` (-inf) get no special case.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Non-negative relevance labels, rows in query order.
    offsets : array-like of shape (n_queries + 1,)
        Query boundaries: query ``q`` is rows ``offsets[q]:offsets[q + 1]``.
    sample_weight : array-like of shape (n_samples,), default=None
        Per-row weights multiplying gradients and hessians.
    sigma : float, default=1.0
        Steepness of the pairwise logistic function (LightGBM's ``sigmoid``).
    truncation_level : int, default=30
        Pairs are formed only with a better-ranked document in the top
        ``truncation_level`` positions, and NDCG is normalised by the maximum
        DCG at this level (LightGBM's ``lambdarank_truncation_level``).
    normalize_lambdas : bool, default=True
        Divide pair weights by the score gap and rescale each query's lambdas
        (LightGBM's ``lambdarank_norm``).
    label_gain : array-like of shape (n_labels,), default=None
        Gain of each label (LightGBM's ``label_gain``): finite, non-negative,
        non-decreasing; labels must then be integers in ``[0, n_labels)``.
        None means ``2**y - 1``.

    Notes
    -----
    :meth:`loss` is ``1 - mean NDCG@truncation_level`` over queries (ties in
    score kept in row order, queries without relevant documents count as
    NDCG 1, queries weighted by the mean sample weight of their rows). The
    lambdas are not the gradient of any loss, so this is a monitor, not the
    function being differentiated.

    :meth:`gradient_hessian` remembers each query's ranking and starts the
    next call's sort from it, which is faster because scores change little
    between boosting iterations; the result does not depend on it.

    References
    ----------
    C. J. C. Burges. From RankNet to LambdaRank to LambdaMART: An Overview.
    Microsoft Research Technical Report MSR-TR-2010-82, 2010.

    K. M. Svore, M. N. Volkovs, C. J. C. Burges. Learning to Rank with
    Multiple Objective Functions. WWW 2011, section 3.

    F. Fineis. LambdaRank in LightGBM, blog post, 2021 (and its Korean
    translation "LGBM 모델에서 lambdarank objective의 내부작동원리", 2022):
    the mapping of the lambda gradient and hessian to LightGBM's code.
    """

    name = "lambdarank"

    def __init__(
        self,
        y,
        offsets,
        sample_weight=None,
        *,
        sigma=1.0,
        truncation_level=30,
        normalize_lambdas=True,
        label_gain=None,
        **params,
    ):
        super().__init__(y, offsets, sample_weight, **params)
        self.label_gain = None if label_gain is None else check_label_gain(label_gain)
        if self.label_gain is None and np.any(self.y < 0):
            raise ValueError("y must be non-negative for the lambdarank objective.")
        self.sigma = _check_positive_float(sigma, "sigma")
        self.truncation_level = _check_positive_int(
            truncation_level, "truncation_level"
        )
        if not isinstance(normalize_lambdas, (bool, np.bool_)):
            raise ValueError(
                f"normalize_lambdas must be a bool, got {normalize_lambdas!r}."
            )
        self.normalize_lambdas = bool(normalize_lambdas)

        if self.label_gain is not None:
            self.gains = label_gains(self.y, self.label_gain)
        else:
            with np.errstate(over="ignore"):
                self.gains = _label_gain(self.y)
            limit = max_exponential_label(self.y.shape[0])
            if self.y.size and self.y.max() > limit:
                raise ValueError(
                    f"y is too large: over {self.y.shape[0]} rows, sums of the gains "
                    f"2**y - 1 overflow float64 for labels above {limit}."
                )
        sizes = np.diff(self.offsets)
        self.discounts = _discounts(max(int(sizes.max(initial=0)), 1))
        self.inverse_max_dcg = self._inverse_max_dcg_at(self.truncation_level)
        # Each query's ranking at the previous call, as query-local positions;
        # it only speeds up the next sort (see _sort_ranks), never changes it.
        self._rank_order = (
            np.arange(self.y.shape[0], dtype=np.int64)
            - np.repeat(self.offsets[:-1], sizes)
        ).astype(np.int32)
        self._weights = np.empty(0) if self.sample_weight is None else self.sample_weight
        # The lambda kernel's work space, made at the first gradient_hessian
        # (an objective made only for its loss never needs it).
        self._scratch = None

    def _inverse_max_dcg_at(self, k):
        """``1 / maxDCG@k`` of every query, with this objective's gains."""
        out = np.empty(self.n_queries)
        if self.label_gain is None:
            _inverse_max_dcg(self.y, self.offsets, k, out)
        else:
            _inverse_max_dcg_of_gains(self.gains, self.offsets, k, out)
        return out

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        """Fill the lambda gradients and hessians of every row.

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
        lambdarank_kernel(raw_scores.shape[0])(
            raw_scores,
            self.gains,
            self.offsets,
            self.inverse_max_dcg,
            self.discounts,
            self._weights,
            self.sample_weight is not None,
            self.sigma,
            self.truncation_level,
            self.normalize_lambdas,
            self._rank_order,
            grad_out,
            hess_out,
            self._work_space(),
        )

    def _work_space(self):
        """The lambda kernel's scratch (:func:`lambdarank_scratch`), made on
        first use, and again in a process that may start more threads than
        the one that pickled this objective."""
        if self._scratch is None or self._scratch.shape[0] < numba.config.NUMBA_NUM_THREADS:
            self._scratch = lambdarank_scratch(self.offsets)
        return self._scratch

    def loss(self, raw_scores):
        """``1 - mean NDCG@truncation_level`` over queries.

        Parameters
        ----------
        raw_scores : ndarray of shape (n_samples,), dtype float64
            Raw scores, rows in query order.

        Returns
        -------
        loss : float
            In ``[0, 1]``; 0 when every query is ranked ideally.
        """
        raw_scores = self._check_scores(raw_scores)
        ndcg = np.empty(self.n_queries)
        _ndcg_at_k(
            self.gains,
            raw_scores,
            self.offsets,
            self.inverse_max_dcg,
            self.discounts,
            self.truncation_level,
            ndcg,
        )
        if self.n_queries == 0:
            return 0.0
        if self.query_weights is None:
            return float(1.0 - ndcg.mean())
        total = self.query_weights.sum()
        if total == 0.0:
            return 0.0
        return 1.0 - fixed_order_dot(self.query_weights, ndcg) / float(total)
