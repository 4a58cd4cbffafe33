"""LambdaMART with multiple objectives (Svore, Volkovs and Burges, WWW 2011).

Two ways of blending a second lambda gradient into LambdaMART's, both built
on the plain lambdas of :mod:`.lambdarank` (computed by its kernel, not a
copy of it):

- a tiered measure with a second label source (paper section 4):
  ``lambda = (1 - w) lambda(L) + w lambda(C)``, where ``lambda(C)`` pushes
  apart documents that share their primary label but differ in a secondary
  label in [0, 1] such as a click-through rate, weighted by ``|delta CNDCG|``
  (click gains ``2**(4c) - 1``, eq. 9);
- an iteration-dependent blend (section 5):
  ``lambda_m = (1 - w_m) lambda(L) + w_m lambda(S)``, where ``lambda(S)``
  comes from the sigmoid cost ``O(S) = 1 / (1 + exp(s_h - s_l + mu))``
  (eqs. 13-16) and ``w_m`` grows with the boosting iteration ``m``.

And the gradient-descent leaf values of section 5.3: each query's lambdas
divided by their standard deviation, hessians set to the sample weights, so
that the grower's Newton leaf ``-sum(g) / sum(h)`` is the mean lambda of the
leaf. The blends are computed only when asked for: the plain
``lambdarank`` objective keeps its own, unchanged, path.
"""

import numbers

import numpy as np
from numba import njit, prange

from .._utils.sorting import argsort_descending
from ._base import _check_positive_float
from ._dcg import _inverse_max_dcg
from .lambdarank import (
    _SCORE_GAP_EPS,
    LambdaRankObjective,
    _query_lambda_factor,
    lambdarank_kernel,
)

__all__ = ["LambdaRankMultiObjective", "schedule_weights"]

_SCHEDULES = ("exponential", "exponential_noncumulative", "linear")
_LEAF_ESTIMATIONS = ("newton", "gradient")


def schedule_weights(schedule, w0, eta, n_iterations):
    """Blend weights ``w_m`` of the iteration-dependent lambda, m = 0, 1, ...

    Svore, Volkovs and Burges (WWW 2011), section 6.2 and Figure 6. The
    first tree uses ``w_0``; tree ``m >= 1`` uses

    - "exponential": ``w_m = min(1, w_{m-1} + exp(-eta / m))``, the
      recursion of the text;
    - "exponential_noncumulative": ``w_m = max(w_0, exp(-eta / m))``, the
      curve ``exp(-eta / t)`` that Figure 6 plots;
    - "linear": ``w_m = min(1, w_{m-1} + eta)``, which is both the text's
      recursion and Figure 6's ``eta * t`` (for ``w_0 = 0``).

    Parameters
    ----------
    schedule : {"exponential", "exponential_noncumulative", "linear"}
        How ``w_m`` grows.
    w0 : float
        Starting weight ``w_0`` in [0, 1].
    eta : float
        Rate of increase (positive).
    n_iterations : int
        Number of weights to return.

    Returns
    -------
    weights : ndarray of shape (n_iterations,), dtype float64
        ``weights[m]`` is ``w_m``, in [0, 1] and non-decreasing.

    Notes
    -----
    The exponential increments ``exp(-eta / m)`` of the text add up
    quickly: with the paper's ``eta = 100``, ``w_m`` reaches 1 (from
    ``w_0 = 0.25``) at ``m = 39`` of its 1000 iterations. Figure 6 instead
    plots ``exp(-eta / t)`` itself as the weight, a curve that rises
    gradually and only tends to 1; with ``eta = 100`` it is 0.37 at
    ``m = 100`` and 0.90 at ``m = 1000``.

    For "exponential_noncumulative" the plotted curve starts at 0, while
    the text calls ``w_0`` the starting weight and sweeps it over
    {0.1, 0.25, 0.5}. We keep ``w_0`` as a floor, ``max(w_0, exp(-eta /
    m))``, rather than the plain curve: the plain curve would drop from
    ``w_0`` at ``m = 0`` to about ``exp(-eta)`` at ``m = 1``, so ``w_0``
    would only affect the first tree and ``w_m`` would not be
    non-decreasing, against the paper's "gradually" shifting weight. The
    floor follows Figure 6's curve exactly once it passes ``w_0`` (after
    ``m = eta / ln(1 / w_0)``, 72.1 for ``eta = 100``, ``w_0 = 0.25``), and
    ``w_0 = 0`` gives the plain curve. The curve depends on ``m / eta``
    only, so a model of ``M`` trees with ``eta = M / 10`` follows the shape
    the paper's ``eta = 100`` gives its 1000 trees.
    """
    if schedule not in _SCHEDULES:
        raise ValueError(f"schedule must be one of {_SCHEDULES}, got {schedule!r}.")
    w0 = _check_unit_interval(w0, "w0")
    eta = _check_positive_float(eta, "eta")
    weights = np.empty(n_iterations)
    if n_iterations == 0:
        return weights
    if schedule == "exponential_noncumulative":
        weights[0] = w0
        m = np.arange(1, n_iterations)
        weights[1:] = np.maximum(w0, np.exp(-eta / m))
        return weights
    w = w0
    for m in range(n_iterations):
        if m > 0:
            w = min(1.0, w + (np.exp(-eta / m) if schedule == "exponential" else eta))
        weights[m] = w
    return weights


