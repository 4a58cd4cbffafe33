"""LambdaMART on clicks, debiased for the position at which each document
was shown: Unbiased LambdaMART, with the position biases of clicked and
unclicked documents estimated jointly with the ranker (Hu, Wang, Peng and
Li, "Unbiased LambdaMART: An Unbiased Pairwise Learning-to-Rank
Algorithm", WWW 2019), and inverse propensity weighting with examination
probabilities given by the user (Wang et al., WSDM 2016; Joachims et al.,
WSDM 2017). Both share one kernel.
"""

import numbers

import numpy as np
from numba import njit, prange

from .._utils.parallel import pick, serial_twin
from ._base import _check_non_negative_float
from .lambdarank import (
    _SCORE_GAP_EPS,
    LambdaRankObjective,
    _query_lambda_factor,
    _sort_ranks,
)

# A propensity below this is treated as unknown: a pair that needs it is not
# debiased and adds no cost through it (as XGBoost's lambdarank_unbiased).
_MIN_PROPENSITY = 1e-16


@njit(cache=True)
def _softplus(x):
    """``log(1 + exp(x))`` without overflow."""
    if x > 0.0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))


@njit(cache=True)
def _unbiased_lambdarank_one_query(
    scores,
    gains,
    position_index,
    inverse_max_dcg,
    discounts,
    sigma,
    truncation_level,
    normalize,
    t_plus,
    t_minus,
    order,
    weights,
    has_weights,
    grad_out,
    hess_out,
    cost_clicked_out,
    cost_unclicked_out,
):
    """Debiased lambdas of one query and the pair costs of its rows.

    The pairs, their |delta NDCG| weights and the normalisation are those of
    :func:`~sklearn_ltr._objectives.lambdarank._lambdarank_one_query`; each
    pair's lambda and hessian are then divided by ``t_plus[position of the
    more relevant document] * t_minus[position of the less relevant one]``.
    ``cost_clicked_out`` receives, for the more relevant row of each pair,
    ``cost / t_minus[its partner's position]`` and ``cost_unclicked_out``, for
    the less relevant row, ``cost / t_plus[its partner's position]``, where
    ``cost = w * log(1 + exp(-sigma * (s_h - s_l)))`` is the pair's weighted
    RankNet loss: the sums of eqs. 30 and 31 of Hu et al. before they are
    added up by position.
    """
    n = scores.shape[0]
    grad_out[:] = 0.0
    hess_out[:] = 0.0
    cost_clicked_out[:] = 0.0
    cost_unclicked_out[:] = 0.0
    if n < 2 or inverse_max_dcg == 0.0:
        return
    s = np.empty(n)
    _sort_ranks(scores, order, s)
    lam = np.zeros(n)
    hess = np.zeros(n)
    cost_h = np.zeros(n)
    cost_l = np.zeros(n)
    normalize_gap = normalize and s[0] != s[n - 1]
    total = 0.0
    for i in range(min(n - 1, truncation_level)):
        row_i = order[i]
        for j in range(i + 1, n):
            row_j = order[j]
            dg = gains[row_i] - gains[row_j]
            if dg == 0.0:
                continue
            if dg > 0.0:
                high, low, rank_high, rank_low = row_i, row_j, i, j
            else:
                high, low, rank_high, rank_low = row_j, row_i, j, i
            w = abs(dg) * (discounts[i] - discounts[j]) * inverse_max_dcg
            if normalize_gap:
                w /= _SCORE_GAP_EPS + (s[i] - s[j])
            margin = sigma * (s[rank_high] - s[rank_low])
            p = 1.0 / (1.0 + np.exp(margin))
            pair_lambda = sigma * w * p
            pair_hessian = sigma * pair_lambda * (1.0 - p)
            cost = w * _softplus(-margin)
            tp = t_plus[position_index[high]]
            tm = t_minus[position_index[low]]
            if tp >= _MIN_PROPENSITY and tm >= _MIN_PROPENSITY:
                pair_lambda /= tp * tm
                pair_hessian /= tp * tm
            if tm >= _MIN_PROPENSITY:
                cost_h[rank_high] += cost / tm
            if tp >= _MIN_PROPENSITY:
                cost_l[rank_low] += cost / tp
            lam[rank_high] -= pair_lambda
            lam[rank_low] += pair_lambda
            hess[rank_high] += pair_hessian
            hess[rank_low] += pair_hessian
            total += pair_lambda
    factor = _query_lambda_factor(2.0 * total) if normalize else 1.0
    for r in range(n):
        row = order[r]
        weight = weights[row] if has_weights else 1.0
        grad_out[row] = lam[r] * factor * weight
        hess_out[row] = hess[r] * factor * weight
        cost_clicked_out[row] = cost_h[r] * weight
        cost_unclicked_out[row] = cost_l[r] * weight


