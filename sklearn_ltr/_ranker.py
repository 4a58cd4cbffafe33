"""The gradient-boosted rankers. Each one only picks an objective and its
parameters; the rest is in :class:`sklearn_ltr._base.BaseGBRanker`."""

from numbers import Integral, Real

from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseGBRanker
from ._registry import register_model_class
from .metrics._checks import check_label_gain

# schedule_eta=None: the paper's sweep values (Svore et al., WWW 2011, section 6.2),
# for its 1000 trees. The Figure-6 form reuses the exponential sweep's 100 (of
# {100, 250}): read without the cumulative sum, those values spread the shift over
# the 1000 trees (w_1000 = exp(-0.1) = 0.90 for 100, 0.78 for 250) as the text's
# "gradually" and Figure 6's curves describe, and 100 ends nearest full weight.
_DEFAULT_SCHEDULE_ETA = {"exponential": 100.0, "exponential_noncumulative": 100.0, "linear": 0.01}

__all__ = ["LambdaMARTRanker", "ListNetRanker", "XENDCGRanker"]

_SHARED_PARAMETERS_DOC = """
    n_estimators : int, default=100
        Maximum number of boosting iterations (trees); LightGBM's
        ``num_iterations``.
    learning_rate : float, default=0.1
        Shrinkage applied to every leaf value.
    max_leaf_nodes : int, default=31
        Maximum number of leaves per tree (trees grow best-first).
    max_depth : int or None, default=None
        Maximum depth of a tree; None means no limit besides the leaves.
    min_samples_leaf : int, default=20
        Minimum number of training rows in a leaf.
    min_hessian_to_split : float, default=1e-3
        Minimum sum of hessians in each child of a split (LightGBM's
        ``min_sum_hessian_in_leaf``).
    l2_regularization : float, default=0.0
        L2 penalty on leaf values.
    max_bins : int, default=255
        Maximum number of bins per feature for non-missing values; missing
        values (NaN) get a bin of their own. A categorical feature keeps its
        ``max_bins`` most frequent categories; the rarer ones are treated as
        missing values.
    categorical_features : array-like of int, str or bool, 'from_dtype' or None, default='from_dtype'
        The categorical features, as in scikit-learn's
        HistGradientBoostingRegressor: indices, feature names (X must then be
        a DataFrame), a boolean mask of shape (n_features,), None for none,
        or 'from_dtype' for the pandas ``category`` columns of a DataFrame.
        A categorical column holds integer category codes in [0, 2**31);
        NaN and negative values are missing. A pandas ``category`` column is
        read by its categories, so the column at predict time may list them
        in another order. A split on a categorical feature sends a set of
        categories left (found as LightGBM does, by sorting the categories by
        their mean gradient). Missing values, categories rarer than the
        ``max_bins`` most frequent, and categories not seen in ``fit`` go to
        the split's missing-value side. LightGBM's ``categorical_feature``.
    max_features : float, default=1.0
        Fraction of the features each tree may split on, drawn per tree.
    subsample : float, default=1.0
        Fraction of the training *queries* (not rows) used for each tree.
    monotonic_cst : array-like of int of shape (n_features,), dict or None, default=None
        Monotonic constraint of each feature, as in scikit-learn's
        ``HistGradientBoostingRegressor``: 1 the score never decreases when
        the feature grows (all other features fixed), -1 it never
        increases, 0 no constraint. A dict maps features, by name (for a
        DataFrame ``X``) or by column index, to -1, 0 or 1; features left
        out get 0. A split on a constrained feature is made only if its
        children's values are in the constrained order, and every node's
        value is kept between bounds set by the splits above it (the
        mid-point of the children's values after a constrained split), so
        every tree, and the model, is monotonic in the feature. LightGBM's
        and XGBoost's ``monotone_constraints``.
    interaction_cst : {"pairwise", "no_interactions"}, list of lists/tuples/sets or None, \
default=None
        Groups of features that may interact, as in scikit-learn's
        ``HistGradientBoostingRegressor``: the features split on along any
        path from a tree's root to a leaf all lie in one group. Features are
        given by column index or, for a DataFrame ``X``, by name; those no
        group lists form one more group. ``"pairwise"`` makes every pair of
        features a group, ``"no_interactions"`` every feature alone (each
        path of a tree then splits on one feature only). LightGBM's and
        XGBoost's ``interaction_constraints``.
    early_stopping : 'auto' or bool, default='auto'
        Stop when the validation score (``scoring``) stops improving. 'auto'
        enables it when a validation set is given or when there are more
        than 10,000 rows.
        With early stopping the model keeps the trees up to the best
        validation score.
    validation_fraction : float, int or None, default=0.1
        Share (float) or number (int) of training queries held out for early
        stopping when no ``X_val`` is given. The split is by query, never
        by row. None stops on the training data.
    validation_ndcg_k : int, default=10
        Cutoff of the NDCG that ``scoring=None`` means. Only read then: with
        another ``scoring`` it must stay 10 (write ``scoring="ndcg@5"``
        rather than ``validation_ndcg_k=5`` with another metric).
    scoring : str, RankingScorer or None, default=None
        The metric that early stopping watches and that ``train_score_``,
        ``validation_score_`` and ``verbose`` report, larger being better
        (HistGradientBoosting's ``scoring``):

        - None: NDCG@``validation_ndcg_k``, so ``"ndcg@10"`` by default;
        - ``"ndcg@k"``, ``"map@k"``, ``"mrr@k"`` or ``"err@k"`` for a cutoff
          ``k >= 1``, or ``"ndcg"``, ``"map"``, ``"mrr"``, ``"err"`` for no
          cutoff (in any case): :func:`~sklearn_ltr.metrics.ndcg_score`,
          :func:`~sklearn_ltr.metrics.map_score`,
          :func:`~sklearn_ltr.metrics.mrr_score` or
          :func:`~sklearn_ltr.metrics.err_score` with their defaults (tied
          scores averaged; NDCG's gain ``2**y - 1``, a query without relevant
          documents counting 1; for MAP and MRR labels >= 1 are relevant, and
          such a query counts 0); ERR's ``max_grade`` is the largest label of
          the fit's training and validation rows;
        - a ranking scorer of :mod:`sklearn_ltr.metrics`, for other
          parameters of a metric: ``ndcg_scorer(5, gain="linear")``,
          ``make_ranking_scorer(err_score, k=10, max_grade=4)``. After every
          tree it is called with the rows' query ids and a stand-in model
          whose ``predict`` gives the current scores of those rows (nothing
          is predicted again); with ``greater_is_better=False`` its value is
          the negated metric. :func:`~sklearn_ltr.save_model` saves only the
          string forms.

        A Dask ranker's ``train_score_`` is the mean of the workers' values
        weighted by their numbers of queries, which equals the in-memory
        value for a mean over queries, as every metric above is.
    n_iter_no_change : int, default=10
        Stop after this many iterations without an improvement of more than
        ``tol``.
    tol : float, default=1e-7
        Minimum improvement of the validation score that counts, in the
        units of ``scoring``.
    warm_start : bool, default=False
        If True, ``fit`` adds trees to the fitted model up to ``n_estimators``
        (with the same bins and seeds, so 50 + 50 trees equal 100).
    importance_type : {"gain", "split"}, default="gain"
        What ``feature_importances_`` adds up for each feature: the gain of
        the splits on it ("gain") or their number ("split"), LightGBM's names.
        Both are normalised to sum to one (LightGBM's are not, and its
        default is "split").
    verbose : int, default=0
        Progress of the fit: first whether early stopping is on and why
        (``"auto"`` turns it on above 10,000 rows) and how many queries are
        held out; then iteration, train and validation score (named after
        ``scoring``: "NDCG@10" by default, "score" for a scorer), elapsed
        time and the time left (a range while early stopping may end the fit
        sooner);
        last why it ended and the best iteration kept. With 1, every
        iteration, as a single line that updates in place on a terminal (a
        line per iteration elsewhere); with N > 1, every N-th iteration and
        the last, each on a line of its own.
    random_state : int, RandomState instance or None, default=None
        Seeds the validation split, the binning subsample, and query and
        feature subsampling. The same seed gives the same model on any number
        of threads.
    n_jobs : int or None, default=None
        Number of threads of the numba kernels of ``fit``, ``predict``,
        ``staged_predict``, ``score`` (and of ``rank`` and ``predict_proba``,
        which predict). None keeps numba's current count of the calling
        thread: ``NUMBA_NUM_THREADS`` (by default all cores) unless lowered
        with ``numba.set_num_threads``. -1 means ``NUMBA_NUM_THREADS``, -2
        one fewer, and so on, as in scikit-learn; 0 is refused. Counts
        above ``NUMBA_NUM_THREADS`` are cut to it without an error, so a
        model saved with ``n_jobs=16`` predicts on a smaller machine. The
        previous count is restored afterwards. The model and its
        predictions are bit-identical for any value."""

