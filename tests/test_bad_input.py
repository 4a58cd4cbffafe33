"""Every row of the bad-input table (doc/user_guide/bad_input.rst), for every
ranker and every metric: the input either works and gives the right answer,
or raises a ValueError that names the argument and the problem."""

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from conftest import RANKER_IDS, RANKERS

from sklearn_ltr import CalibratedRanker, LambdaMARTRanker
from sklearn_ltr.exceptions import SingleQueryWarning
from sklearn_ltr.metrics import (
    err_score,
    map_score,
    mrr_score,
    ndcg_score,
    ndcg_score_per_query,
    precision_at_k,
)

METRICS = [ndcg_score, mrr_score, map_score, err_score, precision_at_k]


@pytest.fixture(params=RANKERS, ids=RANKER_IDS)
def make(request):
    cls = request.param

    def make_ranker(**params):
        base = dict(n_estimators=5, min_samples_leaf=2, early_stopping=False, random_state=0)
        if cls is CalibratedRanker:
            base["binarize"] = True
        return cls(**{**base, **params})

    return make_ranker


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 4))
    y = rng.integers(0, 3, 80).astype(float)
    qid = np.repeat(np.arange(8), 10)
    # Make the labels learnable so that "works" means a real model.
    y[X[:, 0] > 0.8] = 2
    return X, y, qid


def _same(a, b):
    np.testing.assert_array_equal(a, b)


# -- shape and emptiness ------------------------------------------------------


def test_empty_X_raises_naming_X(make, data):
    with pytest.raises(ValueError, match="X .*no rows|0 sample"):
        make().fit(np.empty((0, 4)), np.empty(0), qid=np.empty(0))


def test_dataframe_of_only_qid_raises(make, data):
    _, y, qid = data
    with pytest.raises(ValueError, match="X has no feature columns"):
        make().fit(pd.DataFrame({"qid": qid}), y)


def test_empty_validation_set_raises_naming_X_val(make, data):
    X, y, qid = data
    with pytest.raises(ValueError, match="X_val has no rows"):
        make(early_stopping=True).fit(X, y, qid=qid, X_val=X[:0], y_val=y[:0], qid_val=qid[:0])


def test_fit_without_qid_on_over_10000_rows_warns_then_cannot_early_stop(make):
    # early_stopping="auto" holds out validation queries above 10,000 rows;
    # with no qid there is one query to hold out of, and the error says what
    # to do instead of fitting on a silent single query.
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(10_001, 3)), rng.integers(0, 3, 10_001).astype(float)
    with pytest.warns(SingleQueryWarning, match="fit got no query ids"):
        with pytest.raises(ValueError, match=r"Cannot hold out 1 of 1 queries .* Pass qid, "
                                             r".*or set early_stopping=False"):
            make(early_stopping="auto").fit(X, y)


def test_validation_set_without_qid_val_raises(make, data):
    # Without qid_val the whole validation set would be scored as one query.
    X, y, qid = data
    with pytest.raises(ValueError, match="qid_val is required: the training data has 8 queries"):
        make(early_stopping=True).fit(X, y, qid=qid, X_val=X, y_val=y)
    # One training query: one validation query is consistent and allowed.
    make(early_stopping=True).fit(X, y, qid=np.zeros(len(y)), X_val=X, y_val=y)
    # A qid column in a DataFrame X_val is its qid_val.
    frame = pd.DataFrame(X, columns=list("abcd")).assign(qid=qid)
    features = frame.drop(columns="qid")
    make(early_stopping=True).fit(features, y, qid=qid, X_val=frame, y_val=y)


def test_validation_set_with_early_stopping_off_raises(make, data):
    X, y, qid = data
    ranker = make(early_stopping=False)
    if isinstance(ranker, CalibratedRanker):
        # X_val has another use there: the Platt scaling.
        ranker.set_params(calibration="platt").fit(X, y, qid=qid, X_val=X, y_val=y, qid_val=qid)
        ranker.set_params(calibration=None)
    with pytest.raises(ValueError, match="X_val was given but early_stopping=False"):
        ranker.fit(X, y, qid=qid, X_val=X, y_val=y, qid_val=qid)


