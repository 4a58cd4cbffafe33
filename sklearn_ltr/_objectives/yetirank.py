"""YetiRank: pairwise logistic loss on the neighbouring pairs of randomly
perturbed rankings (Gulin, Kuralenok and Pavlov, JMLR W&CP 14, 2011), as
CatBoost implements it; see :class:`YetiRankObjective`.
"""

import numpy as np
from numba import njit, prange

from .._utils.parallel import pick, serial_twin
from .._utils.pcg64 import random_into
from .._utils.sorting import COUNTING_MAX_KEYS, order_by_counting, sort_in_place
from ._base import BaseObjective, _check_positive_int, _mean_over_active, _query_reduce

# CatBoost's constant factor of every pair weight ("magicConst = 0.15; // Like
# in GPU" in yetirank_helpers.cpp). It cancels in Newton leaves but sets the
# scale the hessians are compared with (l2_regularization,
# min_hessian_to_split), so it is kept as CatBoost has it.
PAIR_WEIGHT_SCALE = 0.15


@njit(cache=True)
def _noisy_order(exp_scores, uniforms, keys, spare, order):
    """Fill ``order`` with the documents by ``exp_scores * u / (1 - u)``
    descending, ties in row order (CatBoost's StableSort with ``>``).

    ``exp_scores`` are ``exp(s - max(s))``: the key is the exponential of
    ``s + log(u / (1 - u))`` up to a common factor, so the order is that of
    the scores plus logistic noise (``u = 0`` is noise ``-inf``), without a
    logarithm per draw. Each key is sorted as one integer: the bits of the
    non-negative double (which order as the doubles do) with its last ``b``
    bits replaced by the document's row, ``2**b`` the smallest power of two
    not below the query's size. Keys that differ only in those bits, by less
    than ``2**(b - 52)`` relative (``2**-45`` for 128 documents), count as
    ties. ``keys`` and ``spare`` (int64) are scratch space of the query's
    length: nothing is allocated.
    """
    n = exp_scores.shape[0]
    index_bits = 0
    while (1 << index_bits) < n:
        index_bits += 1
    mask = (1 << index_bits) - 1
    for i in range(n):
        u = uniforms[i]
        bits = np.float64(exp_scores[i] * (u / (1.0 - u))).view(np.int64)
        # Negated so that the ascending sort puts the largest key, and among
        # equal keys the lowest row (the largest ``mask - i``), first.
        keys[i] = -(((bits >> index_bits) << index_bits) | (mask - i))
    # The keys are distinct (each holds its row), so both ways give the
    # same order.
    if n <= COUNTING_MAX_KEYS:
        order_by_counting(keys, order)
        return
    sort_in_place(keys, spare)
    for j in range(n):
        order[j] = mask - ((-keys[j]) & mask)


@njit(cache=True, error_model="numpy")
def _exp_of_shifted_scores(scores, out):
    """``out = exp(scores - max(scores))``, in (0, 1]."""
    top = scores.max()
    for i in range(scores.shape[0]):
        out[i] = np.exp(scores[i] - top)


@njit(cache=True)
def _neighbour_pairs(order, labels, decay, winners, losers, weights):
    """The pairs of neighbours in ``order`` whose labels differ: winner
    (higher label), loser and weight ``PAIR_WEIGHT_SCALE * decay**j *
    |label gap|`` for the pair at positions ``j, j + 1``, in order of ``j``,
    in the first entries of ``winners``, ``losers`` and ``weights``; returns
    how many. A pair of equal labels has weight 0 and is left out: it would
    add exact zeros to the gradients (for finite scores), and most
    neighbours share label 0 in web data (two thirds of them on MQ2008, in
    a random order)."""
    factor = PAIR_WEIGHT_SCALE
    n_pairs = 0
    for j in range(order.shape[0] - 1):
        a = order[j]
        b = order[j + 1]
        # Written unconditionally and kept by advancing n_pairs, rather than
        # behind a branch on whether the labels differ, which follows no
        # pattern a predictor could learn.
        if labels[a] >= labels[b]:
            winners[n_pairs] = a
            losers[n_pairs] = b
        else:
            winners[n_pairs] = b
            losers[n_pairs] = a
        weights[n_pairs] = factor * abs(labels[a] - labels[b])
        n_pairs += labels[a] != labels[b]
        factor *= decay
    return n_pairs


