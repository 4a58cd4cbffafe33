"""Model files of rankers with categorical features (``format_version`` 3).

Oracles: the fitted ranker itself (a loaded model predicts bit-identically
and holds the same state), a predictor written here in plain Python from the
format 3 description of the :mod:`sklearn_ltr.persistence` docstring, and
model files under tests/data/: format 1 written by the first release of the
format, format 2 (a pipeline) by the last commit before format 3, format 3
by the commit that introduced it.
"""

import copy
import io
import json
import math
import os
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from sklearn.base import clone

from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, ListNetRanker, XENDCGRanker
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.persistence import FORMAT_VERSION, load_model, save_model
from test_persistence import (
    _assert_same_state,
    _damaged_file,
    _edit_json,
    _members,
    _npy,
    _write_members,
)

pd = pytest.importorskip("pandas", reason="pandas category columns are part of format 3")

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
SMALL = dict(n_estimators=8, max_leaf_nodes=8, min_samples_leaf=5, random_state=0)
CATEGORY_COLUMNS = ["brand", "size", "grade", "flag"]

# (ranker, input): "X" is a NumPy array whose last column holds category
# codes, "frame" a DataFrame with pandas category columns of strings,
# integers, floats and booleans.
MODELS = {
    "codes": (LambdaMARTRanker(max_bins=8, categorical_features=[6], **SMALL), "X"),
    "codes_mask": (XENDCGRanker(categorical_features=[False] * 6 + [True], **SMALL), "X"),
    "frame": (LambdaMARTRanker(**SMALL), "frame"),
    "frame_names": (CalibratedRanker(categorical_features=CATEGORY_COLUMNS, **SMALL), "frame"),
    "frame_listnet": (ListNetRanker(**SMALL), "frame"),
}


def _labels(ranker, y):
    return (y > 0).astype(np.float64) if isinstance(ranker, CalibratedRanker) else y


def _frame(X, codes):
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    c = np.nan_to_num(codes, nan=-1).astype(np.int64)
    frame["brand"] = pd.Categorical([f"b{v % 9}" if v >= 0 else None for v in c])
    frame["size"] = pd.Categorical(np.abs(c) * 7 % 11)
    frame["grade"] = pd.Categorical(np.choose(np.abs(c) % 3, [0.5, 1.5, 2.25]))
    frame["flag"] = pd.Categorical(c % 2 == 0)
    return frame


@pytest.fixture(scope="module")
def data():
    """Training data ``(X, y, qid, frame)`` and test rows ``(X, frame)``
    with unseen, negative and missing categories, the test frame's columns
    listing their categories in another order."""
    X, y, qid = make_ranking(n_queries=40, docs_per_query=12, n_features=6, missing_rate=0.1,
                             random_state=0)
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 15, size=y.shape[0]).astype(np.float64)
    codes[rng.random(y.shape[0]) < 0.08] = np.nan
    codes[rng.random(y.shape[0]) < 0.04] = -1
    # Labels that depend on the categories, so that the trees split on them.
    y = y + (codes % 4 == 1) + 2 * (codes % 5 == 3)
    frame = _frame(X, codes)
    test_codes = codes[:60].copy()
    test_codes[:4] = [99, -1, np.nan, 14]
    X_test = np.column_stack([X[:60], test_codes])
    frame_test = _frame(X[:60], test_codes)
    brand = frame_test["brand"].astype(object).to_numpy().copy()
    brand[:2] = ["zzz", None]
    frame_test["brand"] = pd.Categorical(brand, categories=["zzz", *reversed(
        frame["brand"].cat.categories)])
    frame_test["size"] = frame_test["size"].cat.add_categories([77])
    frame_test.loc[frame_test.index[2], "size"] = 77
    return (np.column_stack([X, codes]), y, qid, frame), (X_test, frame_test)


@pytest.fixture(scope="module")
def fitted(data):
    (X, y, qid, frame), _ = data
    return {name: clone(ranker).fit(X if kind == "X" else frame, _labels(ranker, y), qid=qid)
            for name, (ranker, kind) in MODELS.items()}


def _test_rows(name, data):
    return data[1][0] if MODELS[name][1] == "X" else data[1][1]


def _saved(ranker):
    buf = io.BytesIO()
    save_model(ranker, buf)
    return buf.getvalue()