def test_platt_scaling_without_anything_to_hold_out_raises(data):
    X, y, qid = data
    ranker = CalibratedRanker(calibration="platt", validation_fraction=None, binarize=True)
    with pytest.raises(ValueError, match="validation_fraction=None holds out none"):
        ranker.fit(X, y, qid=qid)


def test_predict_on_zero_rows_returns_an_empty_array(make, data):
    X, y, qid = data
    model = make().fit(X, y, qid=qid)
    assert model.predict(X[:0]).shape == (0,)


def test_one_row_fits_a_constant_model(make, data):
    X, y, qid = data
    pred = make().fit(X[:1], y[:1], qid=qid[:1]).predict(X)
    assert np.all(np.isfinite(pred)) and np.ptp(pred) == 0


def test_queries_of_one_document_contribute_nothing(make, data):
    X, y, qid = data
    # A one-document query has nothing to be ranked against: alone, such
    # queries give no listwise gradient and hence a constant model.
    # CalibratedRanker's pointwise (sigmoid) term still learns from them.
    model = make().fit(X[:8], y[:8], qid=np.arange(8))
    alone = model.predict(X)
    assert np.all(np.isfinite(alone))
    if not isinstance(model, CalibratedRanker):
        assert np.ptp(alone) == 0


def test_a_query_whose_labels_are_all_equal_gives_no_gradient(make, data):
    """A query of equal labels has no order to learn. LambdaMART's pairs,
    XE-NDCG's and YetiRank's (active only where labels differ) give its rows
    exactly zero gradient and hessian. ListNet's target for it is uniform
    (none for labels all 0): its gradient softmax(s) - 1/n pulls the scores
    together, zero only once they are equal. CalibratedRanker's pointwise
    term learns from it, and its baseline, the log-odds of the mean label,
    moves with it. A query with zero gradients and hessians changes nothing
    else, so the model is that of the data without it, unless the objective
    draws random numbers per row (XE-NDCG, YetiRank: the other rows' draws
    move), where the model must at least not depend on its labels."""
    X, y, qid = data
    name = type(make()).__name__
    # Two queries of equal labels, all 0 and all 2, last in query order. Their
    # rows copy rows of the others, so the bins (midpoints between distinct
    # values, fewer than max_bins) are those of the data without them. One
    # row per leaf, so that their rows, which count but weigh nothing, cannot
    # make a split allowed (min_hessian_to_split refuses a side of them only).
    rng = np.random.default_rng(1)
    copies = rng.choice(len(y), 20, replace=False)
    X_all = np.vstack([X, X[copies]])
    qid_all = np.r_[qid, np.full(10, qid.max() + 1), np.full(10, qid.max() + 2)]
    zeros, twos = slice(80, 90), slice(90, 100)
    y_all = np.r_[y, np.zeros(10), np.full(10, 2.0)]

    def fit(X, y, qid):
        ranker = make(min_samples_leaf=1)
        made = []
        make_objective = ranker._make_objective

        def keep(*args, **kwargs):
            made.append(make_objective(*args, **kwargs))
            return made[-1]

        ranker._make_objective = keep  # to read the objective of the fit
        ranker.fit(X, y, qid=qid)
        del ranker._make_objective
        return ranker, made[0]

    def same_model(a, b):
        assert a._booster.baseline == b._booster.baseline
        assert len(a._booster.trees) == len(b._booster.trees) > 0
        for ta, tb in zip(a._booster.trees, b._booster.trees):
            # Rows count in a node's count and, where training had no
            # missing value (none here), in the side NaN takes: the larger.
            # Sums may differ by rounding: a child's histogram is its
            # parent's minus its sibling's, the one with fewer rows.
            for field in set(ta.dtype.names) - {"count", "missing_go_to_left"}:
                if field in ("value", "gain"):
                    np.testing.assert_allclose(ta[field], tb[field], rtol=1e-12, err_msg=field)
                else:
                    np.testing.assert_array_equal(ta[field], tb[field], err_msg=field)
        np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-12, atol=1e-12)

    ranker, objective = fit(X_all, y_all, qid_all)  # rows already in query order
    assert np.all(np.isfinite(ranker.predict(X_all)))
    scores = rng.normal(size=100)  # unequal scores within every query
    objective.prepare_iteration(np.random.default_rng(2))
    grad, hess = np.zeros(100, np.float32), np.zeros(100, np.float32)
    objective.gradient_hessian(scores, grad, hess)
    assert np.abs(grad[:80]).max() > 1e-3  # the other queries do learn

    def softmax(z):
        e = np.exp(z - z.max())
        return e / e.sum()

    if name in ("LambdaMARTRanker", "XENDCGRanker", "YetiRankRanker"):
        assert not grad[80:].any() and not hess[80:].any()
        if name == "LambdaMARTRanker":
            same_model(ranker, fit(X, y, qid)[0])
        else:
            swapped = np.r_[y, np.full(10, 2.0), np.zeros(10)]
            same_model(ranker, fit(X_all, swapped, qid_all)[0])
    elif name == "ListNetRanker":
        assert not grad[zeros].any() and not hess[zeros].any()
        expected = softmax(scores[twos]) - 0.1
        np.testing.assert_allclose(grad[twos], expected, rtol=1e-6, atol=1e-7)
        without_twos = slice(0, 90)
        same_model(fit(X_all[without_twos], y_all[without_twos], qid_all[without_twos])[0],
                   fit(X, y, qid)[0])
    elif name == "CalibratedRanker":
        # binarize=True: y > 0 is relevant; (1 - alpha) SigmoidCE + alpha
        # ListCE on the logits log sigmoid(s), whose softmax is sigmoid / sum.
        alpha = objective.alpha
        sig = 1 / (1 + np.exp(-scores))
        np.testing.assert_allclose(grad[zeros], (1 - alpha) * sig[zeros], rtol=1e-6)
        s = sig[twos]
        expected = (1 - alpha) * (s - 1) + alpha * (1 - s) * (s / s.sum() - 0.1)
        np.testing.assert_allclose(grad[twos], expected, rtol=1e-6, atol=1e-7)
        relevant = (y_all > 0).mean()
        assert ranker._booster.baseline == pytest.approx(np.log(relevant / (1 - relevant)))
        assert relevant != (y > 0).mean()
    else:
        pytest.fail(f"{name}: say here what a query of equal labels gives its objective")