_ATTRIBUTES_DOC = """
    n_features_in_ : int
        Number of features seen in ``fit``.
    is_categorical_ : ndarray of shape (``n_features_in_``,), dtype bool, or None
        Which features are categorical; None if none is.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Feature names, when ``X`` was a DataFrame with string column names
        (never includes ``"qid"``).
    n_iter_ : int
        Number of trees in the model.
    do_early_stopping_ : bool
        Whether early stopping was used.
    train_score_ : ndarray
        The ``scoring`` metric (NDCG@``validation_ndcg_k`` by default) on
        (a sample of up to 10,000 rows of
        whole queries of) the training data of the model with 0, 1, 2, ...
        trees, for every tree grown: after early stopping it runs
        ``n_iter_no_change`` entries past the ``n_iter_ + 1`` of the kept
        model. Empty without early stopping or verbose output; NaN for trees
        of an earlier warm-start fit that recorded none, or recorded another
        metric (``scoring`` or ``validation_ndcg_k`` changed).
    validation_score_ : ndarray
        The same on the validation data of the last fit. Early stopping keeps
        the trees up to the best of these, ``validation_score_[n_iter_]``
        (never fewer than a warm start already had).
    feature_importances_ : ndarray of shape (``n_features_in_``,)
        Split gain (``importance_type="gain"``) or number of splits
        ("split") per feature, normalised to sum to one.
    objective_ : str
        Name of the objective that was optimised."""


