"""The numpydoc text the gradient-boosted rankers share: the parameters and
fitted attributes of :class:`~sklearn_ltr._rankers.base.BaseGBRanker` and the
template that puts a ranker's own summary and parameters around them."""

_SHARED_PARAMETERS_DOC = """
    n_estimators : int, default=100
        Maximum number of boosting iterations (trees); LightGBM's
        ``num_iterations``.
    learning_rate : float, default=0.1
        Shrinkage applied to every leaf value.
    max_leaf_nodes : int, default=31
        Maximum number of leaves per tree (LightGBM's ``num_leaves``).
        Symmetric trees take their size from ``max_depth`` alone
        (``2**max_depth`` leaves) and refuse any value but the default.
    max_depth : int or None, default=None
        Maximum depth of a tree (the root has depth 0). None means no limit
        besides the leaves for leaf-wise and depth-wise trees, and 6 levels
        (CatBoost's default depth) for symmetric trees, which have exactly
        this many levels.
    grow_policy : {'auto', 'lossguide', 'depthwise', 'symmetric'}, default=GROW_POLICY_DEFAULT
        How each tree grows (XGBoost's and CatBoost's names).
        ``'lossguide'`` (LightGBM's leaf-wise growth) splits next the leaf
        whose best split has the largest gain, until ``max_leaf_nodes``.
        ``'depthwise'`` (XGBoost's default) splits every splittable leaf of
        a level, each by its own best split, before going one level deeper,
        until ``max_depth`` or ``max_leaf_nodes`` stops it. ``'symmetric'``
        (CatBoost's default, oblivious trees) splits every node of a level
        by one shared split, the one with the largest gain summed over the
        level, for ``max_depth`` levels; a node where that split would leave
        a child below ``min_samples_leaf`` or ``min_hessian_to_split`` stays
        a leaf (CatBoost has no such minimum for these trees); a level's
        split on a categorical feature sends one set of categories left at
        every node. Symmetric trees take no monotonic or interaction
        constraints. ``'auto'`` grows symmetric trees, or leaf-wise ones
        when the data has categorical features (unless
        ``target_statistics='combinations'``), ``monotonic_cst`` constrains
        a feature, ``interaction_cst`` is not None, or ``max_leaf_nodes`` is
        not 31 (the value decides, not whether it was set);
        ``grow_policy_`` says which.
    min_samples_leaf : int, default=20
        Minimum number of training rows in a leaf.
    min_hessian_to_split : float, default=1e-3
        Minimum sum of hessians in each child of a split (LightGBM's
        ``min_sum_hessian_in_leaf``).
    l2_regularization : float, default=L2_DEFAULT
        L2 penalty on leaf values.
    max_bins : int, default=255
        Maximum number of bins per feature for non-missing values; missing
        values (NaN) get a bin of their own. A categorical feature keeps its
        ``max_bins`` most frequent categories and every other category seen
        in at least 3 training rows, split on through blocks of at most
        ``max_bins`` categories; the rarer ones are treated as missing values
        (:class:`~sklearn_ltr.exceptions.CategoryPoolingWarning` says so).
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
        their mean gradient). Missing values, the rare categories pooled with
        them (see ``max_bins``), and categories not seen in ``fit`` go to
        the split's missing-value side. LightGBM's ``categorical_feature``.
    target_statistics : {'ordered', 'combinations'} or None, default=None
        'ordered' adds, for each categorical feature, a numeric feature:
        the mean label of the row's category, as CatBoost's ordered target
        statistics compute it (Prokhorenkova et al. 2018). In training a row
        sees only the labels of its category in the queries before its own
        in a random order of the queries drawn from ``random_state``, shrunk
        towards the mean label of all rows with weight 1 (weighted by
        ``sample_weight``); prediction reads each category's statistic over
        all training rows. A value that is not a category seen in training
        (an unseen category, NaN, a negative code) gets the mean label. It
        helps where most categories have too few rows to split on
        (thousands of merchants seen a few times each); the native splits
        stay. 'combinations' adds the same statistic of combinations, as
        CatBoost's feature combinations: of each pair of the 4 categorical
        features, and of each of them with the quartile of each of the 4
        numeric features, that a first fit of 30 trees (these parameters,
        without statistics) finds most important. They let the trees read
        how a category's effect depends on another feature, which splits
        cannot learn for categories of few rows; it costs the first fit and
        the statistic columns (up to 22 more than 'ordered'), and cannot go
        with ``interaction_cst``. A warm start keeps the fitted statistics.
        Such a model cannot be exported (no serving format holds the
        statistics); ``feature_importances_`` and TreeSHAP count a statistic
        as part of its categorical feature, and share a combination's
        equally between its two features (as CatBoost does). CatBoost's CTRs
        (``simple_ctr``, ``combinations_ctr``).
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

        - None: NDCG at cutoff ``validation_ndcg_k``, so ``"ndcg@10"`` by
          default;
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
        default is "split"). A node of a symmetric tree may have a negative
        gain of its own when ``l2_regularization > 0`` (its level's split is
        chosen by the level's summed gain); that gain counts as 0.
    verbose : int, default=0
        Progress of the fit: first whether early stopping is on and why
        (``"auto"`` turns it on above 10,000 rows) and how many queries are
        held out, and with ``target_statistics='combinations'`` which
        features are combined; then iteration, train and validation score (named after
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
    grow_policy_ : {'lossguide', 'depthwise', 'symmetric'}
        The shape of the trees grown in the last fit: ``grow_policy``, with
        ``'auto'`` resolved.
    train_score_ : ndarray
        The ``scoring`` metric (by default NDCG at cutoff
        ``validation_ndcg_k``) on
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


def _ranker_doc(summary, parameters, example_class, attributes="", grow_policy="lossguide",
                l2_regularization=0.0):
    """A ranker's docstring: its ``summary``, its own ``parameters`` and
    ``attributes`` before the shared ones (with its defaults of
    ``grow_policy`` and ``l2_regularization``), and an example fitting
    ``example_class``."""
    return (
        summary
        + """

    Parameters
    ----------"""
        + parameters
        + _SHARED_PARAMETERS_DOC.replace("GROW_POLICY_DEFAULT", repr(grow_policy))
        .replace("L2_DEFAULT", repr(l2_regularization))
        + """

    Attributes
    ----------"""
        + attributes
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


def _dask_ranker_doc(summary, local_class, rest):
    """A Dask ranker's docstring: its ``summary``, the Parameters and
    Attributes sections of ``local_class`` (built by :func:`_ranker_doc`;
    the Dask ranker inherits its ``__init__`` and fitted attributes), then
    ``rest`` (See Also, Examples)."""
    doc = local_class.__doc__
    start = doc.index("\n\n    Parameters\n    ----------")
    end = doc.index("\n\n    Examples\n    --------", start)
    return summary + doc[start:end] + "\n\n" + rest