@njit(parallel=True, cache=True)
def _unbiased_lambdarank_gradient_hessian(
    raw_scores,
    gains,
    position_index,
    offsets,
    inverse_max_dcg,
    discounts,
    sample_weight,
    has_weights,
    sigma,
    truncation_level,
    normalize,
    t_plus,
    t_minus,
    rank_order,
    grad_out,
    hess_out,
    cost_clicked_out,
    cost_unclicked_out,
):
    """Run :func:`_unbiased_lambdarank_one_query` on every query, in parallel;
    each query is one thread's work, so results do not depend on threads."""
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start = offsets[q]
        end = offsets[q + 1]
        _unbiased_lambdarank_one_query(
            raw_scores[start:end],
            gains[start:end],
            position_index[start:end],
            inverse_max_dcg[q],
            discounts,
            sigma,
            truncation_level,
            normalize,
            t_plus,
            t_minus,
            rank_order[start:end],
            sample_weight[start:end] if has_weights else sample_weight,
            has_weights,
            grad_out[start:end],
            hess_out[start:end],
            cost_clicked_out[start:end],
            cost_unclicked_out[start:end],
        )


_unbiased_lambdarank_gradient_hessian_serial = serial_twin(_unbiased_lambdarank_gradient_hessian)

# As lambdarank's _MIN_PARALLEL_ROWS: below this, threads cost more than
# they save.
_MIN_PARALLEL_ROWS = 2_000


def check_positions(position, n_samples):
    """Displayed positions as int64, 1-based, one per row."""
    position = np.asarray(position)
    if position.shape != (n_samples,):
        raise ValueError(
            f"position must have one value per row, shape ({n_samples},), got "
            f"shape {position.shape}."
        )
    if position.dtype.kind not in "iuf" or (
        position.dtype.kind == "f"
        and not (np.all(np.isfinite(position)) and np.all(position == np.round(position)))
    ):
        raise ValueError(
            "position must hold integers: the 1-based rank at which each document "
            f"was displayed; got dtype {position.dtype}."
        )
    position = position.astype(np.int64)
    if n_samples and position.min() < 1:
        raise ValueError(
            f"position must be 1-based (1 = the top of the displayed list); got "
            f"{position.min()}."
        )
    return position


def position_bias_from_costs(costs, position_bias_norm):
    """Position biases ``t+`` and ``t-`` from the costs summed by position.

    Eqs. 30 and 31 of Hu et al. (WWW 2019): ``t[r] = (C[r] / C[0]) ** (1 /
    (position_bias_norm + 1))``, with ``C`` the summed costs of the
    clicked (row 0) and the unclicked (row 1) documents at each position.
    A row whose position 1 has no cost cannot be normalised and is None.

    Parameters
    ----------
    costs : ndarray of shape (2, n_positions)
    position_bias_norm : float
        The ``p`` of the ``L_p`` regularisation of the biases.

    Returns
    -------
    t_plus, t_minus : ndarray of shape (n_positions,) or None
    """
    exponent = 1.0 / (1.0 + position_bias_norm)
    out = []
    for row in costs:
        out.append(None if not row[0] > 0.0 else (row / row[0]) ** exponent)
    return out[0], out[1]