def _ranker_doc(summary, parameters, example_class):
    return (
        summary
        + """

    Parameters
    ----------"""
        + parameters
        + _SHARED_PARAMETERS_DOC
        + """

    Attributes
    ----------"""
        + _ATTRIBUTES_DOC
        + f"""

    Examples
    --------
    >>> from sklearn_ltr import {example_class}
    >>> from sklearn_ltr.datasets import make_ranking
    >>> X, y, qid = make_ranking(n_queries=30, docs_per_query=20, n_features=10, random_state=0)
    >>> ranker = {example_class}(n_estimators=20, random_state=0).fit(X, y, qid=qid)
    >>> ranker.predict(X[:3]).shape
    (3,)
    """
    )



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
    ``sklearn_ltr._objectives.multi_objective.LambdaRankMultiObjective``.""",
        """
    sigma : float, default=1.0
        Steepness of the pairwise sigmoid.
    truncation_level : int, default=30
        Only pairs whose higher-ranked document (in the current ranking) lies
        in the top ``truncation_level`` positions contribute, as LightGBM's
        ``lambdarank_truncation_level``.
    normalize_lambdas : bool, default=True
        Normalise each query's lambdas as LightGBM's ``lambdarank_norm``.
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
        error of MART, and ``min_hessian_to_split`` counts rows.""",
        "LambdaMARTRanker",
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
    }

    # Routed like qid: with metadata routing on, GridSearchCV and
    # cross_validate pass y_secondary=... to fit without set_fit_request.
    __metadata_request__fit = {"y_secondary": True}

    def __init__(
        self,
        *,
        sigma=1.0,
        truncation_level=30,
        normalize_lambdas=True,
        label_gain=None,
        secondary_weight=0.0,
        lambda_schedule=None,
        schedule_w0=0.25,
        schedule_eta=None,
        sigmoid_mu=0.0,
        sigmoid_truncation=None,
        leaf_estimation="newton",
        n_estimators=100,
        learning_rate=0.1,
        max_leaf_nodes=31,
        max_depth=None,
        min_samples_leaf=20,
        min_hessian_to_split=1e-3,
        l2_regularization=0.0,
        max_bins=255,
        categorical_features="from_dtype",
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
            min_samples_leaf=min_samples_leaf,
            min_hessian_to_split=min_hessian_to_split,
            l2_regularization=l2_regularization,
            max_bins=max_bins,
            categorical_features=categorical_features,
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
        self.label_gain = label_gain
        self.secondary_weight = secondary_weight
        self.lambda_schedule = lambda_schedule
        self.schedule_w0 = schedule_w0
        self.schedule_eta = schedule_eta
        self.sigmoid_mu = sigmoid_mu
        self.sigmoid_truncation = sigmoid_truncation
        self.leaf_estimation = leaf_estimation

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X, y, *, qid=None, sample_weight=None, y_secondary=None, X_val=None, y_val=None,
        qid_val=None,
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
        return self._fit(
            X, y, qid=qid, sample_weight=sample_weight, X_val=X_val, y_val=y_val, qid_val=qid_val,
            y_secondary=y_secondary,
        )

    def _is_plain(self):
        """True when no multiple-objective option is on: plain LambdaMART."""
        return (
            self.secondary_weight == 0
            and self.lambda_schedule is None
            and self.leaf_estimation == "newton"
        )

    @property
    def _objective_name(self):
        return "lambdarank" if self._is_plain() else "lambdarank_multi"

    def _gain_table(self):
        return None if self.label_gain is None else check_label_gain(self.label_gain)

    def _objective_params(self):
        params = dict(
            sigma=self.sigma,
            truncation_level=self.truncation_level,
            normalize_lambdas=self.normalize_lambdas,
            label_gain=self._gain_table(),
        )
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

    def _make_objective(self, y, offsets, sample_weight, y_secondary=None):
        # Secondary labels are checked whenever given, but only lambda(C) reads
        # them; with secondary_weight=0 the objective never sees them.
        row_params = {}
        if y_secondary is not None and self.secondary_weight > 0:
            row_params["y_secondary"] = y_secondary
        return super()._make_objective(y, offsets, sample_weight, **row_params)


@register_model_class
class XENDCGRanker(BaseGBRanker):
    __doc__ = _ranker_doc(
        """Gradient-boosted trees trained with the XE-NDCG cross entropy loss.

    The scores of each query go through a softmax and are fitted, by cross
    entropy, to the target distribution
    ``phi_i = (2**y_i - gamma_i) / sum_j (2**y_j - gamma_j)`` with
    ``gamma_i ~ U[0, 1]`` drawn afresh every iteration (from ``random_state``,
    so the model does not depend on the number of threads). Bruch, "An
    Alternative Cross Entropy Loss for Learning-to-Rank", WWW 2020: the loss is
    a convex bound on mean NDCG, and its leaf values are Newton steps with the
    paper's truncated Neumann series for the inverse Hessian (section 4.4),
    the same steps as LightGBM's ``rank_xendcg``. Queries with one document or
    with all labels equal contribute nothing.""",
        """
    hessian_terms : int, default=2
        Terms of the Neumann series ``(I - S)^-1 ~ I + S + ... + S^K`` used for
        the Newton step: 0 is a plain diagonal Newton step, 2 is the paper's
        (and LightGBM's) choice; more terms approach the exact Newton step
        at O(n) extra cost per query each.""",
        "XENDCGRanker",
    )

    _objective_name = "xendcg"

    _parameter_constraints = {
        **BaseGBRanker._parameter_constraints,
        "hessian_terms": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        hessian_terms=2,
        n_estimators=100,
        learning_rate=0.1,
        max_leaf_nodes=31,
        max_depth=None,
        min_samples_leaf=20,
        min_hessian_to_split=1e-3,
        l2_regularization=0.0,
        max_bins=255,
        categorical_features="from_dtype",
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
            min_samples_leaf=min_samples_leaf,
            min_hessian_to_split=min_hessian_to_split,
            l2_regularization=l2_regularization,
            max_bins=max_bins,
            categorical_features=categorical_features,
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
        self.hessian_terms = hessian_terms

    def _objective_params(self):
        return dict(hessian_terms=self.hessian_terms)


@register_model_class
class ListNetRanker(BaseGBRanker):
    __doc__ = _ranker_doc(
        """Gradient-boosted trees trained with the ListNet softmax cross entropy.

    The scores of each query go through a softmax and are fitted, by cross
    entropy, to a target distribution built from the labels. With
    ``label_distribution="linear"`` the target is ``y / sum(y)``, the form
    Bruch, Wang, Bendersky and Najork analyse in "An Analysis of the Softmax
    Cross Entropy Loss for Learning-to-Rank with Binary Relevance" (ICTIR 2019),
    who show it bounds MRR and NDCG; ``"exponential"`` is the original
    ListNet target ``softmax(y)`` (Cao et al., ICML 2007). Leaf values are
    Newton steps with the diagonal hessian ``rho * (1 - rho)``. Queries with
    one document, or whose labels sum to zero under the linear target,
    contribute nothing.""",
        """
    label_distribution : {"linear", "exponential"}, default="linear"
        How labels become the target distribution of a query.""",
        "ListNetRanker",
    )

    _objective_name = "listnet"

    _parameter_constraints = {
        **BaseGBRanker._parameter_constraints,
        "label_distribution": [StrOptions({"linear", "exponential"})],
    }

    def __init__(
        self,
        *,
        label_distribution="linear",
        n_estimators=100,
        learning_rate=0.1,
        max_leaf_nodes=31,
        max_depth=None,
        min_samples_leaf=20,
        min_hessian_to_split=1e-3,
        l2_regularization=0.0,
        max_bins=255,
        categorical_features="from_dtype",
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
            min_samples_leaf=min_samples_leaf,
            min_hessian_to_split=min_hessian_to_split,
            l2_regularization=l2_regularization,
            max_bins=max_bins,
            categorical_features=categorical_features,
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
        self.label_distribution = label_distribution

    def _objective_params(self):
        return dict(label_distribution=self.label_distribution)