def test_no_query_with_a_relevant_document(make, data):
    X, y, qid = data
    pred = make().fit(X, np.zeros_like(y), qid=qid).predict(X)
    assert np.all(np.isfinite(pred)) and np.ptp(pred) == 0


# -- qid ---------------------------------------------------------------------


def test_string_qid_gives_the_same_model_as_integers(make, data):
    X, y, qid = data
    strings = np.array([f"q{q:03d}" for q in qid])  # sorts like the integers
    _same(make().fit(X, y, qid=strings).predict(X), make().fit(X, y, qid=qid).predict(X))


@pytest.mark.parametrize(
    "bad_qid, message",
    [
        (lambda q: np.where(q == 2, np.nan, q.astype(float)), "qid contains NaN"),
        (lambda q: np.array([1 if i % 2 else "a" for i in q], dtype=object), "qid .*comparable"),
        (lambda q: q[:-3], "qid has 77 entries but there are 80 rows"),
    ],
    ids=["nan", "mixed-types", "misaligned"],
)
def test_bad_qid_raises_naming_qid(make, data, bad_qid, message):
    X, y, qid = data
    with pytest.raises(ValueError, match=message):
        make().fit(X, y, qid=bad_qid(qid))


# -- y -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad_y, message",
    [
        (lambda y: np.where(np.arange(len(y)) == 3, np.nan, y), "y contains NaN"),
        (lambda y: np.where(np.arange(len(y)) == 3, np.inf, y), "y contains infinity"),
        (lambda y: -y - 1, "y contains negative"),
        (lambda y: y * 1000 + 1100, "y has a label of .* overflow float64"),
        (lambda y: y[:-1], "inconsistent numbers of samples|y has 79"),
    ],
    ids=["nan", "inf", "negative", "gain-overflow", "misaligned"],
)
def test_bad_y_raises_naming_y(make, data, bad_y, message):
    X, y, qid = data
    with pytest.raises(ValueError, match=message):
        make().fit(X, bad_y(y), qid=qid)