class UnbiasedLambdaRankObjective(LambdaRankObjective):
    """LambdaMART on clicks, debiased by estimated position propensities.

    Labels are clicks (or any graded labels collected under position bias);
    ``position`` is the 1-based rank at which each document was displayed.
    Pairs, weights and normalisation are those of
    :class:`~sklearn_ltr._objectives.lambdarank.LambdaRankObjective`; each
    pair's lambda and hessian are divided by ``t+[r_h] * t-[r_l]``, the
    position biases of the more relevant (clicked) document's position
    ``r_h`` and of the less relevant one's ``r_l`` (Hu et al., eq. 23).

    After the gradients of an iteration, the biases are re-estimated from
    the pair costs ``c = w * log(1 + exp(-sigma * (s_h - s_l)))`` (the
    pair's RankNet loss times its weight ``w``) of that iteration:

        C+[r] = sum over pairs with r_h = r of c / t-[r_l]    (eq. 30)
        C-[r] = sum over pairs with r_l = r of c / t+[r_h]    (eq. 31)
        t+[r] = (C+[r] / C+[1]) ** (1 / (p + 1)),  t-[r] likewise

    with ``p = position_bias_norm`` (the ``L_p`` regularisation of the
    biases; ``p = 0`` is no regularisation). The first iteration uses
    ``t+ = t- = 1``, so its tree is plain LambdaMART's. A position whose
    biased documents take part in no pair gets bias 0, meaning unknown:
    pairs that need it are not debiased. Sample weights multiply each row's
    lambdas, hessians and costs.

    This is XGBoost's ``lambdarank_unbiased`` with
    ``lambdarank_bias_norm=position_bias_norm``, with two differences:
    positions come from ``position`` rather than from the order of the rows
    within a query; and a pair's cost is its RankNet loss
    ``log(1 + exp(-sigma * (s_h - s_l)))`` as in Hu et al.'s own code,
    where XGBoost (3.x) takes ``log(1 + exp(s_h - s_l))``.

    Parameters
    ----------
    y, offsets, sample_weight, sigma, truncation_level, normalize_lambdas, label_gain
        As :class:`~sklearn_ltr._objectives.lambdarank.LambdaRankObjective`.
    position : array-like of shape (n_samples,)
        1-based displayed rank of each row, rows in query order.
    position_bias_norm : float, default=1.0
        ``p`` above (XGBoost's ``lambdarank_bias_norm``; Hu et al.'s code
        takes the exponent ``1 / (p + 1)``, 0.5 by default).
    initial_position_bias : tuple of two ndarray or None, default=None
        ``(t+, t-)`` to start from (a warm start continues the estimate);
        positions beyond their length start at 1.

    Attributes
    ----------
    t_plus, t_minus : ndarray of shape (n_positions,)
        The position biases the next gradients use, ``n_positions`` the
        largest position (or the length of ``initial_position_bias``).

    References
    ----------
    Z. Hu, Y. Wang, Q. Peng, H. Li. Unbiased LambdaMART: An Unbiased
    Pairwise Learning-to-Rank Algorithm. WWW 2019.
    """

    name = "lambdarank_unbiased"

    def __init__(
        self,
        y,
        offsets,
        sample_weight=None,
        *,
        position,
        position_bias_norm=1.0,
        initial_position_bias=None,
        **params,
    ):
        super().__init__(y, offsets, sample_weight, **params)
        position = check_positions(position, self.y.shape[0])
        self.position_bias_norm = _check_non_negative_float(position_bias_norm,
                                                            "position_bias_norm")
        self._position_index = position - 1
        known = [] if initial_position_bias is None else [
            np.asarray(t, dtype=np.float64) for t in initial_position_bias]
        n_positions = max([int(position.max(initial=1))] + [t.shape[0] for t in known])
        self.t_plus = np.ones(n_positions)
        self.t_minus = np.ones(n_positions)
        for bias, start in zip((self.t_plus, self.t_minus), known):
            bias[:start.shape[0]] = start
        n = self.y.shape[0]
        self._cost_clicked = np.zeros(n)
        self._cost_unclicked = np.zeros(n)

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        """Fill the debiased lambdas of every row and keep the pair costs for
        :meth:`iteration_statistics`. Parameters as
        :meth:`LambdaRankObjective.gradient_hessian`."""
        self._check_buffers(raw_scores, grad_out, hess_out)
        kernel = pick(_unbiased_lambdarank_gradient_hessian,
                      _unbiased_lambdarank_gradient_hessian_serial, raw_scores.shape[0],
                      _MIN_PARALLEL_ROWS)
        kernel(
            raw_scores,
            self.gains,
            self._position_index,
            self.offsets,
            self.inverse_max_dcg,
            self.discounts,
            self._weights,
            self.sample_weight is not None,
            self.sigma,
            self.truncation_level,
            self.normalize_lambdas,
            self.t_plus,
            self.t_minus,
            self._rank_order,
            grad_out,
            hess_out,
            self._cost_clicked,
            self._cost_unclicked,
        )

    def iteration_statistics(self):
        """The pair costs of the last :meth:`gradient_hessian`, summed by
        position: row 0 for the clicked side (``C+``), row 1 for the
        unclicked side (``C-``).

        A distributed fit adds these over the workers and passes the total
        to :meth:`end_iteration` on every worker.

        Returns
        -------
        costs : ndarray of shape (2, n_positions)
        """
        n_positions = self.t_plus.shape[0]
        return np.stack([
            np.bincount(self._position_index, weights=self._cost_clicked, minlength=n_positions),
            np.bincount(self._position_index, weights=self._cost_unclicked,
                        minlength=n_positions),
        ])

    def end_iteration(self, statistics):
        """Re-estimate ``t_plus`` and ``t_minus`` from the costs of all rows
        (:meth:`iteration_statistics` summed); a side with no cost at
        position 1 keeps its biases."""
        t_plus, t_minus = position_bias_from_costs(statistics, self.position_bias_norm)
        if t_plus is not None:
            self.t_plus = t_plus
        if t_minus is not None:
            self.t_minus = t_minus

    def fitted_attributes(self):
        """The estimator attributes this objective learns: the biases."""
        return {
            "position_bias_": self.t_plus.copy(),
            "position_bias_unclicked_": self.t_minus.copy(),
        }


