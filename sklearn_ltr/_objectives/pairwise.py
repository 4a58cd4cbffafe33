"""RankNet and LambdaMART for MAP, with XGBoost's ways of choosing pairs.

XGBoost's ``rank:pairwise`` (pairs weighted by 1), ``rank:map`` (pairs
weighted by |delta MAP|) and ``rank:ndcg``, each with
``lambdarank_pair_method="topk" | "mean"`` and
``lambdarank_num_pair_per_sample`` (``src/objective/lambdarank_obj.h`` and
``.cc``); see :class:`PairwiseLambdaRankObjective`. LambdaMART on the top
``truncation_level`` positions, the default, stays with
:class:`~sklearn_ltr._objectives.lambdarank.LambdaRankObjective` and its
vectorised kernel.
"""

import numpy as np
from numba import njit, prange

from .._utils.parallel import pick, serial_twin
from ._base import _check_positive_int
from .lambdarank import (
    _SCORE_GAP_EPS,
    LambdaRankObjective,
    _query_lambda_factor,
    _sort_ranks,
)

TARGET_METRICS = ("ndcg", "map", None)
PAIR_METHODS = ("topk", "all", "mean")

# Kernel codes of the pair weight.
_RANKNET, _NDCG, _MAP = 0, 1, 2
_METRIC_CODES = {None: _RANKNET, "ndcg": _NDCG, "map": _MAP}


@njit(cache=True)
def _delta_map(i, j, top_is_relevant, relevant_before, precision_sum, n_relevant):
    """|change of average precision| when the documents at ranks ``i < j``
    swap, one relevant and the other not (``top_is_relevant``: the one at
    ``i``).

    ``relevant_before[r]`` counts the relevant documents at ranks ``0 .. r``
    and ``precision_sum[r]`` sums ``rel[t] / (t + 1)`` over them. Only the
    two documents and the relevant ones strictly between them change their
    contribution: those between move one relevant document down (or up) in
    the count above them.
    """
    between = precision_sum[j - 1] - precision_sum[i]
    if top_is_relevant:
        # The relevant document moves down from i to j.
        delta = (relevant_before[i] / (i + 1.0) - relevant_before[j] / (j + 1.0) + between)
    else:
        # The relevant document moves up from j to i.
        delta = ((relevant_before[i] + 1.0) / (i + 1.0) - relevant_before[j] / (j + 1.0)
                 + between)
    return abs(delta) / n_relevant


@njit(cache=True)
def _add_pair(i, j, s, lab, g, discounts, inverse_max_dcg, relevant_before, precision_sum,
              n_relevant, metric, sigma, gap_eps, gap_scale, lam, hess):
    """Add the lambdas of the pair of ranks ``i < j`` to ``lam`` and ``hess``
    (arrays in rank order); return the pair's ``|lambda|`` (0 if the labels
    are equal)."""
    if lab[i] == lab[j]:
        return 0.0
    if lab[i] > lab[j]:
        high, low = i, j
    else:
        high, low = j, i
    if metric == _RANKNET:
        w = 1.0
    elif metric == _NDCG:
        w = abs(g[i] - g[j]) * (discounts[i] - discounts[j]) * inverse_max_dcg
    else:
        w = _delta_map(i, j, high == i, relevant_before, precision_sum, n_relevant)
    w /= gap_eps + gap_scale * (s[i] - s[j])
    p = 1.0 / (1.0 + np.exp(sigma * (s[high] - s[low])))
    pair_lambda = sigma * w * p
    pair_hessian = sigma * pair_lambda * (1.0 - p)
    lam[high] -= pair_lambda
    lam[low] += pair_lambda
    hess[high] += pair_hessian
    hess[low] += pair_hessian
    return pair_lambda