def test_fractional_labels_are_graded_relevance(data):
    # Gains are 2**y - 1 for any real y >= 0, as LambdaMART's derivation
    # allows; LightGBM would refuse them. Scaling by 2 must change the model.
    X, y, qid = data
    a = LambdaMARTRanker(n_estimators=5, random_state=0).fit(X, y / 2, qid=qid).predict(X)
    b = LambdaMARTRanker(n_estimators=5, random_state=0).fit(X, y, qid=qid).predict(X)
    assert np.all(np.isfinite(a)) and not np.array_equal(a, b)


# -- X -------------------------------------------------------------------------


def test_infinite_features_are_the_largest_and_smallest_values(make, data):
    X, y, qid = data
    # Replacing the maximum of each column by +inf and the minimum by -inf
    # keeps every split decision, so the model and its predictions on the
    # original data are unchanged.
    X_inf = X.copy()
    X_inf[X.argmax(axis=0), np.arange(4)] = np.inf
    X_inf[X.argmin(axis=0), np.arange(4)] = -np.inf
    model = make().fit(X_inf, y, qid=qid)
    _same(model.predict(X_inf), make().fit(X, y, qid=qid).predict(X))


def test_all_nan_and_constant_columns_are_never_split_on(make, data):
    X, y, qid = data
    X = np.column_stack([X, np.full(80, np.nan), np.full(80, 3.0)])
    model = make().fit(X, y, qid=qid)
    assert np.all(np.isfinite(model.predict(X)))
    assert model.feature_importances_[4] == 0 and model.feature_importances_[5] == 0
    assert model.feature_importances_[:4].sum() > 0


def test_more_distinct_values_than_bins(make):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((2000, 2))  # 2000 distinct values per feature
    y = (X[:, 0] > 0).astype(float) + (X[:, 0] > 1)
    qid = np.repeat(np.arange(40), 50)
    model = make(max_bins=16).fit(X, y, qid=qid)
    assert model._bin_mapper.n_bins_non_missing_.max() == 16
    assert ndcg_score(y, model.predict(X), qid=qid) > ndcg_score(y, -X[:, 0], qid=qid)


def test_sparse_with_explicit_zeros_equals_dense(make, data):
    X, y, qid = data
    X = X.copy()
    X[np.abs(X) < 0.5] = 0.0
    X_sparse = sparse.csr_matrix(X)
    X_sparse.data[::3] = 0.0  # explicit zeros in the structure
    dense = X_sparse.toarray()
    model = make().fit(X_sparse, y, qid=qid)
    _same(model.predict(X_sparse), make().fit(dense, y, qid=qid).predict(dense))


def test_float32_and_float64_give_the_same_model(make, data):
    X, y, qid = data
    X32 = X.astype(np.float32)
    _same(make().fit(X32, y, qid=qid).predict(X32),
          make().fit(X32.astype(np.float64), y, qid=qid).predict(X32.astype(np.float64)))


def test_non_numeric_dataframe_columns_raise_naming_them(make, data):
    X, y, qid = data
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["colour"] = pd.Series(np.where(y > 0, "red", "blue"), dtype="object")
    with pytest.raises(ValueError, match="X has non-numeric columns.*'colour'"):
        make().fit(frame, y, qid=qid)


def test_category_columns_are_categorical_features_unless_refused(make, data):
    X, y, qid = data
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["colour"] = pd.Series(np.where(y > 0, "red", "blue"), dtype="category")
    assert make().fit(frame, y, qid=qid).is_categorical_.tolist() == [False] * 4 + [True]
    with pytest.raises(ValueError, match="'colour' has a category dtype, but categorical_feat"):
        make(categorical_features=None).fit(frame, y, qid=qid)