@njit(cache=True, error_model="numpy")
def _yetirank_one_query(
    scores, labels, uniforms, first_draw, decay, weights, has_weights, exp_scores, keys, order,
    spare, winners, losers, pair_weights, grad, hess, grad_out, hess_out,
):
    """Gradients and hessians of one query, summed over its permutations.

    Parameters
    ----------
    scores, labels : ndarray of shape (n,), dtype float64
        Raw scores and labels of the query's documents, ``n >= 2``.
    uniforms : ndarray of shape (n_permutations, n_draws), dtype float64
        Draws ``u`` in [0, 1) of the logistic noise ``log(u / (1 - u))``
        added to the scores, one row per permutation; the query's are the
        columns ``first_draw:first_draw + n``. (Sliced here, row by row, so
        that each slice is contiguous: numba compiles the sort's loads from
        a contiguous array without a stride multiplication.)
    first_draw : int
    decay : float
    weights : ndarray of shape (n,)
        Sample weights, read only if ``has_weights``.
    has_weights : bool
    exp_scores, pair_weights, grad, hess : ndarray of shape (n,), dtype float64
        Scratch space.
    keys, order, spare, winners, losers : ndarray of shape (n,), dtype int64
        Scratch space.
    grad_out, hess_out : ndarray of shape (n,), dtype float32
        Outputs (slices of the booster's buffers).

    All the 1-d arrays are contiguous.
    """
    n = scores.shape[0]
    n_permutations = uniforms.shape[0]
    _exp_of_shifted_scores(scores, exp_scores)
    grad[:] = 0.0
    hess[:] = 0.0
    for k in range(n_permutations):
        _noisy_order(exp_scores, uniforms[k, first_draw:first_draw + n], keys, spare, order)
        n_pairs = _neighbour_pairs(order, labels, decay, winners, losers, pair_weights)
        for j in range(n_pairs):
            w = pair_weights[j]
            win = winners[j]
            lose = losers[j]
            # p = sigmoid(s_lose - s_win), the pair's probability of being
            # misordered; the loss is w * log(1 + exp(s_lose - s_win)). The
            # two exponentials are at most 1 and underflow together only
            # for scores more than 700 below the query's top.
            e_win = exp_scores[win]
            e_lose = exp_scores[lose]
            total = e_win + e_lose
            if total > 0.0:
                inverse = 1.0 / total
                p = e_lose * inverse
                q = e_win * inverse
            else:
                p = 1.0 / (1.0 + np.exp(scores[win] - scores[lose]))
                q = 1.0 - p
            wp = w * p
            grad[win] -= wp
            grad[lose] += wp
            h = wp * q
            hess[win] += h
            hess[lose] += h
    inv = 1.0 / n_permutations
    for i in range(n):
        scale = inv * weights[i] if has_weights else inv
        grad_out[i] = grad[i] * scale
        hess_out[i] = hess[i] * scale


@njit(parallel=True, cache=True)
def _yetirank_gradient_hessian(
    raw_scores, labels, uniforms, offsets, active, decay, sample_weight, has_weights,
    float_scratch, int_scratch, grad_out, hess_out,
):
    """Run :func:`_yetirank_one_query` on every active query, in parallel.

    ``float_scratch`` (float64) and ``int_scratch`` (int64) have shapes
    ``(4, n_samples)`` and ``(5, n_samples)``: one row per scratch array of
    :func:`_yetirank_one_query`. Inactive queries get zero gradients and
    hessians. Each query uses only its own columns of ``uniforms`` and of the
    scratch arrays, so results do not depend on the number of threads.
    """
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start = offsets[q]
        end = offsets[q + 1]
        if not active[q]:
            grad_out[start:end] = 0.0
            hess_out[start:end] = 0.0
            continue
        # Each scratch row sliced at once (not a 2-d slice, then its rows):
        # the rows stay contiguous arrays for numba.
        _yetirank_one_query(
            raw_scores[start:end], labels[start:end], uniforms, start, decay,
            sample_weight[start:end] if has_weights else sample_weight, has_weights,
            float_scratch[0, start:end], int_scratch[0, start:end], int_scratch[1, start:end],
            int_scratch[2, start:end], int_scratch[3, start:end], int_scratch[4, start:end],
            float_scratch[1, start:end], float_scratch[2, start:end],
            float_scratch[3, start:end], grad_out[start:end], hess_out[start:end],
        )