def _load(raw):
    return load_model(io.BytesIO(raw))


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("name", MODELS)
def test_loaded_ranker_predicts_bit_identically_and_has_the_same_state(name, fitted, data):
    ranker = fitted[name]
    ensemble = ranker._tree_ensemble()
    n_categorical_splits = int((ensemble.nodes["is_categorical"] != 0).sum())
    assert n_categorical_splits > 0
    raw = _saved(ranker)
    loaded = _load(raw)
    rows = _test_rows(name, data)
    assert_array_equal(loaded.predict(rows), ranker.predict(rows))
    for got, expected in zip(loaded.staged_predict(rows), ranker.staged_predict(rows),
                             strict=True):
        assert_array_equal(got, expected)
    assert_array_equal(loaded.feature_importances_, ranker.feature_importances_)
    if isinstance(ranker, CalibratedRanker):
        assert_array_equal(loaded.predict_proba(rows), ranker.predict_proba(rows))
    _assert_same_state(ranker, loaded)
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        # Format 4 for a wide categorical column ("codes": 15 codes, max_bins=8).
        version = 4 if ranker._bin_mapper.has_wide_columns() else 3
        assert version == (4 if name == "codes" else 3)
        assert json.loads(zf.read("model.json"))["format_version"] == version <= FORMAT_VERSION


def test_pandas_categories_keep_their_values_and_dtypes(fitted):
    loaded = _load(_saved(fitted["frame"]))
    categories = loaded._pandas_categories
    assert sorted(categories) == [6, 7, 8, 9]
    assert categories[6].dtype == object and list(categories[6]) == [f"b{i}" for i in range(9)]
    assert categories[7].dtype == np.int64 and list(categories[7]) == list(range(11))
    assert categories[8].dtype == np.float64 and list(categories[8]) == [0.5, 1.5, 2.25]
    assert categories[9].dtype == bool and list(categories[9]) == [False, True]


def test_a_boolean_mask_array_is_saved_as_a_list(fitted, data):
    (X, y, qid, _), (X_test, _) = data
    mask = np.array([False] * 6 + [True])
    ranker = XENDCGRanker(categorical_features=mask, **SMALL).fit(X, y, qid=qid)
    loaded = _load(_saved(ranker))
    assert loaded.categorical_features == mask.tolist()
    assert_array_equal(loaded.predict(X_test), ranker.predict(X_test))
    with pytest.raises(ValueError, match="categorical_features=array"):
        save_model(copy.deepcopy(ranker).set_params(categorical_features=np.eye(2, dtype=bool)),
                   io.BytesIO())


@pytest.mark.parametrize("name", ["codes", "frame"])
def test_warm_start_after_load_continues_exactly(name, data):
    (X, y, qid, frame), _ = data
    rows = X if MODELS[name][1] == "X" else frame
    ranker = clone(MODELS[name][0]).set_params(warm_start=True)
    ranker.fit(rows, y, qid=qid)
    loaded = _load(_saved(ranker))
    ranker.set_params(n_estimators=14).fit(rows, y, qid=qid)
    loaded.set_params(n_estimators=14).fit(rows, y, qid=qid)
    assert_array_equal(loaded.predict(rows), ranker.predict(rows))
    _assert_same_state(ranker, loaded)


def test_only_categorical_rankers_need_format_3(fitted, data):
    (X, y, qid, _), _ = data
    numeric = LambdaMARTRanker(**SMALL).fit(X, y, qid=qid)  # codes read as numbers
    with zipfile.ZipFile(io.BytesIO(_saved(numeric))) as zf:
        document = json.loads(zf.read("model.json"))
        assert document["format_version"] == 1
        assert not any("categor" in n for n in zf.namelist())
        assert "pandas_categories" not in document["fitted"]
    loaded = _load(_saved(numeric))
    assert loaded.is_categorical_ is None and loaded._pandas_categories == {}


# --------------------------------------------------------------------------- the documented format


