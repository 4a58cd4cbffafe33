"""LambdaMART: :class:`LambdaMARTRanker`. It only picks an objective and its
parameters; the rest is in :class:`~sklearn_ltr._rankers.base.BaseGBRanker`."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from .._objectives import OBJECTIVES
from .._objectives.unbiased_lambdarank import (
    DEFAULT_PROPENSITY_CLIP,
    check_positions_have_propensity,
    check_propensity,
)
from ..metrics._checks import check_label_gain
from .base import BaseGBRanker
from .docs import _ranker_doc
from .registry import register_model_class

# schedule_eta=None: the paper's sweep values (Svore et al., WWW 2011, section 6.2),
# for its 1000 trees. The Figure-6 form reuses the exponential sweep's 100 (of
# {100, 250}): read without the cumulative sum, those values spread the shift over
# the 1000 trees (w_1000 = exp(-0.1) = 0.90 for 100, 0.78 for 250) as the text's
# "gradually" and Figure 6's curves describe, and 100 ends nearest full weight.
_DEFAULT_SCHEDULE_ETA = {"exponential": 100.0, "exponential_noncumulative": 100.0, "linear": 0.01}

# LambdaMARTRanker's truncation_level by default; any other value only makes
# sense with pair_method="topk".
_DEFAULT_TRUNCATION_LEVEL = 30
_DEFAULT_POSITION_BIAS_NORM = 1.0

__all__ = ["LambdaMARTRanker"]


@register_model_class
class LambdaMARTRanker(BaseGBRanker):
    __doc__ = _ranker_doc(
        """Gradient-boosted trees trained with LambdaRank gradients (LambdaMART).

    Each pair of documents of a query with different labels pushes their scores
    apart with a RankNet gradient weighted by the change in NDCG that swapping
    them would cause, as in LightGBM's ``lambdarank`` objective (see
    "Burges, From RankNet to LambdaRank to LambdaMART: An Overview", and the
    account of LightGBM's implementation in ``seeds/001``; Svore, Volkovs and
    Burges, "Learning to Rank with Multiple Objective Functions", WWW 2011,
    section 3). Leaf values are Newton steps.

    Options from Svore, Volkovs and Burges (WWW 2011), all off by default
    (then the model is exactly plain LambdaMART):

    - a second label source: ``fit(..., y_secondary=c)`` with ``c`` in
      [0, 1] (e.g. click-through rates) and ``secondary_weight=w`` train on
      ``(1 - w) lambda(L) + w lambda(C)`` (eq. 10), where ``lambda(C)`` only
      orders documents with the same label by ``c``, weighted by
      ``|delta CNDCG|`` (eq. 9, :func:`sklearn_ltr.metrics.cndcg_score`), and
      ignores documents with ``c = 0``;
    - an iteration-dependent blend ``(1 - w_m) lambda + w_m lambda(S)``
      (eq. 12) with the local sigmoid cost ``O(S)`` (eqs. 13-16) and ``w_m``
      growing from ``schedule_w0`` by ``lambda_schedule``;
    - gradient-descent leaf values (section 5.3), required by the blend.

    The exact formulas are in the docstring of the (private) objective
    ``sklearn_ltr._objectives.multi_objective.LambdaRankMultiObjective``.

    On clicks, ``position_debiasing="unbiased_lambdamart"`` with
    ``fit(..., position=p)`` (the 1-based rank at which each document was
    shown) corrects for position bias as Hu, Wang, Peng and Li, "Unbiased
    LambdaMART: An Unbiased Pairwise Learning-to-Rank Algorithm" (WWW 2019)
    do: each pair's lambda is divided by the position biases ``t+`` of the
    clicked document's position and ``t-`` of the unclicked one's, which are
    re-estimated from the pair losses after every tree (their eqs. 30-31;
    XGBoost's ``lambdarank_unbiased``). The formulas are in the docstring of
    ``sklearn_ltr._objectives.unbiased_lambdarank.UnbiasedLambdaRankObjective``.
    When the examination probability of each position is known (e.g. from a
    randomisation experiment), ``position_debiasing="ipw"`` with
    ``propensity`` weights instead every pair's lambda by ``1 /
    max(propensity[r], propensity_clip)``, ``r`` the position at which the
    clicked (more relevant) document was shown: inverse propensity
    weighting (Wang, Bendersky, Metzler and Najork, "Learning to Rank with
    Selection Bias in Personal Search", SIGIR 2016; Joachims, Swaminathan
    and Schnabel, "Unbiased Learning-to-Rank with Biased Feedback", WSDM
    2017), with the weights clipped as in Strehl, Langford, Li and Kakade,
    "Learning from Logged Implicit Exploration Data" (NeurIPS 2010). The
    formulas are in the docstring of
    ``sklearn_ltr._objectives.unbiased_lambdarank.IPWLambdaRankObjective``.
    ``position_debiasing="additive"`` is LightGBM's method (its
    ``lambdarank`` with ``Dataset(position=...)``, LightGBM 4.1+): an
    offset per position is added to the scores the lambdas are computed
    at, and learned with the trees (docstring of
    ``sklearn_ltr._objectives.additive_position.AdditivePositionLambdaRankObjective``).

    ``target_metric`` and ``pair_method`` give XGBoost's other pairwise
    objectives: ``target_metric=None`` weighs every pair by 1 (RankNet,
    XGBoost's ``rank:pairwise``), ``"map"`` by the change in average
    precision (``rank:map``, binary labels); ``pair_method="all"`` takes
    every pair and ``"mean"`` draws ``pairs_per_document`` partners for each
    document (XGBoost's ``lambdarank_pair_method``). The formulas are in the
    docstring of
    ``sklearn_ltr._objectives.pairwise.PairwiseLambdaRankObjective``.""",
        """
    sigma : float, default=1.0
        Steepness of the pairwise sigmoid.
    truncation_level : int, default=30
        Only pairs whose higher-ranked document (in the current ranking) lies
        in the top ``truncation_level`` positions contribute, as LightGBM's
        ``lambdarank_truncation_level``; NDCG is normalised by the maximum
        DCG at this level. Read by ``pair_method="topk"`` only (a value
        other than 30 with another pair method raises).
    normalize_lambdas : bool, default=True
        Normalise each query's lambdas as LightGBM's ``lambdarank_norm``:
        divide each pair's weight by ``0.01 + |score gap|`` and rescale the
        query's lambdas by ``log2(1 + S) / S`` (``S`` the sum of their
        absolute values), or, with ``pair_method="mean"``, by ``1 /
        pairs_per_document``. XGBoost's ``lambdarank_score_normalization``
        and ``lambdarank_normalization`` together.
    target_metric : {"ndcg", "map"} or None, default="ndcg"
        Weight of each pair's RankNet gradient: the change in NDCG
        (LambdaMART) or in average precision that swapping the two
        documents would cause, or 1 (None: RankNet). "map" needs binary
        labels, 0 or 1 (XGBoost's ``rank:map``; MAP counts the documents
        labelled 1 as relevant and divides by their number); None is
        XGBoost's ``rank:pairwise``. With "map" or None, ``label_gain``
        only changes the NDCG of early stopping.
    pair_method : {"topk", "all", "mean"}, default="topk"
        Which pairs of documents with different labels contribute
        (XGBoost's ``lambdarank_pair_method``). "topk": those whose
        better-ranked document is in the top ``truncation_level``
        positions. "all": every one (then NDCG is normalised by the maximum
        DCG of the whole query). "mean": for each document,
        ``pairs_per_document`` partners drawn at random, with replacement,
        from the documents of its query with a different label, afresh for
        every tree (from ``random_state``, so the model does not depend on
        the number of threads or Dask workers). RankNet on all pairs is
        ``target_metric=None, pair_method="all"``.
    pairs_per_document : int or None, default=None
        Partners drawn per document by ``pair_method="mean"``; None means 1,
        XGBoost's default. Read by "mean" only (with another pair method it
        must be None: the number of top positions of "topk" is
        ``truncation_level``). XGBoost's ``lambdarank_num_pair_per_sample``
        with ``lambdarank_pair_method="mean"``.
    label_gain : array-like of shape (n_labels,) or None, default=None
        Gain of each label, LightGBM's ``label_gain``: ``label_gain[i]`` is
        the gain of label ``i`` in ``|delta NDCG|`` and in the NDCG of early
        stopping (``validation_score_``, ``train_score_``). Gains must be
        finite, non-negative and non-decreasing, and the labels of ``fit``
        (``y`` and ``y_val``) integers in ``[0, n_labels)``. None means
        ``2**y - 1`` for any real ``y >= 0``, which
        ``label_gain=[2**i - 1 for i in range(n_labels)]`` reproduces
        exactly. A table also takes labels above the about 1000 at which
        sums of ``2**y - 1`` overflow, e.g. ``label_gain=np.arange(5000)``.
        ``score`` keeps the exponential gain, so that models with different
        ``label_gain`` are compared on one scale; ``scoring=ndcg_scorer(10,
        label_gain=...)`` scores with these gains.
    secondary_weight : float in [0, 1], default=0.0
        Weight ``w`` of the secondary-label lambdas ``lambda(C)`` (eq. 10);
        needs ``y_secondary`` in ``fit`` when positive. ``lambda(C)`` uses
        the same ``sigma``, ``truncation_level`` and normalisation as the
        primary lambdas.
    lambda_schedule : {"exponential", "exponential_noncumulative", "linear"} or None, default=None
        Turns on the iteration-dependent blend (eq. 12): tree ``m >= 1`` uses
        ``w_m = min(1, w_{m-1} + exp(-schedule_eta / m))`` ("exponential",
        the recursion of the paper's text), ``w_m = max(w_0,
        exp(-schedule_eta / m))`` ("exponential_noncumulative", the curve of
        its Figure 6, with ``w_0`` kept as a floor so that the weight never
        falls below its start) or ``w_m = min(1, w_{m-1} + schedule_eta)``
        ("linear"); tree 0 uses ``w_0 = schedule_w0``. Needs
        ``leaf_estimation="gradient"``.
    schedule_w0 : float in [0, 1], default=0.25
        Starting weight ``w_0`` of ``lambda(S)``.
    schedule_eta : float or None, default=None
        Rate ``eta`` of the schedule. None uses 100 for "exponential" and
        "exponential_noncumulative" and 0.01 for "linear" (from the paper's
        sweeps for 1000 trees). From ``w_0 = 0.25``, ``w_m`` reaches 1 at
        tree 39 ("exponential") and 75 ("linear"); "exponential_noncumulative"
        stays at 0.25 until tree 72, is 0.37 at tree 100 and 0.90 at tree
        1000, so with fewer trees a smaller ``schedule_eta`` (about a tenth
        of ``n_estimators``) gives the same shape.
    sigmoid_mu : float, default=0.0
        Centre ``mu`` of the sigmoid cost ``O(S) = 1 / (1 + exp(s_h - s_l +
        mu))`` (eq. 13).
    sigmoid_truncation : int or None, default=None
        Truncation ``T`` of ``|delta NDCG@T|`` in ``lambda(S)`` (eq. 16,
        ``lambda(S@T)``); None means untruncated (eq. 15).
    leaf_estimation : {"newton", "gradient"}, default="newton"
        "newton": leaf values ``-sum(g) / sum(h)``. "gradient": each
        query's lambdas are divided by their standard deviation and the
        hessians set to the sample weights, so a leaf's value is the mean of
        its lambdas times ``learning_rate`` (divided by ``n + l2`` rather
        than ``n`` with ``l2_regularization``), splits minimise the squared
        error of MART, and ``min_hessian_to_split`` counts rows.
    position_debiasing : {"unbiased_lambdamart", "ipw", "additive"} or None, \
            default=None
        Learn from clicks collected under position bias, given ``fit(...,
        position=...)``. "unbiased_lambdamart": estimate the position
        biases jointly with the trees (Hu et al., WWW 2019). "ipw": weight
        each pair by the inverse of the given examination ``propensity``
        of the position at which its clicked (more relevant) document was
        shown (inverse propensity weighting; needs ``propensity``).
        "additive": learn a score offset per position, added to the
        scores while training only (LightGBM's ``Dataset(position=...)``,
        with its update of the offsets). None,
        or no ``position`` in ``fit``, is plain LambdaMART. Cannot be
        combined with the multiple-objective options.
    position_bias_norm : float, default=1.0
        ``p`` of the ``L_p`` regularisation of the position biases (Hu et
        al., eqs. 30-31): each bias is a ratio of pair losses raised to
        ``1 / (p + 1)``; larger ``p`` pulls the biases towards 1, ``p = 0``
        does not regularise. XGBoost's ``lambdarank_bias_norm``. Read by
        ``position_debiasing="unbiased_lambdamart"`` only (another value
        with another ``position_debiasing`` raises).
    propensity : array-like of shape (n_positions,) or None, default=None
        With ``position_debiasing="ipw"`` (and only then, where it is
        required): the probability that a user examines displayed
        positions 1, 2, ..., ``n_positions``, each in (0, 1], estimated
        beforehand, e.g. by a randomisation experiment (Joachims et al.,
        WSDM 2017). Scaling all of them by one factor is not neutral: it
        moves them relative to ``propensity_clip`` and changes the per-query
        normalisation of ``normalize_lambdas``. Every ``position`` of
        ``fit`` must be at most ``n_positions``.
    propensity_clip : float in (0, 1], default=0.01
        Propensities below this count as ``propensity_clip``: the weights
        ``1 / max(propensity, propensity_clip)`` are at most ``1 /
        propensity_clip``. Clipping trades a little bias for less variance
        (Strehl et al., NeurIPS 2010, threshold propensities the same way).
        The default caps weights at 100 and clips none of the propensities
        ``1 / r`` of the top 100 positions; ``propensity_clip=1`` makes
        every weight 1 (plain LambdaMART). Read by
        ``position_debiasing="ipw"`` only (another value with another
        ``position_debiasing`` raises).
    position_bias_regularization : float, default=0.0
        With ``position_debiasing="additive"`` (another value with another
        ``position_debiasing`` raises): an L2 penalty on the position
        offsets, times the number of rows shown at each position; larger
        values keep the offsets nearer 0. LightGBM's
        ``lambdarank_position_bias_regularization``.""",
        "LambdaMARTRanker",
        attributes="""
    position_bias_ : ndarray of shape (n_positions,)
        With ``position_debiasing``: the estimated bias ``t+`` of clicked
        (more relevant) documents at positions 1, 2, ...,
        ``n_positions`` (the largest ``position`` of ``fit``), relative to
        position 1 (``position_bias_[0] == 1``). Under a position-based
        click model it estimates the examination probability, raised to
        ``1 / (position_bias_norm + 1)``, when the shown order varies
        between sessions; with the same order in every session it
        flattens towards 1 as trees are added. 0 marks a position with no pair
        to estimate it from. These are the biases after the last tree grown
        (early stopping may keep fewer trees).
    position_bias_unclicked_ : ndarray of shape (n_positions,)
        The same for unclicked (less relevant) documents, ``t-``.
    position_offset_ : ndarray of shape (n_positions,)
        With ``position_debiasing="additive"`` (instead of the two above):
        the score offset learned for positions 1, 2, ..., ``n_positions``
        (the largest ``position`` of ``fit``), 0 for a position with no
        row. Higher means more clicks than the scores explain: a position
        users look at more. Offsets after the last tree grown; they are
        not part of ``predict``.""",
    )

    _parameter_constraints = {
        **BaseGBRanker._parameter_constraints,
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "truncation_level": [Interval(Integral, 1, None, closed="left")],
        "normalize_lambdas": ["boolean"],
        "label_gain": ["array-like", None],
        "secondary_weight": [Interval(Real, 0, 1, closed="both")],
        "lambda_schedule": [
            StrOptions({"exponential", "exponential_noncumulative", "linear"}), None
        ],
        "schedule_w0": [Interval(Real, 0, 1, closed="both")],
        "schedule_eta": [Interval(Real, 0, None, closed="neither"), None],
        "sigmoid_mu": [Interval(Real, None, None, closed="neither")],
        "sigmoid_truncation": [Interval(Integral, 1, None, closed="left"), None],
        "leaf_estimation": [StrOptions({"newton", "gradient"})],
        "position_debiasing": [StrOptions({"unbiased_lambdamart", "ipw", "additive"}), None],
        "position_bias_regularization": [Interval(Real, 0, None, closed="left")],
        "position_bias_norm": [Interval(Real, 0, None, closed="left")],
        "propensity": ["array-like", None],
        "propensity_clip": [Interval(Real, 0, 1, closed="right")],
        "target_metric": [StrOptions({"ndcg", "map"}), None],
        "pair_method": [StrOptions({"topk", "all", "mean"})],
        "pairs_per_document": [Interval(Integral, 1, None, closed="left"), None],
    }

    # Routed like qid: with metadata routing on, GridSearchCV and
    # cross_validate pass y_secondary=... and position=... to fit without
    # set_fit_request.
    __metadata_request__fit = {"y_secondary": True, "position": True}

    def __init__(
        self,
        *,
        sigma=1.0,
        truncation_level=_DEFAULT_TRUNCATION_LEVEL,
        normalize_lambdas=True,
        target_metric="ndcg",
        pair_method="topk",
        pairs_per_document=None,
        label_gain=None,
        secondary_weight=0.0,
        lambda_schedule=None,
        schedule_w0=0.25,
        schedule_eta=None,
        sigmoid_mu=0.0,
        sigmoid_truncation=None,
        leaf_estimation="newton",
        position_debiasing=None,
        position_bias_norm=_DEFAULT_POSITION_BIAS_NORM,
        propensity=None,
        propensity_clip=DEFAULT_PROPENSITY_CLIP,
        position_bias_regularization=0.0,
        n_estimators=100,
        learning_rate=0.1,
        max_leaf_nodes=31,
        max_depth=None,
        grow_policy="lossguide",
        min_samples_leaf=20,
        min_hessian_to_split=1e-3,
        l2_regularization=0.0,
        max_bins=255,
        categorical_features="from_dtype",
        target_statistics=None,
        max_features=1.0,
        subsample=1.0,
        monotonic_cst=None,
        interaction_cst=None,
        early_stopping="auto",
        validation_fraction=0.1,
        validation_ndcg_k=10,
        scoring=None,
        n_iter_no_change=10,
        tol=1e-7,
        warm_start=False,
        importance_type="gain",
        verbose=0,
        random_state=None,
        n_jobs=None,
    ):
        super().__init__(
            n_estimators=n_estimators,
            learning_rate=learning_rate,
            max_leaf_nodes=max_leaf_nodes,
            max_depth=max_depth,
            grow_policy=grow_policy,
            min_samples_leaf=min_samples_leaf,
            min_hessian_to_split=min_hessian_to_split,
            l2_regularization=l2_regularization,
            max_bins=max_bins,
            categorical_features=categorical_features,
            target_statistics=target_statistics,
            max_features=max_features,
            subsample=subsample,
            monotonic_cst=monotonic_cst,
            interaction_cst=interaction_cst,
            early_stopping=early_stopping,
            validation_fraction=validation_fraction,
            validation_ndcg_k=validation_ndcg_k,
            scoring=scoring,
            n_iter_no_change=n_iter_no_change,
            tol=tol,
            warm_start=warm_start,
            importance_type=importance_type,
            verbose=verbose,
            random_state=random_state,
            n_jobs=n_jobs,
        )
        self.sigma = sigma
        self.truncation_level = truncation_level
        self.normalize_lambdas = normalize_lambdas
        self.target_metric = target_metric
        self.pair_method = pair_method
        self.pairs_per_document = pairs_per_document
        self.label_gain = label_gain
        self.secondary_weight = secondary_weight
        self.lambda_schedule = lambda_schedule
        self.schedule_w0 = schedule_w0
        self.schedule_eta = schedule_eta
        self.sigmoid_mu = sigmoid_mu
        self.sigmoid_truncation = sigmoid_truncation
        self.leaf_estimation = leaf_estimation
        self.position_debiasing = position_debiasing
        self.position_bias_norm = position_bias_norm
        self.propensity = propensity
        self.propensity_clip = propensity_clip
        self.position_bias_regularization = position_bias_regularization

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X, y, *, qid=None, sample_weight=None, y_secondary=None, position=None, X_val=None,
        y_val=None, qid_val=None,
    ):
        """Fit the ranker.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Training rows. NaN marks a missing value. A DataFrame may carry the
            query ids in a ``"qid"`` column, which is never used as a feature.
        y : array-like of shape (n_samples,)
            Graded, non-negative relevance labels.
        qid : array-like of shape (n_samples,), default=None
            Query id of each row, of any comparable type. Rows need not be
            sorted or contiguous. If None (and no ``"qid"`` column), all rows
            form one query.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row weights; they scale each row's gradient and hessian.
        y_secondary : array-like of shape (n_samples,), default=None
            Secondary labels in [0, 1], one per row (e.g. click-through
            rates), used by ``lambda(C)`` when ``secondary_weight > 0`` and
            ignored otherwise. Requested through metadata routing like
            ``qid``.
        position : array-like of shape (n_samples,), default=None
            The 1-based rank at which each row was displayed when its label
            (a click) was collected, used by ``position_debiasing`` and
            ignored otherwise. Requested through metadata routing like
            ``qid``.
        X_val, y_val, qid_val : default=None
            A validation set for early stopping (on the ``scoring`` metric of
            ``y_val``). If not given and early stopping is on,
            ``validation_fraction`` of the queries is held out.

        Returns
        -------
        self : object
            The fitted ranker.
        """
        if self.secondary_weight > 0 and y_secondary is None:
            raise ValueError(
                f"secondary_weight={self.secondary_weight} needs secondary labels: pass "
                "fit(..., y_secondary=...) with one value in [0, 1] per row, or set "
                "secondary_weight=0."
            )
        self._check_pair_options()
        self._check_debiasing(position)
        if self.position_debiasing == "ipw" and position is not None:
            self._check_positions_have_propensity(position)
        return self._fit(
            X, y, qid=qid, sample_weight=sample_weight, X_val=X_val, y_val=y_val, qid_val=qid_val,
            y_secondary=y_secondary, position=position,
        )

    def _check_debiasing(self, position):
        """Refuse debiasing with the multiple-objective options and
        propensities without "ipw"; warn if debiasing has no positions."""
        if self.position_debiasing != "ipw":
            if self.propensity is not None:
                raise ValueError(
                    f"propensity is read by position_debiasing='ipw' only; with "
                    f"position_debiasing={self.position_debiasing!r} it would be ignored. Set "
                    "position_debiasing='ipw' to weight clicks by 1 / propensity, or "
                    "propensity=None."
                )
            if self.propensity_clip != DEFAULT_PROPENSITY_CLIP:
                raise ValueError(
                    f"propensity_clip={self.propensity_clip} is read by "
                    f"position_debiasing='ipw' only; with position_debiasing="
                    f"{self.position_debiasing!r} it would be ignored. Set "
                    f"position_debiasing='ipw', or leave propensity_clip at "
                    f"{DEFAULT_PROPENSITY_CLIP}."
                )
        elif self.propensity is None:
            raise ValueError(
                "position_debiasing='ipw' needs the examination probability of each "
                "displayed position: pass propensity=[p1, p2, ...] (position 1 first, each in "
                "(0, 1], e.g. from a randomisation experiment), or use "
                "position_debiasing='unbiased_lambdamart' to estimate them with the trees."
            )
        else:
            check_propensity(self.propensity, self.propensity_clip)
        if (self.position_debiasing != "unbiased_lambdamart"
                and self.position_bias_norm != _DEFAULT_POSITION_BIAS_NORM):
            raise ValueError(
                f"position_bias_norm={self.position_bias_norm} is read by "
                "position_debiasing='unbiased_lambdamart' only; with position_debiasing="
                f"{self.position_debiasing!r} it would be ignored. Set "
                "position_debiasing='unbiased_lambdamart', or leave position_bias_norm at "
                f"{_DEFAULT_POSITION_BIAS_NORM}."
            )
        if self.position_debiasing != "additive" and self.position_bias_regularization != 0:
            raise ValueError(
                f"position_bias_regularization={self.position_bias_regularization} is read by "
                "position_debiasing='additive' only; with position_debiasing="
                f"{self.position_debiasing!r} it would be ignored. Set "
                "position_debiasing='additive', or position_bias_regularization=0."
            )
        if self.position_debiasing is not None:
            if not self._is_plain():
                raise ValueError(
                    f"position_debiasing={self.position_debiasing!r} debiases plain LambdaMART; "
                    "it cannot be combined with secondary_weight, lambda_schedule or "
                    "leaf_estimation='gradient'. Set position_debiasing=None or drop those "
                    "options."
                )
            if position is None:
                warnings.warn(
                    f"position_debiasing={self.position_debiasing!r} needs the displayed "
                    "positions: pass fit(..., position=...). Without them this fit is plain "
                    "LambdaMART.",
                    UserWarning,
                    stacklevel=5,  # the caller of fit, past its two wrappers
                )

    def _check_positions_have_propensity(self, position):
        """Refuse positions (of all rows, held-out ones too) beyond
        ``propensity``; malformed positions are left to ``check_positions``."""
        values = np.asarray(position)
        if values.ndim == 1 and values.size and values.dtype.kind in "iuf":
            largest = np.max(values)
            if np.isfinite(largest):
                check_positions_have_propensity(int(largest), len(self.propensity))

    def _check_pair_options(self):
        """Refuse pair options that another parameter would silently
        override, and combinations not implemented."""
        if self.pairs_per_document is not None and self.pair_method != "mean":
            raise ValueError(
                f"pairs_per_document={self.pairs_per_document} is the number of partners drawn "
                f"per document by pair_method='mean'; with pair_method={self.pair_method!r} "
                "set it to None (the top positions of pair_method='topk' are "
                "truncation_level), or use pair_method='mean'."
            )
        if self.pair_method != "topk" and self.truncation_level != _DEFAULT_TRUNCATION_LEVEL:
            raise ValueError(
                f"truncation_level={self.truncation_level} is read by pair_method='topk' only; "
                f"pair_method={self.pair_method!r} forms pairs over whole queries. Use "
                f"pair_method='topk' or leave truncation_level at {_DEFAULT_TRUNCATION_LEVEL}."
            )
        if self._lambdarank_pairs():
            return
        chosen = f"target_metric={self.target_metric!r}, pair_method={self.pair_method!r}"
        if not self._is_plain():
            raise ValueError(
                f"{chosen} cannot be combined with secondary_weight, lambda_schedule or "
                "leaf_estimation='gradient', which blend LambdaMART's own lambdas. Use "
                "target_metric='ndcg', pair_method='topk' or drop those options."
            )
        if self.position_debiasing is not None:
            raise ValueError(
                f"{chosen} cannot be combined with position_debiasing={self.position_debiasing!r}"
                ", which debiases LambdaMART's lambdas on the top truncation_level pairs. Use "
                "target_metric='ndcg', pair_method='topk' or position_debiasing=None."
            )

    def _lambdarank_pairs(self):
        """True for LambdaMART's own pairs: |delta NDCG| on the top
        ``truncation_level`` positions."""
        return self.target_metric == "ndcg" and self.pair_method == "topk"

    def _is_plain(self):
        """True when no multiple-objective option is on: plain LambdaMART."""
        return (
            self.secondary_weight == 0
            and self.lambda_schedule is None
            and self.leaf_estimation == "newton"
        )

    @property
    def _objective_name(self):
        if not self._is_plain():
            return "lambdarank_multi"
        return "lambdarank" if self._lambdarank_pairs() else "lambdarank_pairwise"

    def _gain_table(self):
        return None if self.label_gain is None else check_label_gain(self.label_gain)

    def _objective_params(self):
        params = dict(
            sigma=self.sigma,
            truncation_level=self.truncation_level,
            normalize_lambdas=self.normalize_lambdas,
            label_gain=self._gain_table(),
        )
        if self._objective_name == "lambdarank_pairwise":
            params.update(target_metric=self.target_metric, pair_method=self.pair_method,
                          pairs_per_document=self.pairs_per_document)
            if self.pair_method != "topk":
                del params["truncation_level"]
        if not self._is_plain():
            eta = self.schedule_eta
            if eta is None and self.lambda_schedule is not None:
                eta = _DEFAULT_SCHEDULE_ETA[self.lambda_schedule]
            params.update(
                secondary_weight=self.secondary_weight,
                lambda_schedule=self.lambda_schedule,
                schedule_w0=self.schedule_w0,
                schedule_eta=eta,
                sigmoid_mu=self.sigmoid_mu,
                sigmoid_truncation=self.sigmoid_truncation,
                leaf_estimation=self.leaf_estimation,
            )
        return params

    def _debiases(self, position):
        return self.position_debiasing is not None and position is not None

    def _objective_state(self, warm):
        # A warm start continues the estimate of the position biases or
        # offsets; "ipw" estimates nothing.
        if (warm and self.position_debiasing == "unbiased_lambdamart"
                and hasattr(self, "position_bias_")):
            return {"initial_position_bias": (self.position_bias_,
                                              self.position_bias_unclicked_)}
        if warm and self.position_debiasing == "additive" and hasattr(self, "position_offset_"):
            return {"initial_position_offset": self.position_offset_}
        return {}

    def _make_objective(self, y, offsets, sample_weight, y_secondary=None, position=None,
                        initial_position_bias=None, initial_position_offset=None):
        # Secondary labels and positions are checked whenever given, but only
        # lambda(C) and the debiasing read them; the plain objective never
        # sees them.
        if self._debiases(position) and self.position_debiasing == "ipw":
            return OBJECTIVES["lambdarank_ipw"](
                y, offsets, sample_weight, **self._objective_params(), position=position,
                propensity=self.propensity, propensity_clip=self.propensity_clip,
            )
        if self._debiases(position) and self.position_debiasing == "additive":
            return OBJECTIVES["lambdarank_additive"](
                y, offsets, sample_weight, **self._objective_params(), position=position,
                learning_rate=self.learning_rate,
                position_bias_regularization=self.position_bias_regularization,
                initial_position_offset=initial_position_offset,
            )
        if self._debiases(position):
            return OBJECTIVES["lambdarank_unbiased"](
                y, offsets, sample_weight, **self._objective_params(), position=position,
                position_bias_norm=self.position_bias_norm,
                initial_position_bias=initial_position_bias,
            )
        row_params = {}
        if y_secondary is not None and self.secondary_weight > 0:
            row_params["y_secondary"] = y_secondary
        return super()._make_objective(y, offsets, sample_weight, **row_params)