@njit(cache=True)
def _click_lambdas_one_query(
    scores, labels, click_gains, inverse_max_dcg, discounts, sigma,
    truncation_level, normalize, grad_out, hess_out,
):
    """lambda(C) of one query: RankNet pairs weighted by |delta CNDCG|.

    Only pairs with equal primary ``labels``, both click gains non-zero and
    the click gains different contribute (seed 002 section 4.2). Pair
    selection, the division by the score gap and the per-query
    ``log2(1 + S) / S`` rescaling are those of the lambdarank kernel, with
    click gains in place of label gains. Outputs are unweighted, in row order.
    """
    n = scores.shape[0]
    grad_out[:] = 0.0
    hess_out[:] = 0.0
    if n < 2 or inverse_max_dcg == 0.0:
        return
    order = argsort_descending(scores)  # stable: ties by row
    s = scores[order]
    g = click_gains[order]
    y = labels[order]
    lam = np.zeros(n)
    hess = np.zeros(n)
    if normalize and s[0] != s[n - 1]:
        gap_eps, gap_scale = _SCORE_GAP_EPS, 1.0
    else:
        gap_eps, gap_scale = 1.0, 0.0
    total = 0.0
    for i in range(min(n - 1, truncation_level)):
        if g[i] == 0.0:
            continue
        for j in range(i + 1, n):
            if g[j] == 0.0 or y[j] != y[i] or g[j] == g[i]:
                continue
            i_is_high = g[i] > g[j]
            w = abs(g[i] - g[j]) * (discounts[i] - discounts[j]) * inverse_max_dcg
            w /= gap_eps + gap_scale * (s[i] - s[j])
            diff = s[i] - s[j] if i_is_high else s[j] - s[i]
            p = 1.0 / (1.0 + np.exp(sigma * diff))
            pl = sigma * w * p
            ph = sigma * pl * (1.0 - p)
            if i_is_high:
                lam[i] -= pl
                lam[j] += pl
            else:
                lam[i] += pl
                lam[j] -= pl
            hess[i] += ph
            hess[j] += ph
            total += pl
    factor = _query_lambda_factor(2.0 * total) if normalize else 1.0
    for r in range(n):
        grad_out[order[r]] = lam[r] * factor
        hess_out[order[r]] = hess[r] * factor


@njit(parallel=True, cache=True)
def _click_lambdas(
    raw_scores, labels, click_gains, offsets, inverse_max_dcg, discounts, sigma,
    truncation_level, normalize, grad_out, hess_out,
):
    """:func:`_click_lambdas_one_query` on every query, one thread per query."""
    for q in prange(offsets.shape[0] - 1):
        a = offsets[q]
        b = offsets[q + 1]
        _click_lambdas_one_query(
            raw_scores[a:b], labels[a:b], click_gains[a:b], inverse_max_dcg[q],
            discounts, sigma, truncation_level, normalize, grad_out[a:b],
            hess_out[a:b],
        )