# propensity_clip by default: weights are at most 1 / 0.01 = 100 (see
# IPWLambdaRankObjective).
DEFAULT_PROPENSITY_CLIP = 0.01


def check_propensity(propensity, propensity_clip):
    """Validated propensities, clipped: ``max(propensity, propensity_clip)``.

    Parameters
    ----------
    propensity : array-like of shape (n_positions,)
        Examination probability at displayed positions 1 .. n_positions,
        each in (0, 1].
    propensity_clip : float in [1e-16, 1]

    Returns
    -------
    clipped : ndarray of shape (n_positions,), dtype float64
    """
    if (isinstance(propensity_clip, bool) or not isinstance(propensity_clip, numbers.Real)
            or not _MIN_PROPENSITY <= propensity_clip <= 1.0):
        raise ValueError(
            f"propensity_clip must be a number in [{_MIN_PROPENSITY:g}, 1] (weights are "
            f"1 / max(propensity, propensity_clip)), got {propensity_clip!r}."
        )
    try:
        values = np.asarray(propensity, dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or values.ndim != 1 or values.shape[0] == 0:
        raise ValueError(
            "propensity must be a non-empty 1-d array of examination probabilities, one per "
            "displayed position (propensity[0] for position 1); got "
            f"{type(propensity).__name__} {np.shape(propensity) if values is not None else ''}."
        )
    bad = ~((values > 0.0) & (values <= 1.0))  # NaN fails both comparisons
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"propensity must hold examination probabilities in (0, 1]; position {first + 1} "
            f"has {float(values[first])!r}. Estimate them, e.g. from a randomisation experiment, "
            "and give every displayed position a probability above 0."
        )
    return np.maximum(values, float(propensity_clip))


def check_positions_have_propensity(largest_position, n_propensities):
    """Refuse a displayed position that ``propensity`` does not cover."""
    if largest_position > n_propensities:
        raise ValueError(
            f"position holds {largest_position}, but propensity has {n_propensities} "
            f"value(s), for positions 1 to {n_propensities}. Give propensity one value for "
            f"every displayed position up to {largest_position}, or drop the rows shown "
            "below the positions it covers."
        )


