"""Rankers whose scores are probabilities: :class:`CalibratedRanker`.

The ranker is trained jointly for ranking and calibration on the package's
GBDT (not a post-hoc wrapper around another ranker), following Bai et al.,
*Regression Compatible Listwise Objectives for Calibrated Ranking with Binary
Relevance* (CIKM 2023). Its default objective, RCR, sums a pointwise sigmoid
cross entropy and a listwise cross entropy over sigmoid scores whose minima
coincide, so ``sigmoid(score)`` estimates ``P(relevant)`` while the ranking
term sharpens the order within each query. Platt scaling on held-out queries
is available for the uncalibrated softmax baseline.
"""

from numbers import Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import ClassifierTags, _safe_indexing, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples, check_consistent_length, check_is_fitted

from .._utils.queries import (
    check_per_row_weights,
    check_qid,
    group_queries,
    resolve_qid,
    split_queries,
)
from .._utils.sums import fixed_order_dot
from .base import BaseGBRanker
from .docs import _ranker_doc
from .registry import register_model_class

__all__ = ["CalibratedRanker"]

_SIGMOID_OBJECTIVES = ("rcr", "sigmoid", "sigmoid+softmax")
_MIXTURES = ("rcr", "sigmoid+softmax")
# Newton iterations for the two Platt parameters; it converges in < 10 unless
# the held-out scores separate the labels, when the slope grows without bound.
_PLATT_MAX_ITER = 100