@njit(cache=True)
def _sigmoid_lambdas_one_query(scores, gains, inverse_max_dcg, discounts, mu,
                               truncation, grad_out):
    """lambda(S) of one query (seed 002 eqs. 14-16), unweighted, row order.

    For every pair with ``gain_h > gain_l``, ``x = s_h - s_l + mu`` and
    ``|delta NDCG@T|`` computed with discounts that are 0 from rank
    ``truncation`` on: ``grad_h -= |delta| e^x / (1 + e^x)**2`` and
    ``grad_l`` gets the opposite.
    """
    n = scores.shape[0]
    grad_out[:] = 0.0
    if n < 2 or inverse_max_dcg == 0.0:
        return
    order = argsort_descending(scores)
    s = scores[order]
    g = gains[order]
    d = np.zeros(n)
    for r in range(min(n, truncation)):
        d[r] = discounts[r]
    lam = np.zeros(n)
    # A pair whose two ranks are both >= truncation has delta 0.
    for i in range(min(n - 1, truncation)):
        for j in range(i + 1, n):
            dg = g[i] - g[j]
            if dg == 0.0:
                continue
            w = abs(dg) * (d[i] - d[j]) * inverse_max_dcg
            x = (s[i] - s[j] if dg > 0.0 else s[j] - s[i]) + mu
            # e^x / (1 + e^x)^2 is even in x; exp(-|x|) never overflows.
            t = np.exp(-abs(x))
            lam_pair = w * t / ((1.0 + t) * (1.0 + t))
            if dg > 0.0:
                lam[i] -= lam_pair
                lam[j] += lam_pair
            else:
                lam[i] += lam_pair
                lam[j] -= lam_pair
    for r in range(n):
        grad_out[order[r]] = lam[r]


@njit(parallel=True, cache=True)
def _sigmoid_lambdas(raw_scores, gains, offsets, inverse_max_dcg, discounts, mu,
                     truncation, grad_out):
    """:func:`_sigmoid_lambdas_one_query` on every query, one thread per query."""
    for q in prange(offsets.shape[0] - 1):
        a = offsets[q]
        b = offsets[q + 1]
        _sigmoid_lambdas_one_query(
            raw_scores[a:b], gains[a:b], inverse_max_dcg[q], discounts, mu,
            truncation, grad_out[a:b],
        )


@njit(parallel=True, cache=True)
def _divide_by_query_std(values, offsets):
    """Divide each query's values by their (population) standard deviation.

    Queries whose values are all equal (typically all 0) are left unchanged.
    """
    for q in prange(offsets.shape[0] - 1):
        a = offsets[q]
        b = offsets[q + 1]
        if b - a < 2:
            continue
        v = values[a:b]
        std = np.sqrt(np.mean((v - np.mean(v)) ** 2))
        if std > 0.0:
            for r in range(b - a):
                v[r] /= std