@njit(cache=True)
def _pairwise_one_query(
    scores, labels, gains, inverse_max_dcg, discounts, metric, sigma, truncation_level,
    normalize, sampled, partners, order, weights, has_weights, grad_out, hess_out,
):
    """Lambdas of one query.

    Parameters
    ----------
    scores, labels, gains : ndarray of shape (n,), dtype float64
        Raw scores, labels and NDCG gains of the query's documents.
    inverse_max_dcg : float
        ``1 / maxDCG`` (read for ``metric == _NDCG`` only).
    discounts : ndarray of shape (>= n,)
        ``1 / log2(2 + rank)``.
    metric : int
        ``_RANKNET``, ``_NDCG`` or ``_MAP``: the pair weight.
    sigma : float
    truncation_level : int
        Without ``sampled``: pairs of ranks ``i < min(n - 1,
        truncation_level)`` and every ``j > i``.
    normalize : bool
        Divide pair weights by ``0.01 + |score gap|`` (scores not all equal)
        and rescale the query: by ``log2(1 + S) / S`` or, with ``sampled``,
        by ``1 / partners.shape[1]``.
    sampled : bool
        Pairs are each document and its ``partners`` instead.
    partners : ndarray of shape (n, m), dtype int64
        Query-local rows drawn as partners of each row, -1 for none.
    order : ndarray of shape (n,), dtype int32
        Previous ranking, overwritten with the current one.
    weights : ndarray of shape (n,)
        Sample weights, read only if ``has_weights``.
    has_weights : bool
    grad_out, hess_out : ndarray of shape (n,), dtype float32
    """
    n = scores.shape[0]
    grad_out[:] = 0.0
    hess_out[:] = 0.0
    if n < 2:
        return
    s = np.empty(n)
    _sort_ranks(scores, order, s)
    lab = np.empty(n)
    g = np.empty(n)
    for r in range(n):
        lab[r] = labels[order[r]]
        g[r] = gains[order[r]]
    # Binary relevance statistics for |delta MAP| in rank order.
    relevant_before = np.empty(n)
    precision_sum = np.empty(n)
    count = 0.0
    acc = 0.0
    for r in range(n):
        count += lab[r]
        acc += lab[r] / (r + 1.0)
        relevant_before[r] = count
        precision_sum[r] = acc
    n_relevant = count
    lam = np.zeros(n)
    hess = np.zeros(n)
    if normalize and s[0] != s[n - 1]:
        gap_eps, gap_scale = _SCORE_GAP_EPS, 1.0
    else:
        gap_eps, gap_scale = 1.0, 0.0
    total = 0.0
    if sampled:
        rank_of = np.empty(n, dtype=np.int64)
        for r in range(n):
            rank_of[order[r]] = r
        for a in range(n):
            for t in range(partners.shape[1]):
                b = partners[a, t]
                if b < 0:
                    continue
                i = min(rank_of[a], rank_of[b])
                j = max(rank_of[a], rank_of[b])
                total += _add_pair(i, j, s, lab, g, discounts, inverse_max_dcg,
                                   relevant_before, precision_sum, n_relevant, metric,
                                   sigma, gap_eps, gap_scale, lam, hess)
    else:
        for i in range(min(n - 1, truncation_level)):
            for j in range(i + 1, n):
                total += _add_pair(i, j, s, lab, g, discounts, inverse_max_dcg,
                                   relevant_before, precision_sum, n_relevant, metric,
                                   sigma, gap_eps, gap_scale, lam, hess)
    factor = 1.0
    if normalize:
        if sampled:
            factor = 1.0 / partners.shape[1]
        else:
            factor = _query_lambda_factor(2.0 * total)
    for r in range(n):
        row = order[r]
        scale = factor * weights[row] if has_weights else factor
        grad_out[row] = lam[r] * scale
        hess_out[row] = hess[r] * scale


@njit(parallel=True, cache=True)
def _pairwise_gradient_hessian(
    raw_scores, labels, gains, offsets, inverse_max_dcg, discounts, metric, sigma,
    truncation_level, normalize, sampled, partners, sample_weight, has_weights, rank_order,
    grad_out, hess_out,
):
    """Run :func:`_pairwise_one_query` on every query, in parallel; each
    query is one thread's work and the draws are made beforehand, so results
    do not depend on threads. ``partners`` holds query-local rows."""
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start = offsets[q]
        end = offsets[q + 1]
        _pairwise_one_query(
            raw_scores[start:end], labels[start:end], gains[start:end], inverse_max_dcg[q],
            discounts, metric, sigma, truncation_level, normalize, sampled,
            partners[start:end] if sampled else partners,
            rank_order[start:end],
            sample_weight[start:end] if has_weights else sample_weight,
            has_weights, grad_out[start:end], hess_out[start:end],
        )


_pairwise_gradient_hessian_serial = serial_twin(_pairwise_gradient_hessian)

# As lambdarank's: below this many rows, threads cost more than they save.
_MIN_PARALLEL_ROWS = 2_000


def _label_buckets(y, offsets):
    """Rows of each query by label (descending, ties by row) and, per row,
    how many rows of its query have a higher label and an equal one.

    Returns
    -------
    by_label : ndarray of shape (n_samples,), dtype int64
        Rows, query by query, labels descending.
    higher, same : ndarray of shape (n_samples,), dtype int64
        Per row: rows of its query with a higher label; with the same label
        (itself included).
    """
    n = y.shape[0]
    sizes = np.diff(offsets)
    query = np.repeat(np.arange(sizes.shape[0]), sizes)
    by_label = np.lexsort((np.arange(n), -y, query))
    y_sorted = y[by_label]
    q_sorted = query[by_label]
    new_bucket = np.ones(n, dtype=bool)
    new_bucket[1:] = (y_sorted[1:] != y_sorted[:-1]) | (q_sorted[1:] != q_sorted[:-1])
    starts = np.flatnonzero(new_bucket)
    ends = np.append(starts[1:], n)
    bucket = np.cumsum(new_bucket) - 1
    higher = np.empty(n, dtype=np.int64)
    same = np.empty(n, dtype=np.int64)
    higher[by_label] = starts[bucket] - offsets[q_sorted]
    same[by_label] = (ends - starts)[bucket]
    return by_label, higher, same