def _documented_predict(path, rows):
    """Scores computed from the raw file as the module docstring tells
    another language to: pandas category values become their position in
    the column's ``values``; a categorical split tests the bit of the
    value's index among its feature's categories, anything else (NaN, a
    value that is not a category) going to the missing side.

    ``rows`` are lists of raw values (category values for pandas columns)."""
    with zipfile.ZipFile(path) as zf:
        doc = json.loads(zf.read("model.json"))
        arr = {n[:-4]: np.lib.format.read_array(io.BytesIO(zf.read(n)), allow_pickle=False)
               for n in zf.namelist() if n.endswith(".npy")}
    pandas_values = {e["column"]: e["values"] for e in doc["fitted"]["pandas_categories"]}
    bounds = np.cumsum(np.concatenate([[0], arr["bin_n_thresholds"]]))
    # Format 4: the column each binned feature reads.
    columns = arr.get("bin_feature_columns", np.arange(len(bounds) - 1))
    categories = [arr["bin_thresholds"][bounds[f]:bounds[f + 1]].tolist()
                  for f in range(len(bounds) - 1)]
    scores = []
    for raw in rows:
        x = []
        for j, v in enumerate(raw):
            if j in pandas_values:
                known = [u == v and type(u) is type(v) for u in pandas_values[j]]
                x.append(float(known.index(True)) if any(known) else math.nan)
            else:
                x.append(float(v))
        total = 0.0
        for root in arr["tree_starts"]:
            k = root
            while arr["node_is_leaf"][k] == 0:
                f = arr["node_feature_idx"][k]
                v = x[columns[f]]
                missing = arr["node_missing_go_to_left"][k] == 1
                if arr["node_is_categorical"][k] == 1:
                    if math.isnan(v) or v not in categories[f]:
                        left = missing
                    else:
                        b = categories[f].index(v)
                        left = (int(arr["node_left_categories"][k, b >> 5]) >> (b & 31)) & 1 == 1
                elif math.isnan(v):
                    left = missing
                else:
                    left = v <= arr["node_num_threshold"][k]
                k = root + (arr["node_left"][k] if left else arr["node_right"][k])
            total += arr["node_value"][k]
        scores.append(doc["booster"]["baseline"] + total)
    return np.array(scores)