def test_predict_checks_column_names_and_count(make, data):
    X, y, qid = data
    frame = pd.DataFrame(X, columns=list("abcd"))
    model = make().fit(frame, y, qid=qid)
    with pytest.raises(ValueError, match="same order"):
        model.predict(frame[list("dcba")])
    with pytest.raises(ValueError, match="missing"):
        model.predict(frame[list("abc")])
    # scikit-learn also warns that the array has no feature names; the
    # error about the count is what matters here.
    with pytest.raises(ValueError, match="4 features"), pytest.warns(
            UserWarning, match="does not have valid feature names"):
        model.predict(X[:, :3])


# -- sample_weight -------------------------------------------------------------


@pytest.mark.parametrize(
    "weight, message",
    [(-1.0, "sample_weight .*negative"), (np.nan, "sample_weight contains NaN")],
    ids=["negative", "nan"],
)
def test_bad_sample_weight_raises_naming_it(make, data, weight, message):
    X, y, qid = data
    w = np.where(qid == 1, weight, 1.0)
    with pytest.raises(ValueError, match=message):
        make().fit(X, y, qid=qid, sample_weight=w)


@pytest.mark.parametrize("name", ["lambdarank", "xendcg", "listnet", "rcr"])
def test_zero_weight_for_a_whole_query_removes_its_gradients(data, name):
    from sklearn_ltr._gbdt.common import G_H_DTYPE
    from sklearn_ltr._objectives import OBJECTIVES

    _, y, _ = data
    y = (y > 0).astype(float) if name == "rcr" else y
    offsets = np.arange(0, 81, 10)
    weight = np.where(np.arange(80) // 10 == 1, 0.0, 1.0)
    objective = OBJECTIVES[name](y, offsets, weight)
    objective.prepare_iteration(np.random.default_rng(0))
    grad, hess = np.empty(80, dtype=G_H_DTYPE), np.empty(80, dtype=G_H_DTYPE)
    objective.gradient_hessian(np.linspace(-1, 1, 80), grad, hess)
    assert np.all(grad[10:20] == 0) and np.all(hess[10:20] == 0)
    assert np.any(grad[:10] != 0)


# -- metrics -------------------------------------------------------------------


@pytest.fixture(params=METRICS, ids=lambda f: f.__name__)
def metric(request):
    return request.param


@pytest.mark.parametrize(
    "case, message",
    [
        ("empty", "y_true is empty"),
        ("qid-misaligned", "qid has 5 entries but there are 80 rows"),
        ("y-nan", "y_true contains NaN"),
        ("score-nan", "y_score contains NaN"),
        ("qid-nan", "qid contains NaN"),
        ("weight-negative", "sample_weight contains negative"),
    ],
)
def test_metric_bad_input_raises_naming_the_argument(metric, data, case, message):
    _, y, qid = data
    s = np.linspace(0, 1, 80)
    kwargs = dict(qid=qid)
    if case == "empty":
        y, s, kwargs["qid"] = np.empty(0), np.empty(0), np.empty(0)
    elif case == "qid-misaligned":
        kwargs["qid"] = qid[:5]
    elif case == "y-nan":
        y = np.where(qid == 1, np.nan, y)
    elif case == "score-nan":
        s = np.where(qid == 1, np.nan, s)
    elif case == "qid-nan":
        kwargs["qid"] = np.where(qid == 2, np.nan, qid.astype(float))
    elif case == "weight-negative":
        kwargs["sample_weight"] = -np.ones(80)
    with pytest.raises(ValueError, match=message):
        metric(y, s, **kwargs)


def test_negative_labels(metric, data):
    # Graded metrics need gains, so they refuse negative labels; binary ones
    # read "relevant" as label > 0, so -1 (a common "irrelevant" code in
    # svmlight files) is simply not relevant.
    _, y, qid = data
    s = np.linspace(0, 1, 80)
    negative = np.where(y == 0, -1.0, y)
    if metric in (ndcg_score, err_score):
        with pytest.raises(ValueError, match="y_true contains negative"):
            metric(negative, s, qid=qid)
    else:
        assert metric(negative, s, qid=qid) == metric(y, s, qid=qid)


def test_ndcg_label_gain_overflow_raises(data):
    _, y, qid = data
    with pytest.raises(ValueError, match="y_true contains a label of .* overflow float64"):
        ndcg_score(y * 2000, np.zeros(80), qid=qid)


def test_labels_whose_summed_gains_overflow_raise():
    # Each gain 2**1023 - 1 is finite, but four of them in one DCG are not:
    # the query came out NaN and was silently skipped.
    y = [1023.0] * 4 + [1.0, 0.0]
    s, qid = [4, 3, 2, 1, 0, 1], [1] * 4 + [2] * 2
    with pytest.raises(ValueError, match="label of 1023; over 6 rows.*above 1020"):
        ndcg_score(y, s, qid=qid)
    with pytest.raises(ValueError, match="overflow float64 for labels above 1020"):
        LambdaMARTRanker(n_estimators=2).fit(np.zeros((6, 1)), y, qid=qid)
    # At the limit, every query's NDCG is finite and the rankers fit.
    top = [1020.0] * 4 + [1.0, 0.0]
    assert np.isfinite(ndcg_score_per_query(top, s, qid=qid)[1]).all()
    # CalibratedRanker takes binary or [0, 1] labels only, so it has no gains to overflow.
    for cls in [cls for cls in RANKERS if cls is not CalibratedRanker]:
        model = cls(n_estimators=2, min_samples_leaf=1).fit(np.arange(6.0)[:, None], top, qid=qid)
        assert np.isfinite(model.predict(np.arange(6.0)[:, None])).all()


def test_metrics_accept_string_qid(metric, data):
    _, y, qid = data
    s = np.random.default_rng(3).standard_normal(80)
    strings = np.array([f"query-{q}" for q in qid])
    assert metric(y, s, qid=strings) == metric(y, s, qid=qid)


def test_one_query_of_50000_documents_stays_bounded(metric):
    # Memory and time are linear in the query size (no n x n arrays); the
    # cut-off keeps the work bounded. One large query, every metric.
    rng = np.random.default_rng(4)
    n = 50_000
    y = rng.integers(0, 5, n).astype(float)
    s = rng.standard_normal(n)
    value = metric(y, s, qid=np.zeros(n))
    assert 0.0 <= value <= 1.0


# -- text in X and y ----------------------------------------------------------------
# Text is refused, never converted: scikit-learn's validate_data reads "1.5"
# in an object or string array (X or y) as 1.5 without a word, which hides a
# column loaded as text. The errors name the argument, the column and the value.


def _with_text(X, row, column, value):
    out = X.astype(object)
    out[row, column] = value
    return out


@pytest.mark.parametrize(
    "value, advice",
    [("a", "Encode categories and text first"), ("1.5", "convert first, e.g. X.astype")],
    ids=["word", "numeric-text"],
)
def test_text_in_an_object_array_raises_naming_column_row_and_value(make, data, value, advice):
    X, y, qid = data
    bad = _with_text(X, 5, 2, value)
    message = f"X has the text '{value}' in column 2 \\(row 5\\); .*{advice}"
    with pytest.raises(ValueError, match=message):
        make().fit(bad, y, qid=qid)
    model = make().fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=message):
        model.predict(bad)