_yetirank_gradient_hessian_serial = serial_twin(_yetirank_gradient_hessian)

# As for XE-NDCG (see sklearn_ltr._utils.parallel): below this many rows the serial
# twin runs. Each row takes part in ``permutations`` sorts, about 135 ns a row
# with the default 10 (LightGBM's example, 3,005 rows: 0.41 ms serial), nine
# times the work per row of XE-NDCG, hence a lower threshold: 2,000 rows are
# 0.27 ms of work. At 5,000, the example's gradients were serial and took a
# fifth of a 500-tree fit on 2 threads (0.32 s of 1.44; 0.21 s in parallel).
_MIN_PARALLEL_ROWS = 2_000


@njit(cache=True)
def _pair_weight_matrix(scores, labels, uniforms, decay, out):
    """``out[w, l]``: the weight of the pair (winner ``w``, loser ``l``) of
    one query averaged over the permutations of ``uniforms``. What the
    gradients of :func:`_yetirank_one_query` are built from (both use
    :func:`_noisy_order` and :func:`_neighbour_pairs`)."""
    n = scores.shape[0]
    out[:, :] = 0.0
    exp_scores = np.empty(n)
    _exp_of_shifted_scores(scores, exp_scores)
    keys = np.empty(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    spare = np.empty(n, dtype=np.int64)
    winners = np.empty(n, dtype=np.int64)
    losers = np.empty(n, dtype=np.int64)
    weights = np.empty(n)
    for k in range(uniforms.shape[0]):
        _noisy_order(exp_scores, uniforms[k], keys, spare, order)
        n_pairs = _neighbour_pairs(order, labels, decay, winners, losers, weights)
        for j in range(n_pairs):
            if weights[j] != 0.0:
                out[winners[j], losers[j]] += weights[j] / uniforms.shape[0]


@njit(parallel=True, cache=True)
def _noise_free_pair_loss(raw_scores, labels, offsets, active, decay, out):
    """Per query: ``sum w * log(1 + exp(s_lose - s_win))`` over the
    neighbouring pairs of the ranking by score (no noise, one permutation)."""
    for q in prange(offsets.shape[0] - 1):
        start = offsets[q]
        end = offsets[q + 1]
        out[q] = 0.0
        if not active[q]:
            continue
        n = end - start
        s = raw_scores[start:end]
        # u = 1/2 is noise 0: the ranking by score.
        exp_scores = np.empty(n)
        _exp_of_shifted_scores(s, exp_scores)
        order = np.empty(n, dtype=np.int64)
        _noisy_order(exp_scores, np.full(n, 0.5), np.empty(n, dtype=np.int64),
                     np.empty(n, dtype=np.int64), order)
        winners = np.empty(n, dtype=np.int64)
        losers = np.empty(n, dtype=np.int64)
        weights = np.empty(n)
        n_pairs = _neighbour_pairs(order, labels[start:end], decay, winners, losers, weights)
        total = 0.0
        for j in range(n_pairs):
            if weights[j] != 0.0:
                total += weights[j] * np.logaddexp(0.0, s[losers[j]] - s[winners[j]])
        out[q] = total


def pair_weights(scores, labels, uniforms, decay):
    """The pair-weight matrix of one query for given draws (for tests and
    inspection): ``W[w, l]``, the weight of the pair in which ``w`` (the
    higher label) should rank above ``l``, averaged over the rows of
    ``uniforms``, before sample weights.

    Parameters
    ----------
    scores, labels : array-like of shape (n,)
    uniforms : array-like of shape (n_permutations, n)
        Draws ``u`` in [0, 1) of the noise ``log(u / (1 - u))`` added to the
        scores.
    decay : float

    Returns
    -------
    W : ndarray of shape (n, n)
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    uniforms = np.ascontiguousarray(uniforms, dtype=np.float64)
    out = np.empty((scores.shape[0], scores.shape[0]))
    _pair_weight_matrix(scores, np.ascontiguousarray(labels, dtype=np.float64), uniforms,
                        float(decay), out)
    return out


class YetiRankObjective(BaseObjective):
    """YetiRank: weighted pairwise logistic loss on pairs sampled from
    noisy rankings, with Newton leaves.

    At every iteration, for each query with scores ``s`` and labels ``y``
    and for each of ``permutations`` rounds ``k``::

        u_ik ~ U[0, 1)                              (prepare_iteration)
        rank the documents by s_i + log(u_ik / (1 - u_ik)), descending
        for the neighbours a, b at positions j, j + 1 (j = 0 .. n - 2):
            w_k(a, b) = 0.15 * decay**j * |y_a - y_b|
    then with ``W(win, lose)`` the sum of ``w_k`` over the rounds in which the
    two were neighbours divided by ``permutations``, and ``win`` the one with
    the higher label, the loss of the query is::

        L = sum over pairs of W(win, lose) * log(1 + exp(s_lose - s_win))
        p = 1 / (1 + exp(s_win - s_lose))
        g_win -= W p,   g_lose += W p                (dL/ds)
        h_win += W p (1 - p),   h_lose += W p (1 - p)

    and each row's ``g`` and ``h`` are multiplied by its sample weight.
    Queries with one document or all labels equal contribute zeros.

    This is CatBoost's YetiRank ("Classic" weights, the default), read in
    ``catboost/private/libs/algo/yetirank_helpers.cpp``
    (``GenerateYetiRankPairsForQuery``, ``AddNoise`` with the default
    ``noise=Gumbel`` and ``CalcWeightsClassic``):

    - CatBoost keeps ``exp(score)`` for YetiRank (``IsStoreExpApprox`` in
      ``catboost/private/libs/algo/approx_updater_helpers.h``) and multiplies
      it by ``u / (1.000001 - u)`` with ``u`` uniform; on the score scale
      that adds ``log(u / (1 - u))``, logistic noise (the difference of two
      Gumbel variables, hence the option's name). This class does the same
      with ``exp(score - max score)`` of each query and exactly ``1 - u``
      (CatBoost's 1e-6 only guards its division).
    - The documents are sorted by the noisy value with a stable sort, and
      the ``n - 1`` pairs of neighbours get ``0.15 * decay**j * |y_a -
      y_b|`` (CatBoost's "magicConst"), added to the (higher label, lower
      label) pair; equal labels add nothing. The sums over permutations are
      divided by their number and multiplied by the query weight.
    - The gradients are those of ``TPairLogitError::CalcDersForQueries``
      (``catboost/private/libs/algo_helpers/error_functions.h``): CatBoost's
      ``Der1 = -dL/ds`` and ``Der2 = -d2L/ds2``, the signs flipped here.
    - ``permutations=10`` and ``decay=0.85`` are the defaults of
      ``GetYetiRankPermutations`` / ``GetYetiRankDecay`` in
      ``catboost/private/libs/options/loss_description.cpp`` (older
      releases had ``decay=0.99``; catboost 1.2.10 fits the same model with
      ``YetiRank`` and ``YetiRank:decay=0.85``), and catboost 1.2.10 reports
      ``leaf_estimation_method="Newton"`` for YetiRank, the leaves this
      booster grows.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Relevance labels (any finite numbers), rows in query order.
    offsets : array-like of shape (n_queries + 1,)
        Query boundaries: query ``q`` is rows ``offsets[q]:offsets[q + 1]``.
    sample_weight : array-like of shape (n_samples,), default=None
        Per-row weights multiplying gradients and hessians.
    permutations : int, default=10
        Number of noisy rankings drawn per query and iteration.
    decay : float in [0, 1], default=0.85
        Factor by which the weight of a neighbouring pair shrinks per
        position down the noisy ranking.

    Notes
    -----
    :meth:`prepare_iteration` draws ``permutations`` times one double per
    training row (in row order), including rows of queries that contribute
    nothing, so a query's draws depend only on its rows' positions: results
    do not depend on the number of threads, and a Dask shard can take its
    rows' share.

    :meth:`loss` is deterministic: the mean over contributing queries
    (weighted by their mean sample weight) of ``L`` for the single ranking
    by score without noise.

    CatBoost multiplies a query's pair weights by the query's weight; here
    each row's gradient and hessian are multiplied by the row's sample
    weight, the same when the weights are constant within each query.

    CatBoost keeps the per-pair weights in float32 and sums the gradient of
    each (winner, loser) pair once; here every sampled pair is added as it
    comes, in float64, which is the same sum up to rounding.

    References
    ----------
    A. Gulin, I. Kuralenok and D. Pavlov. Winning The Transfer Learning
    Track of Yahoo!'s Learning To Rank Challenge with YetiRank. JMLR W&CP
    14, 2011.
    """

    name = "yetirank"

    def __init__(self, y, offsets, sample_weight=None, *, permutations=10, decay=0.85,
                 **params):
        super().__init__(y, offsets, sample_weight, **params)
        self.permutations = _check_positive_int(permutations, "permutations")
        if isinstance(decay, bool) or not isinstance(decay, (int, float, np.floating)):
            raise ValueError(f"decay must be a real number in [0, 1], got {decay!r}.")
        if not 0.0 <= decay <= 1.0:
            raise ValueError(f"decay must be in [0, 1], got {decay}.")
        self.decay = float(decay)
        sizes = np.diff(self.offsets)
        lowest = _query_reduce(np.minimum, self.y, self.offsets)
        highest = _query_reduce(np.maximum, self.y, self.offsets)
        self._active = ((sizes >= 2) & (highest > lowest)).astype(np.uint8)
        n = self.y.shape[0]
        # Allocated once: the draws and the kernels' per-row scratch space.
        # Before the first prepare_iteration u = 1/2, noise 0: rank by score.
        self._uniforms = np.full((self.permutations, n), 0.5)
        self._float_scratch = np.empty((4, n))
        self._int_scratch = np.empty((5, n), dtype=np.int64)
        self._weights = np.empty(0) if self.sample_weight is None else self.sample_weight

    def prepare_iteration(self, rng):
        """Draw the noise of every row for every permutation.

        Parameters
        ----------
        rng : numpy.random.Generator
            The fit's seeded generator; ``permutations`` times, one double
            ``u`` per row is drawn from it (in row order). The kernels turn
            it into the noise ``log(u / (1 - u))``.
        """
        if isinstance(rng, np.random.Generator):
            # The same draws in the same order as one call per permutation,
            # drawn on every thread.
            random_into(rng, self._uniforms)
            return
        for k in range(self.permutations):
            # One value per row and call, so that a Dask shard can take its
            # rows' share.
            rng.random(out=self._uniforms[k])

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        """Fill the gradients and hessians of every row from the draws of
        the last :meth:`prepare_iteration`.

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
        kernel = pick(_yetirank_gradient_hessian, _yetirank_gradient_hessian_serial,
                      raw_scores.shape[0], _MIN_PARALLEL_ROWS)
        kernel(
            raw_scores, self.y, self._uniforms, self.offsets, self._active, self.decay,
            self._weights, self.sample_weight is not None, self._float_scratch,
            self._int_scratch, grad_out, hess_out,
        )

    def loss(self, raw_scores):
        """Mean pairwise logistic loss of the noise-free ranking.

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
        _noise_free_pair_loss(raw_scores, self.y, self.offsets, self._active, self.decay,
                              per_query)
        return _mean_over_active(per_query, self._active, self.query_weights)