def _python_rows(rows):
    """Rows as lists of Python values (category values of pandas columns,
    with their own types: str, int, float, bool; None for missing)."""
    if not hasattr(rows, "columns"):
        return rows.tolist()
    columns = []
    for name in rows.columns:
        column = rows[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            values = column.astype(object).tolist()
            columns.append([None if isinstance(v, float) and math.isnan(v) else
                            v.item() if hasattr(v, "item") else v for v in values])
        else:
            columns.append(column.to_numpy(dtype=np.float64).tolist())
    return [list(row) for row in zip(*columns)]


@pytest.mark.parametrize("name", MODELS)
def test_documented_format_gives_the_same_scores(name, fitted, data, tmp_path):
    path = tmp_path / "m.npz"
    save_model(fitted[name], path)
    rows = _test_rows(name, data)
    assert_array_equal(_documented_predict(path, _python_rows(rows)), fitted[name].predict(rows))
    if name == "codes":  # a wide column: splits on both of its binned features
        features = fitted[name]._tree_ensemble().nodes["feature_idx"]
        assert {6, 7} <= set(features[fitted[name]._tree_ensemble().splits].tolist())


# --------------------------------------------------------------------------- files of earlier versions


def test_format_1_files_load_without_categorical_features():
    model = load_model(os.path.join(DATA_DIR, "persistence_v1", "lambdamart.npz"))
    assert model.is_categorical_ is None and model._pandas_categories == {}
    assert not model._bin_mapper.is_categorical_.any()
    assert not model._tree_ensemble().nodes["is_categorical"].any()
    assert model.categorical_features == "from_dtype"  # the default; not in the file


def test_the_format_2_pipeline_file_still_loads_and_matches():
    pytest.importorskip("skops", reason="pipeline files need skops")
    folder = os.path.join(DATA_DIR, "persistence_v2")
    expected = np.load(os.path.join(folder, "expected.npz"))
    pipeline = load_model(os.path.join(folder, "pipeline.npz"))
    assert [name for name, _ in pipeline.steps] == [
        "simpleimputer", "standardscaler", "lambdamartranker"]
    assert_array_equal(pipeline.predict(expected["X"]), expected["pipeline_predict"])


def _version_3_frame(expected):
    frame = pd.DataFrame(expected["frame_X"], columns=[f"f{i}" for i in range(6)])
    brand = np.where(expected["frame_brand_missing"], None, expected["frame_brand"])
    frame["brand"] = pd.Categorical(brand)
    frame["size"] = pd.Categorical(expected["frame_size"])
    return frame


def test_format_3_files_still_load_and_match():
    folder = os.path.join(DATA_DIR, "persistence_v3")
    expected = np.load(os.path.join(folder, "expected.npz"))
    codes = load_model(os.path.join(folder, "lambdamart_codes.npz"))
    assert_array_equal(codes.predict(expected["X"]), expected["lambdamart_codes_predict"])
    frame = _version_3_frame(expected)
    frame_model = load_model(os.path.join(folder, "xendcg_frame.npz"))
    assert_array_equal(frame_model.predict(frame), expected["xendcg_frame_predict"])
    # The stored expectations are themselves what the documented format says.
    assert_array_equal(
        _documented_predict(os.path.join(folder, "xendcg_frame.npz"), _python_rows(frame)),
        expected["xendcg_frame_predict"])


# --------------------------------------------------------------------------- pipelines


def test_a_pipeline_ending_in_a_categorical_ranker_is_format_3(data):
    pytest.importorskip("skops", reason="pipeline files need skops")
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    (X, y, qid, _), (X_test, _) = data
    pipe = make_pipeline(SimpleImputer(strategy="most_frequent"),
                         LambdaMARTRanker(categorical_features=[6], **SMALL))
    pipe.fit(X, y, lambdamartranker__qid=qid)
    raw = _saved(pipe)
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        assert json.loads(zf.read("model.json"))["format_version"] == 3
    loaded = _load(raw)
    assert_array_equal(loaded.predict(X_test), pipe.predict(X_test))
    _assert_same_state(pipe[-1], loaded[-1])


# --------------------------------------------------------------------------- refusing to save or load


def test_categories_json_cannot_hold_are_refused_when_saving(data):
    (X, y, qid, frame), _ = data
    dates = pd.to_datetime(frame["f0"].fillna(0) * 1e9).dt.floor("D")
    mixed = ["high" if v > 0 else 3 for v in frame["f1"].fillna(0)]
    for values in (dates, mixed):
        odd = frame[["f0", "f1"]].assign(odd=pd.Categorical(values))
        ranker = LambdaMARTRanker(**SMALL).fit(odd, y, qid=qid)
        with pytest.raises(ValueError, match="Cannot save the categories of column 'odd'"):
            save_model(ranker, io.BytesIO())


def _read(members, name):
    return np.lib.format.read_array(io.BytesIO(members[name + ".npy"]))


def _categorical_split(members):
    return int(np.flatnonzero(_read(members, "node_is_categorical"))[0])


def _edit_array(name, edit):
    def apply(members):
        array = _read(members, name)
        edit(array, members)
        members[name + ".npy"] = _npy(array)
    return apply


def _set_pandas_categories(edit):
    def apply(members):
        _edit_json(members, lambda doc: edit(doc["fitted"]["pandas_categories"]))
    return apply


def _tamper_cases():
    def bit_above_categories(bits, m):
        k = _categorical_split(m)
        n = int(_read(m, "bin_n_thresholds")[_read(m, "node_feature_idx")[k]])
        bits[k, n >> 5] |= np.uint32(1) << np.uint32(n & 31)

    def categorical_leaf(flags, m):
        flags[np.flatnonzero(_read(m, "node_is_leaf"))[0]] = 1

    def numeric_split_marked_categorical(m):
        numeric = np.flatnonzero((_read(m, "node_is_leaf") == 0)
                                 & (_read(m, "node_is_categorical") == 0))[0]
        _edit_array("node_is_categorical", lambda a, _: a.__setitem__(numeric, 1))(m)
        _edit_array("node_num_threshold", lambda a, _: a.__setitem__(numeric, np.nan))(m)

    def categorical_split_made_numeric(m):
        k = _categorical_split(m)
        _edit_array("node_is_categorical", lambda a, _: a.__setitem__(k, 0))(m)
        _edit_array("node_left_categories", lambda a, _: a.__setitem__(k, 0))(m)
        _edit_array("node_num_threshold", lambda a, _: a.__setitem__(k, 0.5))(m)

    def bits_at_a_numeric_split(bits, m):
        numeric = np.flatnonzero((_read(m, "node_is_leaf") == 0)
                                 & (_read(m, "node_is_categorical") == 0))[0]
        bits[numeric, 0] = 1

    def fractional_category(thresholds, m):
        thresholds[-1] -= 0.5  # the last feature is the categorical one

    def flat_bitsets(m):
        m["node_left_categories.npy"] = _npy(_read(m, "node_left_categories").ravel())

    def drop_last_category(cats):
        cats[0]["values"].pop()

    return {
        "bit above the categories": (_edit_array("node_left_categories", bit_above_categories),
                                     "sends a category its feature does not have left"),
        "categorical leaf": (_edit_array("node_is_categorical", categorical_leaf),
                             "0 at leaves"),
        "numeric split marked categorical": (numeric_split_marked_categorical,
                                             "differs from bin_is_categorical"),
        "categorical split made numeric": (categorical_split_made_numeric,
                                           "differs from bin_is_categorical"),
        "categorical split with a threshold": (
            _edit_array("node_num_threshold", lambda a, m: a.__setitem__(_categorical_split(m),
                                                                         1.0)),
            "categorical split has a threshold"),
        "bits at a numeric split": (_edit_array("node_left_categories", bits_at_a_numeric_split),
                                    "not a categorical split"),
        "mask of 2": (_edit_array("bin_is_categorical", lambda a, _: a.__setitem__(0, 2)),
                      "bin_is_categorical must be 0 or 1"),
        "fractional category": (_edit_array("bin_thresholds", fractional_category),
                                "not integer codes"),
        "flat bitsets": (flat_bitsets, r"node_left_categories.npy has dtype <u4 and shape "
                                       r"\(\d+,\), expected an array of <u4 of shape \(n, 8\)"),
        "version 2": (lambda m: _edit_json(m, lambda d: d.__setitem__("format_version", 2)),
                      "expected .* in a file of format_version 2"),
        "no pandas categories": (
            lambda m: _edit_json(m, lambda d: d["fitted"].pop("pandas_categories")),
            "fitted has no 'pandas_categories' entry"),
        "repeated category": (_set_pandas_categories(lambda c: c[0]["values"].append("b0")),
                              "categories of column 6 repeat a value"),
        "unknown dtype": (_set_pandas_categories(lambda c: c[1].__setitem__("dtype", "<M8[ns]")),
                          "column 7 have dtype '<M8\\[ns\\]'"),
        "strings as integers": (
            _set_pandas_categories(lambda c: c[1].__setitem__("values", ["1", "2"])),
            "column 7 are not all int64"),
        "column out of range": (_set_pandas_categories(lambda c: c[0].__setitem__("column", 10)),
                                r"column 10, outside \[0, 10\)"),
        "column twice": (_set_pandas_categories(lambda c: c.append(dict(c[0]))),
                         "lists column 6 twice"),
        "code beyond the categories": (_set_pandas_categories(drop_last_category),
                                       "feature 6 has category code 8, but its column has 8"),
    }


@pytest.mark.parametrize("case", _tamper_cases())
def test_inconsistent_categorical_files_raise_value_error(case, fitted, data, tmp_path):
    name = "frame" if case in ("repeated category", "unknown dtype", "strings as integers",
                               "column out of range", "column twice",
                               "code beyond the categories", "no pandas categories") else "codes"
    path = tmp_path / "m.npz"
    save_model(fitted[name], path)
    members = _members(path)
    edit, problem = _tamper_cases()[case]
    edit(members)
    bad = tmp_path / "tampered.npz"
    _write_members(bad, members)
    with pytest.raises(ValueError, match=rf"^Cannot load model file {bad}: .*{problem}"):
        load_model(bad)


def test_a_numeric_file_relabelled_format_3_is_refused(tmp_path, data):
    (X, y, qid, _), _ = data
    path = tmp_path / "m.npz"
    save_model(LambdaMARTRanker(**SMALL).fit(X, y, qid=qid), path)
    members = _members(path)
    _edit_json(members, lambda d: d.__setitem__("format_version", 3))
    _write_members(path, members)
    with pytest.raises(ValueError, match="bin_is_categorical.* in a file of format_version 3"):
        load_model(path)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                      min_size=1, max_size=3),
       cut=st.one_of(st.none(), st.floats(0, 1)))
def test_fuzz_damaged_categorical_files_raise_value_error_or_load_identically(fitted, data,
                                                                             edits, cut):
    ranker = fitted["frame"]
    damaged = _damaged_file(ranker, edits, cut, "damaged.npz")
    try:
        loaded = load_model(damaged)
    except ValueError as exc:
        assert "damaged.npz" in str(exc)
        return
    rows = data[1][1]
    assert_array_equal(loaded.predict(rows), ranker.predict(rows))