def test_text_in_a_validation_set_names_X_val(make, data):
    X, y, qid = data
    bad = _with_text(X, 1, 3, "n/a")
    with pytest.raises(ValueError, match="X_val has the text 'n/a' in column 3 \\(row 1\\)"):
        make(early_stopping=True).fit(X, y, qid=qid, X_val=bad, y_val=y, qid_val=qid)


def test_string_arrays_and_lists_with_text_raise(make, data):
    X, y, qid = data
    with pytest.raises(ValueError, match="X has the text '.*' in column 0 \\(row 0\\); .*convert"):
        make().fit(X.astype(str), y, qid=qid)
    rows = X.tolist()
    rows[4][1] = "x"
    # np.asarray would turn every cell of these rows into text; the error
    # still names the one cell that was text.
    with pytest.raises(ValueError, match="X has the text 'x' in column 1 \\(row 4\\)"):
        make().fit(rows, y, qid=qid)


def test_object_arrays_of_numbers_and_none_still_work(make, data):
    X, y, qid = data
    holes = X.copy()
    holes[3, 1] = np.nan
    objects = X.astype(object)
    objects[3, 1] = None
    _same(make().fit(objects, y, qid=qid).predict(objects),
          make().fit(holes, y, qid=qid).predict(holes))


@pytest.mark.parametrize(
    "column, expected",
    [
        (lambda y: pd.Series(["1.0"] * 79 + ["oops"], dtype=object),
         "'when' \\(object; 'oops' at index 79\\); .*Encode"),
        (lambda y: pd.Series(np.arange(80.0), dtype=object),
         "'when' \\(object; 0.0 at index 0\\); .*convert first, e.g. "
         "X\\['when'\\] = pd.to_numeric\\(X\\['when'\\]\\)"),
        (lambda y: pd.Series(y.astype(str)), "'when' \\(\\w+; '.*' at index 0\\); .*convert"),
    ],
    ids=["word", "numbers-as-objects", "numeric-text"],
)
def test_text_in_a_dataframe_column_names_column_value_and_index(make, data, column, expected):
    X, y, qid = data
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["when"] = column(y)
    with pytest.raises(ValueError, match="X has non-numeric columns " + expected):
        make().fit(frame, y, qid=qid)