class PairwiseLambdaRankObjective(LambdaRankObjective):
    """Pairwise gradients weighted by 1 (RankNet), |delta NDCG| or |delta
    MAP|, over the top-k, all or sampled pairs: XGBoost's ``rank:pairwise``,
    ``rank:ndcg`` and ``rank:map``.

    Documents are ranked by score (stable, descending). Each pair with
    different labels, ``h`` the more relevant and ``l`` the less relevant
    document, adds::

        p    = 1 / (1 + exp(sigma * (s_h - s_l)))
        g_h -= sigma * w * p                 g_l += sigma * w * p
        h_h += sigma**2 * w * p * (1 - p)    h_l += the same

    (LambdaRankObjective's formulas), with ``w``, by ``target_metric``:

    - None (RankNet): ``w = 1``;
    - "ndcg": ``w = |G(y_h) - G(y_l)| * |D(r_h) - D(r_l)| / maxDCG``;
    - "map": ``w = |AP(swapped) - AP|``, the change of the query's average
      precision (``sum`` over relevant ranks ``r`` of ``precision@r``,
      divided by the number of relevant documents) when ``h`` and ``l``
      swap ranks. Labels must be 0 or 1, as for XGBoost's ``rank:map``.

    With ``normalize_lambdas`` (and scores not all equal), ``w`` is divided
    by ``0.01 + |s_h - s_l|`` first. The pairs, by ``pair_method``:

    - "topk": every pair whose better-ranked document is in the top
      ``truncation_level`` positions (``maxDCG`` at ``truncation_level``);
    - "all": every pair (``maxDCG`` of the whole query);
    - "mean": for each document, ``pairs_per_document`` partners drawn
      uniformly, with replacement, among the documents of its query with a
      different label (``maxDCG`` of the whole query). A pair may be drawn
      from both its documents, and then counts twice. The draws come from
      the generator given to :meth:`prepare_iteration`.

    With ``normalize_lambdas``, each query's gradients and hessians are then
    multiplied by ``log2(1 + S) / S`` for "topk" and "all" (``S = sum`` over
    pairs of ``2 * sigma * w * p``, as LightGBM and XGBoost), and by ``1 /
    pairs_per_document`` for "mean" (as XGBoost). Finally each row's
    gradient and hessian are multiplied by its sample weight.

    This is XGBoost's objective of the same metric with ``sigma=1``,
    ``lambdarank_pair_method`` = ``pair_method`` ("all" is "topk" with
    ``lambdarank_num_pair_per_sample`` at least the largest query size),
    ``lambdarank_num_pair_per_sample`` = ``truncation_level`` ("topk") or
    ``pairs_per_document`` ("mean"), and ``lambdarank_normalization`` and
    ``lambdarank_score_normalization`` both equal to ``normalize_lambdas``,
    except that XGBoost's hessians are twice these (and floored at
    ``1e-16 * w`` per pair), its "mean" draws come from its own generator,
    and it weights whole queries rather than rows.

    "ndcg" with "topk" or "all" runs LambdaRankObjective's kernel (at
    ``truncation_level`` or the largest query size): the same lambdas.

    Parameters
    ----------
    y, offsets, sample_weight, sigma, normalize_lambdas, label_gain
        As :class:`~sklearn_ltr._objectives.lambdarank.LambdaRankObjective`;
        ``label_gain`` sets the gains of "ndcg" (and of :meth:`loss`).
    target_metric : {"ndcg", "map"} or None, default="ndcg"
        The pair weight: |delta NDCG|, |delta MAP| or 1 (RankNet).
    pair_method : {"topk", "all", "mean"}, default="topk"
        Which pairs contribute.
    truncation_level : int, default=30
        Top positions of "topk"; only "topk" takes it.
    pairs_per_document : int, default=None
        Partners drawn per document by "mean" (None: 1, XGBoost's
        default); only "mean" takes it.

    Notes
    -----
    :meth:`loss` is LambdaRankObjective's ``1 - mean NDCG`` at
    ``truncation_level`` ("topk") or over whole queries, a monitor whatever
    the target metric.
    """

    name = "lambdarank_pairwise"

    def __init__(
        self,
        y,
        offsets,
        sample_weight=None,
        *,
        target_metric="ndcg",
        pair_method="topk",
        pairs_per_document=None,
        **params,
    ):
        if target_metric not in TARGET_METRICS:
            raise ValueError(
                f"target_metric must be 'ndcg', 'map' or None, got {target_metric!r}."
            )
        if pair_method not in PAIR_METHODS:
            raise ValueError(
                f"pair_method must be 'topk', 'all' or 'mean', got {pair_method!r}."
            )
        if pair_method == "mean":
            pairs_per_document = (1 if pairs_per_document is None else
                                  _check_positive_int(pairs_per_document, "pairs_per_document"))
        elif pairs_per_document is not None:
            raise ValueError(
                f"pairs_per_document={pairs_per_document!r} is read by pair_method='mean' "
                f"only; with pair_method={pair_method!r} leave it None."
            )
        if pair_method != "topk":
            if "truncation_level" in params:
                raise ValueError(
                    f"truncation_level is read by pair_method='topk' only; with "
                    f"pair_method={pair_method!r} leave it out."
                )
            # Pairs and maxDCG over whole queries.
            sizes = np.diff(np.asarray(offsets))
            params["truncation_level"] = max(int(sizes.max(initial=0)), 1)
        super().__init__(y, offsets, sample_weight, **params)
        if target_metric == "map":
            labels = np.unique(self.y)
            if not np.all((labels == 0.0) | (labels == 1.0)):
                raise ValueError(
                    "target_metric='map' needs binary labels, 0 (not relevant) or 1 "
                    f"(relevant), as XGBoost's rank:map; got {labels[:6].tolist()}. Binarise "
                    "them, e.g. (y >= 1), what sklearn_ltr.metrics.map_score counts as "
                    "relevant by default."
                )
        self.target_metric = target_metric
        self.pair_method = pair_method
        self.pairs_per_document = pairs_per_document
        n = self.y.shape[0]
        if pair_method == "mean":
            self._by_label, self._higher, self._same = _label_buckets(self.y, self.offsets)
            sizes = np.diff(self.offsets)
            self._query_start = np.repeat(self.offsets[:-1], sizes)
            self._n_other = np.repeat(sizes, sizes) - self._same
            self._draws = np.empty(n)
            # Before the first prepare_iteration: no partners.
            self.partners = np.full((n, pairs_per_document), -1, dtype=np.int64)
        else:
            self.partners = np.zeros((0, 1), dtype=np.int64)

    def prepare_iteration(self, rng):
        """Draw the partners of every row for pair_method="mean".

        Parameters
        ----------
        rng : numpy.random.Generator
            The fit's seeded generator. ``pairs_per_document`` times, one
            double per row (in row order) is drawn from it and mapped to
            one of the row's ``n_other`` candidates, those of its query with
            a different label (in the order labels descending, then row).
            Nothing is drawn for the other pair methods.
        """
        if self.pair_method != "mean":
            return
        n_other = self._n_other
        has_partner = n_other > 0
        for t in range(self.pairs_per_document):
            # One value per row, so that a Dask shard can take its rows' share.
            rng.random(out=self._draws)
            k = np.minimum((self._draws * n_other).astype(np.int64),
                           np.maximum(n_other - 1, 0))
            # Candidates are the rows of the query with a higher label, then
            # those with a lower one: skip the row's own label.
            k = np.where(k < self._higher, k, k + self._same)
            position = np.where(has_partner, self._query_start + k, 0)
            partner = self._by_label[position] - self._query_start
            self.partners[:, t] = np.where(has_partner, partner, -1)

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        """Fill the lambda gradients and hessians of every row. Parameters
        as :meth:`LambdaRankObjective.gradient_hessian`; "mean" uses the
        partners of the last :meth:`prepare_iteration`."""
        if self.target_metric == "ndcg" and self.pair_method != "mean":
            super().gradient_hessian(raw_scores, grad_out, hess_out)
            return
        self._check_buffers(raw_scores, grad_out, hess_out)
        kernel = pick(_pairwise_gradient_hessian, _pairwise_gradient_hessian_serial,
                      raw_scores.shape[0], _MIN_PARALLEL_ROWS)
        kernel(
            raw_scores,
            self.y,
            self.gains,
            self.offsets,
            self.inverse_max_dcg,
            self.discounts,
            _METRIC_CODES[self.target_metric],
            self.sigma,
            self.truncation_level,
            self.normalize_lambdas,
            self.pair_method == "mean",
            self.partners,
            self._weights,
            self.sample_weight is not None,
            self._rank_order,
            grad_out,
            hess_out,
        )