class LambdaRankMultiObjective(LambdaRankObjective):
    """LambdaMART with a secondary label, an iteration-dependent blend, or
    gradient-descent leaves (Svore, Volkovs and Burges, WWW 2011).

    Per query, with ``lambda(L)`` the plain lambdarank gradient (exactly what
    :class:`LambdaRankObjective` computes, including ``normalize_lambdas``,
    before sample weights):

    1. Tiered measure (eq. 10): ``lambda = (1 - w) lambda(L) + w lambda(C)``
       with ``w = secondary_weight``. ``lambda(C)`` is built like
       ``lambda(L)`` (same ``sigma``, pairs whose better-ranked document is
       in the top ``truncation_level``, same normalisation) but with the click
       gains ``2**(4c) - 1`` of the secondary labels ``c`` (eq. 9), the
       maximum CDCG@truncation_level as normaliser, and only on pairs with
       the same primary label whose secondary labels differ and are both
       non-zero (section 4.2: zero clicks may mean "not seen"). Newton
       hessians are blended with the same weights.
    2. Iteration-dependent blend (eq. 12):
       ``lambda_m = (1 - w_m) lambda + w_m lambda(S)`` with ``w_m`` from
       :func:`schedule_weights` and, for every pair with ``y_h > y_l``
       (eqs. 13-15)::

           O(S)      = 1 / (1 + exp(s_h - s_l + mu))
           lambda(S) = |delta NDCG@T| * e^x / (1 + e^x)**2,  x = s_h - s_l + mu

       pushing ``h`` up and ``l`` down. ``|delta NDCG@T|`` uses discounts that
       are zero from rank ``T = sigmoid_truncation`` on and the maximum
       DCG@T (eq. 16, ``lambda(S@T)``); ``None`` means no truncation. There
       is no ``sigma`` in ``O(S)``, as in the paper, and no score-gap
       normalisation, which would distort its bell shape.
    3. ``leaf_estimation="gradient"`` (section 5.3): each query's lambdas are
       divided by their standard deviation and the hessians are set to the
       sample weights (1 without weights). The grower then computes leaf
       values ``-sum(g) / (n_leaf + l2)`` times the learning rate, the mean
       lambda of the leaf, and its split gain becomes MART's least-squares
       criterion. The iteration-dependent blend needs it: the second
       derivative of ``O(S)`` changes sign, so a Newton step is ill defined.

    Sample weights multiply the final gradients (and are the hessians with
    gradient leaves).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Non-negative relevance labels, rows in query order.
    offsets : array-like of shape (n_queries + 1,)
        Query boundaries.
    sample_weight : array-like of shape (n_samples,), default=None
        Per-row weights.
    y_secondary : array-like of shape (n_samples,), default=None
        Secondary labels in [0, 1] (e.g. click-through rates), rows in query
        order. Required if ``secondary_weight > 0``.
    secondary_weight : float in [0, 1], default=0.0
        ``w`` of eq. 10.
    lambda_schedule : {"exponential", "exponential_noncumulative", "linear"} or None, default=None
        Schedule of ``w_m`` in eq. 12 (see :func:`schedule_weights`); None
        turns the blend off.
    schedule_w0 : float in [0, 1], default=0.25
        ``w_0``.
    schedule_eta : float, default=None
        ``eta`` of the schedule; required when ``lambda_schedule`` is set.
    sigmoid_mu : float, default=0.0
        Centre ``mu`` of the sigmoid cost (eq. 13).
    sigmoid_truncation : int or None, default=None
        Truncation ``T`` of ``|delta NDCG@T|`` in ``lambda(S)``.
    leaf_estimation : {"newton", "gradient"}, default="newton"
        Newton leaves, or gradient-descent leaves from std-normalised lambdas.
    **params : dict
        ``sigma``, ``truncation_level``, ``normalize_lambdas``,
        ``label_gain`` of :class:`LambdaRankObjective`. ``label_gain`` sets
        the gains of ``lambda(L)`` and ``lambda(S)``; ``lambda(C)`` keeps the
        click gains of eq. 9.

    Attributes
    ----------
    constant_hessian : float or None
        1.0 with gradient leaves and no sample weights (every hessian is
        then 1), else None.

    Notes
    -----
    The booster calls :meth:`set_iteration` with the index of the tree about
    to be grown (counting trees kept by a warm start), so the schedule
    continues where it stopped.

    References
    ----------
    K. M. Svore, M. N. Volkovs, C. J. C. Burges. Learning to Rank with
    Multiple Objective Functions. WWW 2011, sections 4-5.
    """

    name = "lambdarank_multi"

    def __init__(
        self,
        y,
        offsets,
        sample_weight=None,
        *,
        y_secondary=None,
        secondary_weight=0.0,
        lambda_schedule=None,
        schedule_w0=0.25,
        schedule_eta=None,
        sigmoid_mu=0.0,
        sigmoid_truncation=None,
        leaf_estimation="newton",
        **params,
    ):
        super().__init__(y, offsets, sample_weight, **params)
        self.secondary_weight = _check_unit_interval(secondary_weight, "secondary_weight")
        if leaf_estimation not in _LEAF_ESTIMATIONS:
            raise ValueError(
                f"leaf_estimation must be one of {_LEAF_ESTIMATIONS}, got {leaf_estimation!r}."
            )
        self.leaf_estimation = leaf_estimation
        # Gradient leaves set every hessian to the row's weight: the grower's
        # histograms then need no hessians unless weights differ by row.
        self.constant_hessian = (
            1.0 if leaf_estimation == "gradient" and self.sample_weight is None else None
        )
        n_samples = self.y.shape[0]

        self.y_secondary = None
        if y_secondary is not None:
            self.y_secondary = check_secondary_labels(y_secondary, n_samples)
        if self.secondary_weight > 0:
            if self.y_secondary is None:
                raise ValueError(
                    "secondary_weight > 0 needs secondary labels: pass y_secondary."
                )
            self.click_gains = np.exp2(4.0 * self.y_secondary) - 1.0
            self.inverse_max_cdcg = np.empty(self.n_queries)
            _inverse_max_dcg(
                4.0 * self.y_secondary, self.offsets, self.truncation_level,
                self.inverse_max_cdcg,
            )

        if lambda_schedule is not None and lambda_schedule not in _SCHEDULES:
            raise ValueError(
                f"lambda_schedule must be one of {_SCHEDULES} or None, got "
                f"{lambda_schedule!r}."
            )
        self.lambda_schedule = lambda_schedule
        self.schedule_w0 = _check_unit_interval(schedule_w0, "schedule_w0")
        if lambda_schedule is not None:
            if schedule_eta is None:
                raise ValueError("schedule_eta must be given when lambda_schedule is set.")
            self.schedule_eta = _check_positive_float(schedule_eta, "schedule_eta")
            if leaf_estimation != "gradient":
                raise ValueError(
                    "lambda_schedule needs leaf_estimation='gradient': the second "
                    "derivative of the sigmoid cost O(S) changes sign, so its Newton "
                    "step is ill defined (Svore et al., WWW 2011, section 5.3)."
                )
        else:
            self.schedule_eta = schedule_eta
        if isinstance(sigmoid_mu, bool) or not isinstance(sigmoid_mu, numbers.Real) \
                or not np.isfinite(sigmoid_mu):
            raise ValueError(f"sigmoid_mu must be a finite real number, got {sigmoid_mu!r}.")
        self.sigmoid_mu = float(sigmoid_mu)
        sizes = np.diff(self.offsets)
        largest = max(int(sizes.max(initial=0)), 1)
        if sigmoid_truncation is None:
            self.sigmoid_truncation = None
            self._sigmoid_k = largest
        else:
            if isinstance(sigmoid_truncation, bool) or not isinstance(
                sigmoid_truncation, numbers.Integral
            ) or sigmoid_truncation < 1:
                raise ValueError(
                    f"sigmoid_truncation must be a positive integer or None, got "
                    f"{sigmoid_truncation!r}."
                )
            self.sigmoid_truncation = int(sigmoid_truncation)
            self._sigmoid_k = self.sigmoid_truncation
        if lambda_schedule is not None:
            self.inverse_max_dcg_sigmoid = self._inverse_max_dcg_at(self._sigmoid_k)
        self._iteration = 0
        self._schedule_cache = np.zeros(0)

    # -- iteration dependence ----------------------------------------------

    def set_iteration(self, iteration):
        """Tell the objective the index ``m`` of the tree about to be grown.

        Parameters
        ----------
        iteration : int
            0 for the first tree of the model.
        """
        self._iteration = int(iteration)

    def current_weight(self):
        """``w_m`` of the current iteration (0 without a schedule).

        Returns
        -------
        w : float
        """
        if self.lambda_schedule is None:
            return 0.0
        m = self._iteration
        if m >= self._schedule_cache.shape[0]:
            self._schedule_cache = schedule_weights(
                self.lambda_schedule, self.schedule_w0, self.schedule_eta,
                max(2 * m, 64),
            )
        return float(self._schedule_cache[m])

    # -- gradients ----------------------------------------------------------

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        """Fill the blended lambdas (and hessians) of every row.

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
        grad, hess = self.blended_lambdas(raw_scores)
        if self.leaf_estimation == "gradient":
            _divide_by_query_std(grad, self.offsets)
            hess[:] = 1.0
        if self.sample_weight is not None:
            grad *= self.sample_weight
            hess *= self.sample_weight
        grad_out[:] = grad
        hess_out[:] = hess

    def blended_lambdas(self, raw_scores):
        """Unweighted, unnormalised blend of the component lambdas.

        Parameters
        ----------
        raw_scores : ndarray of shape (n_samples,), dtype float64
            Raw scores, rows in query order.

        Returns
        -------
        grad, hess : ndarray of shape (n_samples,), dtype float64
            ``(1 - w_m) ((1 - w) lambda(L) + w lambda(C)) + w_m lambda(S)``
            and the matching blend of the ``lambda(L)``/``lambda(C)``
            hessians (``lambda(S)`` has none, see the class docstring).
        """
        n = self.y.shape[0]
        grad = np.empty(n)
        hess = np.empty(n)
        lambdarank_kernel(n)(
            raw_scores, self.gains, self.offsets, self.inverse_max_dcg,
            self.discounts, np.empty(0), False, self.sigma, self.truncation_level,
            self.normalize_lambdas, self._rank_order, grad, hess, self._work_space(),
        )
        w = self.secondary_weight
        if w > 0:
            grad_c, hess_c = self.click_lambdas(raw_scores)
            grad = (1.0 - w) * grad + w * grad_c
            hess = (1.0 - w) * hess + w * hess_c
        w_m = self.current_weight()
        if w_m > 0:
            grad = (1.0 - w_m) * grad + w_m * self.sigmoid_lambdas(raw_scores)
            hess = (1.0 - w_m) * hess
        return grad, hess

    def click_lambdas(self, raw_scores):
        """``lambda(C)`` and its hessians, unweighted.

        Parameters
        ----------
        raw_scores : ndarray of shape (n_samples,), dtype float64

        Returns
        -------
        grad, hess : ndarray of shape (n_samples,), dtype float64
        """
        if self.y_secondary is None or not hasattr(self, "click_gains"):
            raise ValueError("click_lambdas needs y_secondary and secondary_weight > 0.")
        n = self.y.shape[0]
        grad = np.empty(n)
        hess = np.empty(n)
        _click_lambdas(
            raw_scores, self.y, self.click_gains, self.offsets, self.inverse_max_cdcg,
            self.discounts, self.sigma, self.truncation_level, self.normalize_lambdas,
            grad, hess,
        )
        return grad, hess

    def sigmoid_lambdas(self, raw_scores):
        """``lambda(S)`` (eqs. 14-16), unweighted.

        Parameters
        ----------
        raw_scores : ndarray of shape (n_samples,), dtype float64

        Returns
        -------
        grad : ndarray of shape (n_samples,), dtype float64
        """
        if self.lambda_schedule is None:
            raise ValueError("sigmoid_lambdas needs lambda_schedule.")
        grad = np.empty(self.y.shape[0])
        _sigmoid_lambdas(
            raw_scores, self.gains, self.offsets, self.inverse_max_dcg_sigmoid,
            self.discounts, self.sigmoid_mu, self._sigmoid_k, grad,
        )
        return grad


def check_secondary_labels(y_secondary, n_samples, name="y_secondary"):
    """Secondary labels as a float64 array: 1-d, ``n_samples`` long, in [0, 1].

    Parameters
    ----------
    y_secondary : array-like of shape (n_samples,)
    n_samples : int
    name : str, default="y_secondary"
        Name used in error messages.

    Returns
    -------
    y_secondary : ndarray of shape (n_samples,), dtype float64
    """
    try:
        values = np.asarray(y_secondary, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold numbers in [0, 1].") from exc
    if values.ndim != 1 or values.shape[0] != n_samples:
        raise ValueError(
            f"{name} must have shape ({n_samples},) (one value per row), got "
            f"{values.shape}."
        )
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} contains NaN or infinity.")
    if values.size and (values.min() < 0 or values.max() > 1):
        raise ValueError(
            f"{name} must lie in [0, 1] (e.g. click-through rates), got values in "
            f"[{values.min():g}, {values.max():g}]."
        )
    return np.ascontiguousarray(values)


def _check_unit_interval(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number in [0, 1], got {value!r}.")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value}.")
    return float(value)