def _sigmoid(z):
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    e = np.exp(z[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def _platt_loss(a, b, s, y, w):
    z = a * s + b
    # softplus(z) - y z, the logistic loss, without overflow.
    return fixed_order_dot(w, np.logaddexp(0.0, z) - y * z)


def fit_platt(scores, y, sample_weight=None):
    """Platt scaling: the logistic regression ``P(y=1) = sigmoid(a * s + b)``.

    Maximum likelihood, unregularised, by Newton's method with step halving
    on the two parameters; labels may be fractional (click-through rates).

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Raw scores of held-out rows.
    y : array-like of shape (n_samples,)
        Labels in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights.

    Returns
    -------
    a, b : float
        Slope and intercept.
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones_like(s) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    # Start at the best constant so the first steps are small.
    mean = min(max(fixed_order_dot(w, y) / max(w.sum(), 1e-300), 1e-6), 1 - 1e-6)
    a, b = 0.0, float(np.log(mean / (1 - mean)))
    loss = _platt_loss(a, b, s, y, w)
    for _ in range(_PLATT_MAX_ITER):
        p = _sigmoid(a * s + b)
        r = w * (p - y)
        g = np.array([fixed_order_dot(r, s), r.sum()])
        v = w * p * (1 - p)
        vs = fixed_order_dot(v, s)
        H = np.array([[fixed_order_dot(v, s * s), vs], [vs, v.sum()]])
        H += 1e-12 * max(np.trace(H), 1e-300) * np.eye(2)  # keep H invertible
        step = np.linalg.solve(H, g)
        t = 1.0
        while t > 1e-10:
            a_new, b_new = a - t * step[0], b - t * step[1]
            new_loss = _platt_loss(a_new, b_new, s, y, w)
            if new_loss <= loss:
                break
            t *= 0.5
        else:
            break
        converged = loss - new_loss <= 1e-12 * max(abs(loss), 1.0)
        a, b, loss = a_new, b_new, new_loss
        if converged:
            break
    return float(a), float(b)


def _proba_available(ranker):
    # A fitted ranker answers for the model it holds, not for parameters set since.
    if hasattr(ranker, "_booster"):
        objective, platt = ranker.objective_, hasattr(ranker, "platt_coef_")
    else:
        objective, platt = ranker.objective, ranker.calibration == "platt"
    if objective == "softmax" and not platt:
        raise AttributeError(
            "predict_proba is not available for objective='softmax' without "
            "calibration='platt': softmax scores are defined only up to a per-query "
            "shift, so they are not probabilities. Set calibration='platt' or use a "
            "sigmoid-based objective ('rcr', 'sigmoid', 'sigmoid+softmax')."
        )
    return True


@register_model_class
class CalibratedRanker(BaseGBRanker):
    __doc__ = _ranker_doc(
        """Gradient-boosted ranker whose scores are calibrated probabilities of relevance.

    Trained with the losses of Bai et al., "Regression Compatible Listwise
    Objectives for Calibrated Ranking with Binary Relevance" (CIKM 2023), on
    binary (or [0, 1], e.g. click-through-rate) labels. For a query with
    scores ``s`` and labels ``y``:

    - ``"rcr"`` (default, eq. 20):
      ``(1 - alpha) sum_i SigmoidCE(s_i, y_i) + alpha ListCE(sigmoid)``, with
      ``ListCE(sigmoid) = -(1/C) sum_i y_i log(sigmoid(s_i) / sum_j sigmoid(s_j))``,
      ``C = sum_i y_i``. Both terms are minimised by ``sigmoid(s) = E[y]``, so
      the ranking term does not fight the calibration.
    - ``"sigmoid"``: pointwise logistic regression (eq. 1).
    - ``"softmax"``: the listwise SoftmaxCE (eq. 3); not calibrated, pair it
      with ``calibration="platt"``.
    - ``"sigmoid+softmax"``: the multi-objective baseline (eq. 5).

    :meth:`predict` returns the raw score ``s`` (rank by it);
    :meth:`predict_proba` returns ``[1 - P, P]`` with ``P = sigmoid(s)``, or
    ``sigmoid(a s + b)`` after Platt scaling. Sigmoid-based objectives start
    from the log-odds of the mean label.

    The default ``alpha=0.9`` comes from a grid on binarized MQ2008 (5 folds
    of 471 training queries, ``learning_rate=0.05``, up to 300 trees with
    early stopping on the fold's validation queries, ``n_iter_no_change=50``;
    test NDCG@10 skipping queries without relevant documents, and test
    ``query_log_loss``). alpha = 0 / 0.25 / 0.5 / 0.75 / 0.9 / 0.99 / 1 gave
    NDCG@10 0.7312 / 0.7292 / 0.7309 / 0.7273 / 0.7347 / 0.7278 / 0.7232 and
    LogLoss 0.4208 / 0.4204 / 0.4227 / 0.4165 / 0.4220 / 0.4396 / 0.4531.
    0.9 had the best NDCG@10 with the LogLoss of alpha=0 (pure SigmoidCE)
    stopped the same way, on validation NDCG (+0.001); above it the LogLoss
    grows quickly, as the loss nears the uncalibrated ListCE(sigmoid).
    SigmoidCE stopped on validation LogLoss instead reaches 0.4155, 2.6%
    below alpha=0.9 (:doc:`/benchmarks/generated/calibration`): pick alpha and
    the stopping rule on your own validation data when LogLoss matters most. NDCG differences of this size are within the spread
    between folds (about 0.01), so the choice mainly guards calibration.
    The pointwise part is a sum over the query's documents and the listwise
    part one term per query (MQ2008 has about 19 documents per query), so
    the listwise share at a given alpha shrinks as lists grow; tune alpha for long lists.""",
        """
    objective : {"rcr", "sigmoid", "softmax", "sigmoid+softmax"}, default="rcr"
        The training loss.
    alpha : float in [0, 1], default=0.9
        Weight of the listwise part for ``"rcr"`` and ``"sigmoid+softmax"``
        (ignored by the others). 0 is pure SigmoidCE, 1 pure listwise.
    calibration : {None, "platt"}, default=None
        ``"platt"`` fits ``P = sigmoid(a s + b)`` by logistic regression on
        held-out queries: ``X_val`` when given, else ``validation_fraction`` of
        the training queries (split by query, never used to grow trees).
        Needed for ``predict_proba`` with ``objective="softmax"``; allowed with
        the others.
    binarize : bool, default=False
        Map labels to ``y > 0`` before training, as the paper does with graded
        datasets. Without it labels must lie in [0, 1].""",
        "CalibratedRanker",
    ).replace(
        """    objective_ : str
        Name of the objective that was optimised.""",
        """    objective_ : str
        Name of the objective that was optimised.
    platt_coef_, platt_intercept_ : float
        Platt scaling slope ``a`` and intercept ``b``; only with
        ``calibration="platt"``.""",
    ).replace(
        """    >>> ranker.predict(X[:3]).shape
    (3,)""",
        """    >>> ranker.predict(X[:3]).shape
    (3,)
    >>> proba = ranker.predict_proba(X[:3])
    >>> proba.shape
    (3, 2)
    >>> bool(np.allclose(proba.sum(axis=1), 1.0))
    True""",
    ).replace(
        "    >>> ranker = CalibratedRanker(",
        "    >>> import numpy as np\n    >>> y = (y > 0).astype(float)\n    >>> ranker = CalibratedRanker(",
    )

    _parameter_constraints = {
        **BaseGBRanker._parameter_constraints,
        "objective": [StrOptions({"rcr", "sigmoid", "softmax", "sigmoid+softmax"})],
        "alpha": [Interval(Real, 0, 1, closed="both")],
        "calibration": [StrOptions({"platt"}), None],
        "binarize": ["boolean"],
    }

    def __init__(
        self,
        *,
        objective="rcr",
        alpha=0.9,
        calibration=None,
        binarize=False,
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
        self.objective = objective
        self.alpha = alpha
        self.calibration = calibration
        self.binarize = binarize

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Still a ranker (estimator_type stays "ranker"); the classifier tags
        # only tell scikit-learn's checks that predict_proba has two columns.
        tags.classifier_tags = ClassifierTags(multi_class=False)
        return tags

    # The base class builds OBJECTIVES[_objective_name]; here it is a parameter.
    @property
    def _objective_name(self):
        return self.objective

    def _objective_params(self):
        return dict(alpha=self.alpha) if self.objective in _MIXTURES else {}

    # -- labels -----------------------------------------------------------

    def _checked_labels(self, y, name="y"):
        """Labels as the objectives need them: ``y > 0`` or checked to lie in [0, 1]."""
        y = super()._checked_labels(y, name=name)
        if self.binarize:
            return (y > 0).astype(np.float64)
        if y.size and (y.min() < 0 or y.max() > 1):
            raise ValueError(
                f"{name} must be binary or lie in [0, 1] (e.g. click-through rates) for "
                f"CalibratedRanker, got values in [{y.min():g}, {y.max():g}]. For graded "
                "relevance labels pass binarize=True to treat y > 0 as relevant."
            )
        return y

    # -- fit --------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, qid=None, sample_weight=None, X_val=None, y_val=None, qid_val=None):
        """Fit the ranker (and the Platt scaling, if asked).

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Training rows. NaN marks a missing value. A DataFrame may carry the
            query ids in a ``"qid"`` column, which is never used as a feature.
        y : array-like of shape (n_samples,)
            Labels in [0, 1] (binary relevance or click-through rates), or
            graded labels with ``binarize=True``.
        qid : array-like of shape (n_samples,), default=None
            Query id of each row. If None (and no ``"qid"`` column), all rows
            form one query.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row weights; they scale each row's gradient and hessian and
            weight the Platt fit.
        X_val, y_val, qid_val : default=None
            A validation set for early stopping, and for Platt scaling when
            ``calibration="platt"``.

        Returns
        -------
        self : object
            The fitted ranker.
        """
        fit = super().fit
        if self.calibration is None:
            self._forget_platt_scaling()
            fit(X, y, qid=qid, sample_weight=sample_weight, X_val=X_val, y_val=y_val, qid_val=qid_val)
            return self
        if X_val is not None:
            fit(X, y, qid=qid, sample_weight=sample_weight, X_val=X_val, y_val=y_val, qid_val=qid_val)
            self._fit_platt_on_validation_set(X_val, y_val, qid_val)
            return self
        if y_val is not None or qid_val is not None:
            raise ValueError("y_val or qid_val was given without X_val.")

        # Hold out whole queries that the trees never see, for the Platt fit.
        if self.validation_fraction is None:
            raise ValueError(
                "calibration='platt' without X_val fits the Platt scaling on the "
                "validation_fraction of the training queries it holds out, and "
                "validation_fraction=None holds out none. Set validation_fraction, or pass "
                "X_val, y_val, qid_val."
            )
        X, qid = resolve_qid(X, qid)
        n_samples = _num_samples(X)
        if qid is not None and np.shape(qid)[:1] == (n_samples,):
            # Before the length check, which would only report the lengths.
            check_per_row_weights(sample_weight, check_qid(qid, n_samples))
        check_consistent_length(X, y, qid, sample_weight)
        qid_rows = np.zeros(n_samples, dtype=np.int64) if qid is None else check_qid(qid, n_samples)
        order, offsets, _ = group_queries(qid_rows)
        n_queries = offsets.shape[0] - 1
        if n_queries < 2:
            raise ValueError(
                "calibration='platt' holds out whole queries for the Platt fit and needs "
                f"at least 2 queries, got {n_queries}. Pass qid, or X_val/y_val/qid_val."
            )
        if not (self.warm_start and hasattr(self, "_platt_seed")):
            # Kept across warm starts so the held-out queries stay the same.
            rng = check_random_state(self.random_state)
            self._platt_seed = int(rng.randint(np.iinfo(np.int32).max))
        split_rng = np.random.default_rng([self._platt_seed, 3])
        _, held_queries = split_queries(offsets, self.validation_fraction, split_rng)
        held = np.zeros(n_samples, dtype=bool)
        sizes = np.diff(offsets)
        in_held = np.zeros(n_queries, dtype=bool)
        in_held[held_queries] = True
        held[order] = np.repeat(in_held, sizes)
        train_rows, held_rows = np.flatnonzero(~held), np.flatnonzero(held)

        def take(a, rows):
            return None if a is None else _safe_indexing(a, rows)

        fit(
            take(X, train_rows), take(y, train_rows), qid=take(qid_rows, train_rows),
            sample_weight=take(sample_weight, train_rows),
        )
        scores = self.predict(take(X, held_rows))
        y_held = self._checked_labels(np.asarray(take(y, held_rows), dtype=np.float64))
        weight = take(sample_weight, held_rows)
        self._fit_platt(scores, y_held, None if weight is None else np.asarray(weight, dtype=np.float64))
        return self

    def _validation_set_used_otherwise(self):
        return self.calibration == "platt"

    def _forget_platt_scaling(self):
        """Drop the Platt scaling of an earlier fit, which must not outlive it."""
        for name in ("platt_coef_", "platt_intercept_"):
            self.__dict__.pop(name, None)

    def _fit_platt_on_validation_set(self, X_val, y_val, qid_val):
        X_val, _ = resolve_qid(X_val, qid_val)
        self._fit_platt(self.predict(X_val), self._checked_labels(y_val, name="y_val"), None)

    def _fit_platt(self, scores, y, sample_weight):
        self.platt_coef_, self.platt_intercept_ = fit_platt(scores, y, sample_weight)

    # -- prediction -------------------------------------------------------

    @available_if(_proba_available)
    def predict_proba(self, X):
        """Probability that each row is relevant.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            A ``"qid"`` column of a DataFrame is ignored.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 0 is ``P(not relevant)``, column 1 ``P(relevant)``:
            ``sigmoid(s)`` of the raw score ``s``, or ``sigmoid(a s + b)``
            if the fit was Platt-scaled (``calibration="platt"``). Parameters
            set after fitting do not change it.
        """
        check_is_fitted(self, "_booster")
        z = self.predict(X)
        if hasattr(self, "platt_coef_"):
            z = self.platt_coef_ * z + self.platt_intercept_
        # 1 - p as sigmoid(-z) keeps its digits where p rounds to 1.
        return np.column_stack([_sigmoid(-z), _sigmoid(z)])