class IPWLambdaRankObjective(UnbiasedLambdaRankObjective):
    """LambdaMART on clicks, debiased by known examination propensities.

    Inverse propensity weighting (Wang, Bendersky, Metzler and Najork,
    WSDM 2016; Joachims, Swaminathan and Schnabel, WSDM 2017): each clicked
    (more relevant) document's loss terms are weighted by the inverse of the
    probability that its displayed position was examined. For LambdaMART
    every pair of documents with different labels, ``h`` more relevant than
    ``l``, has its lambda and hessian multiplied by

        1 / max(propensity[r_h], propensity_clip)

    with ``r_h`` the position at which ``h`` was shown. This is
    :class:`UnbiasedLambdaRankObjective`'s kernel with ``t+`` the clipped
    propensities and ``t- = 1``, fixed: nothing is re-estimated, so
    :meth:`iteration_statistics` is None and a distributed fit exchanges
    nothing beyond the gradients. Pairs, ``|delta NDCG|`` weights,
    normalisation and sample weights are those of
    :class:`~sklearn_ltr._objectives.lambdarank.LambdaRankObjective`; with
    ``normalize_lambdas`` the query's weighted lambdas are rescaled by
    ``log2(1 + S) / S``, ``S`` their weighted sum.

    When every clipped propensity is 1 the weights change nothing, and the
    gradients are computed by plain LambdaMART's (vectorised) kernel, so
    that the model is plain LambdaMART's bit for bit; the debiasing kernel
    evaluates the same formulas in another order of floating-point
    operations.

    Clipping (``propensity_clip``) caps the weights at ``1 /
    propensity_clip``: small propensities make the weighted loss unbiased
    but of high variance, and thresholding the propensities from below
    trades a little bias for less variance, as Strehl, Langford, Li and
    Kakade do with ``1 / max(p, tau)`` in off-policy learning (NeurIPS
    2010). The default 0.01 caps weights at 100; it leaves every propensity
    of the position-based model ``(1 / r) ** eta`` with ``eta = 1`` on the
    top 100 positions (``eta = 2``: top 10) unclipped.

    Parameters
    ----------
    y, offsets, sample_weight, sigma, truncation_level, normalize_lambdas, label_gain
        As :class:`~sklearn_ltr._objectives.lambdarank.LambdaRankObjective`.
    position : array-like of shape (n_samples,)
        1-based displayed rank of each row, rows in query order; at most
        ``len(propensity)``.
    propensity : array-like of shape (n_positions,)
        Examination probability at displayed positions 1 .. n_positions,
        each in (0, 1], e.g. from a randomisation experiment.
    propensity_clip : float in [1e-16, 1], default=0.01
        Propensities below it count as ``propensity_clip``.

    References
    ----------
    X. Wang, M. Bendersky, D. Metzler, M. Najork. Learning to Rank with
    Selection Bias in Personal Search. SIGIR 2016.

    T. Joachims, A. Swaminathan, T. Schnabel. Unbiased Learning-to-Rank with
    Biased Feedback. WSDM 2017.

    A. Strehl, J. Langford, L. Li, S. Kakade. Learning from Logged Implicit
    Exploration Data. NeurIPS 2010.
    """

    name = "lambdarank_ipw"

    def __init__(
        self,
        y,
        offsets,
        sample_weight=None,
        *,
        position,
        propensity,
        propensity_clip=DEFAULT_PROPENSITY_CLIP,
        **params,
    ):
        clipped = check_propensity(propensity, propensity_clip)
        super().__init__(
            y, offsets, sample_weight, position=position,
            initial_position_bias=(clipped, np.ones_like(clipped)), **params,
        )
        # Unbiased LambdaMART would start an uncovered position at bias 1;
        # here that would silently weigh its clicks by 1.
        check_positions_have_propensity(int(self._position_index.max(initial=0)) + 1,
                                        clipped.shape[0])
        self.propensity_clip = float(propensity_clip)
        # Weights of 1 make the debiased lambdas plain LambdaMART's.
        self._unweighted = bool(np.all(clipped == 1.0))

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        """Fill the propensity-weighted lambdas of every row. Parameters as
        :meth:`LambdaRankObjective.gradient_hessian`."""
        if self._unweighted:
            LambdaRankObjective.gradient_hessian(self, raw_scores, grad_out, hess_out)
        else:
            super().gradient_hessian(raw_scores, grad_out, hess_out)

    def iteration_statistics(self):
        """None: the weights are fixed, nothing is re-estimated."""
        return None

    def end_iteration(self, statistics):
        """Nothing to update: the propensities are given."""

    def fitted_attributes(self):
        """None: the weights follow from the ``propensity`` and
        ``propensity_clip`` parameters."""
        return {}