@pytest.mark.parametrize(
    "labels, message",
    [
        (lambda y: y.astype(str), "y has the text '.*' at row 0; .*np.asarray\\(y, dtype=float\\)"),
        (lambda y: pd.Series(y).astype(str), "y has the text '.*' at row 0"),
        (lambda y: [str(v) for v in y], "y has the text '.*' at row 0"),
        (lambda y: np.where(np.arange(80) == 6, "good", y.astype(object)),
         "y has the text 'good' at row 6; .*map text grades"),
    ],
    ids=["numeric-text", "series", "list", "word"],
)
def test_text_labels_raise_naming_y(make, data, labels, message):
    X, y, qid = data
    with pytest.raises(ValueError, match=message):
        make().fit(X, labels(y), qid=qid)
    with pytest.raises(ValueError, match=message.replace("y has", "y_val has").replace(
            "(y,", "(y_val,")):
        make(early_stopping=True).fit(X, y, qid=qid, X_val=X, y_val=labels(y), qid_val=qid)


def test_object_labels_holding_numbers_still_work(make, data):
    X, y, qid = data
    _same(make().fit(X, y.astype(object), qid=qid).predict(X), make().fit(X, y, qid=qid).predict(X))


def test_float_arrays_skip_validate_data_with_its_result():
    """The shortcut for a float array of the fitted width (a ranker fitted
    without feature names) returns what validate_data returns; every other
    input takes the full checks, with their errors and warnings."""
    from sklearn.utils.validation import validate_data

    from sklearn_ltr.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=8, docs_per_query=6, n_features=4, random_state=0)
    ranker = LambdaMARTRanker(n_estimators=2, random_state=0).fit(X, y, qid=qid)
    full = dict(reset=False, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32],
                ensure_all_finite=False, ensure_min_samples=0)
    for rows in (np.ascontiguousarray(X), np.asfortranarray(X), X[::2], X.astype(np.float32),
                 np.where(X > 0, np.inf, np.nan)):
        checked = validate_data(ranker, rows, **full)
        assert ranker._validate_X(rows) is rows
        assert checked.dtype == rows.dtype and np.array_equal(checked, rows, equal_nan=True)
    # Other inputs are converted or refused as before.
    assert ranker._validate_X(X.astype(np.int64)).dtype == np.float64
    with pytest.raises(ValueError, match="X has 3 features, but LambdaMARTRanker is expecting 4"):
        ranker._validate_X(X[:, :3])
    with pytest.raises(ValueError, match="2-D|2-dimensional|one row"):
        ranker.predict(X[0])
    named = LambdaMARTRanker(n_estimators=2, random_state=0).fit(
        pd.DataFrame(X, columns=list("abcd")), y, qid=qid)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        named.predict(X)
