"""Tests for sklearn_ltr.persistence: pickle-free model files.

Oracles: the fitted ranker itself (a loaded model must predict bit-identically
and hold the same state), a predictor written here in plain Python from the
format described in the module docstring (what another language would do),
and model files written by earlier versions under tests/data/.
"""

import io
import json
import os
import pickle
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import conftest
from sklearn_ltr import (
    CalibratedRanker,
    LambdaMARTRanker,
    ListNetRanker,
    XENDCGRanker,
    YetiRankRanker,
)
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.metrics import ndcg_scorer
from sklearn_ltr.persistence import FORMAT_VERSION, load_model, save_model

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
SMALL = dict(n_estimators=6, max_leaf_nodes=6, min_samples_leaf=5, random_state=0)

RANKERS = {
    "lambdamart": LambdaMARTRanker(**SMALL),
    "lambdamart_sampled": LambdaMARTRanker(subsample=0.7, max_features=0.6, **SMALL),
    "lambdamart_label_gain": LambdaMARTRanker(label_gain=[0, 1, 1.5, 4, 9], **SMALL),
    "lambdamart_early_stopping": LambdaMARTRanker(
        **{**SMALL, "n_estimators": 30}, early_stopping=True, n_iter_no_change=2
    ),
    "lambdamart_map_split": LambdaMARTRanker(
        **{**SMALL, "n_estimators": 30}, early_stopping=True, n_iter_no_change=2,
        scoring="map@5", importance_type="split"
    ),
    "lambdamart_schedule": LambdaMARTRanker(
        lambda_schedule="exponential_noncumulative", schedule_eta=3.0,
        leaf_estimation="gradient", **SMALL
    ),
    "lambdamart_ranknet_mean": LambdaMARTRanker(
        target_metric=None, pair_method="mean", pairs_per_document=2, **SMALL
    ),
    "lambdamart_map_all": LambdaMARTRanker(target_metric="map", pair_method="all", **SMALL),
    "xendcg": XENDCGRanker(**SMALL),
    "listnet": ListNetRanker(label_distribution="exponential", **SMALL),
    "yetirank": YetiRankRanker(permutations=3, decay=0.7, **SMALL),
    "listnet_neumann": ListNetRanker(hessian_terms=2, **SMALL),
    "calibrated_rcr": CalibratedRanker(**SMALL),
    "calibrated_platt": CalibratedRanker(objective="softmax", calibration="platt", **SMALL),
}


def test_the_cases_cover_every_ranker():
    # The cases are configured instances, so they cannot be conftest.RANKERS
    # itself; a ranker added to the registry must get a case here.
    assert {type(r) for r in RANKERS.values()} == set(conftest.RANKERS)


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(
        n_queries=30, docs_per_query=12, n_features=6, missing_rate=0.1, random_state=0
    )
    return X, y, qid


def _labels(ranker, y):
    binary = isinstance(ranker, CalibratedRanker) or getattr(ranker, "target_metric", None) == "map"
    return (y > 0).astype(np.float64) if binary else y


@pytest.fixture(scope="module")
def fitted(data):
    X, y, qid = data
    return {
        name: clone(r).fit(X, _labels(r, y), qid=qid) for name, r in RANKERS.items()
    }


def _round_trip(ranker, tmp_path, name="model.npz"):
    path = tmp_path / name
    save_model(ranker, path)
    return load_model(path)


def _assert_same_value(a, b, key):
    """Equal values of the same type; dicts, tuples and lists (of arrays or
    None, such as the pandas categories of each column or the categories of
    each feature) item by item."""
    assert type(a) is type(b), key
    if isinstance(a, dict):
        assert a.keys() == b.keys(), key
        for k in a:
            _assert_same_value(a[k], b[k], f"{key}[{k!r}]")
    elif isinstance(a, (tuple, list)) and any(isinstance(v, np.ndarray) for v in a):
        assert len(a) == len(b), key
        for k, (x, z) in enumerate(zip(a, b)):
            _assert_same_value(x, z, f"{key}[{k}]")
    else:
        assert_array_equal(a, b, err_msg=key)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype, key


def _assert_same_state(a, b):
    """Same class, parameters and fitted state, down to the trees and bins."""
    assert type(a) is type(b)
    assert a.get_params() == b.get_params()
    state_a, state_b = dict(vars(a)), dict(vars(b))
    assert state_a.keys() == state_b.keys()
    booster_a, booster_b = state_a.pop("_booster"), state_b.pop("_booster")
    mapper_a, mapper_b = state_a.pop("_bin_mapper"), state_b.pop("_bin_mapper")
    for key in state_a:
        _assert_same_value(state_a[key], state_b[key], key)
    # Caches and the last fit's timings, not model state.
    skip = ("_flat", "_prediction_view", "phase_seconds")
    ba = {k: v for k, v in vars(booster_a).items() if k not in skip}
    bb = {k: v for k, v in vars(booster_b).items() if k not in skip}
    assert ba.keys() == bb.keys()
    for key in ba:
        if key == "trees":
            assert len(ba[key]) == len(bb[key])
            for ta, tb in zip(ba[key], bb[key]):
                assert ta.dtype == tb.dtype
                assert ta.tobytes() == tb.tobytes()  # bit-identical, NaN included
        else:
            _assert_same_value(ba[key], bb[key], key)
    # What the fit's sample held (for its warning), not model state.
    ma = {k: v for k, v in vars(mapper_a).items() if k != "pooled_categories_"}
    mb = {k: v for k, v in vars(mapper_b).items() if k != "pooled_categories_"}
    assert ma.keys() == mb.keys()
    for key in ma:
        if key == "bin_thresholds_":
            assert len(ma[key]) == len(mb[key])
            for x, z in zip(ma[key], mb[key]):
                assert_array_equal(x, z)
        else:
            _assert_same_value(ma[key], mb[key], key)
            assert np.asarray(ma[key]).dtype == np.asarray(mb[key]).dtype, key


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("name", RANKERS)
def test_loaded_ranker_predicts_bit_identically(name, fitted, data, tmp_path):
    X, y, qid = data
    ranker = fitted[name]
    loaded = _round_trip(ranker, tmp_path)
    assert_array_equal(loaded.predict(X), ranker.predict(X))
    assert_array_equal(loaded.predict(sp.csr_matrix(np.nan_to_num(X))),
                       ranker.predict(sp.csr_matrix(np.nan_to_num(X))))
    for s_loaded, s_ranker in zip(loaded.staged_predict(X), ranker.staged_predict(X),
                                  strict=True):
        assert_array_equal(s_loaded, s_ranker)
    assert_array_equal(loaded.rank(X, qid=qid), ranker.rank(X, qid=qid))
    labels = _labels(ranker, y)
    assert loaded.score(X, labels, qid=qid) == ranker.score(X, labels, qid=qid)
    assert_array_equal(loaded.feature_importances_, ranker.feature_importances_)
    if isinstance(ranker, CalibratedRanker):
        assert_array_equal(loaded.predict_proba(X), ranker.predict_proba(X))


@pytest.mark.parametrize("name", RANKERS)
def test_loaded_ranker_has_the_same_state(name, fitted, tmp_path):
    # Also catches a fit-time attribute added to the rankers but not saved.
    _assert_same_state(fitted[name], _round_trip(fitted[name], tmp_path))


def test_platt_parameters_are_restored(fitted, tmp_path):
    ranker = fitted["calibrated_platt"]
    loaded = _round_trip(ranker, tmp_path)
    assert loaded.platt_coef_ == ranker.platt_coef_
    assert loaded.platt_intercept_ == ranker.platt_intercept_
    assert not hasattr(_round_trip(fitted["calibrated_rcr"], tmp_path), "platt_coef_")


def test_feature_names_are_restored_and_checked(data, tmp_path):
    pd = pytest.importorskip("pandas", reason="feature names come from DataFrames")
    X, y, qid = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    ranker = LambdaMARTRanker(**SMALL).fit(frame, y, qid=qid)
    loaded = _round_trip(ranker, tmp_path)
    assert_array_equal(loaded.feature_names_in_, ranker.feature_names_in_)
    assert loaded.feature_names_in_.dtype == object
    assert_array_equal(loaded.predict(frame), ranker.predict(frame))
    with pytest.raises(ValueError, match="feature names"):
        loaded.predict(frame.rename(columns={"f0": "other"}))


@pytest.mark.parametrize(
    "name", ["lambdamart_sampled", "lambdamart_schedule", "lambdamart_ranknet_mean", "xendcg",
             "calibrated_platt"]
)
def test_warm_start_after_load_continues_exactly(name, data, tmp_path):
    X, y, qid = data
    ranker = clone(RANKERS[name]).set_params(n_estimators=4, warm_start=True)
    ranker.fit(X, _labels(ranker, y), qid=qid)
    loaded = _round_trip(ranker, tmp_path)
    for model in (ranker, loaded):
        model.set_params(n_estimators=8).fit(X, _labels(model, y), qid=qid)
    assert ranker.n_iter_ == 8
    _assert_same_state(ranker, loaded)
    assert_array_equal(loaded.predict(X), ranker.predict(X))


def test_file_is_plain_zip_of_json_and_npy_without_pickle(fitted, tmp_path):
    path = tmp_path / "m.npz"
    save_model(fitted["calibrated_platt"], path)
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        document = json.loads(zf.read("model.json").decode("utf-8"))
    assert all(n == "model.json" or n.endswith(".npy") for n in names)
    assert document["format"] == "sklearn-ltr-model"
    # A single ranker is still written as format 1, which every release reads.
    assert document["format_version"] == 1 < FORMAT_VERSION
    assert document["estimator"] == "CalibratedRanker"
    npz = np.load(path, allow_pickle=False)  # numpy reads it as an .npz
    for key, spec in document["arrays"].items():
        array = npz[key]
        assert array.dtype.str == spec["dtype"] and list(array.shape) == spec["shape"]
        assert not array.dtype.hasobject


def test_same_model_gives_the_same_bytes(fitted, tmp_path):
    save_model(fitted["xendcg"], tmp_path / "a.npz")
    save_model(fitted["xendcg"], tmp_path / "b.npz")
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


def test_file_objects_work_and_no_partial_file_is_left(fitted, tmp_path):
    buf = io.BytesIO()
    save_model(fitted["listnet"], buf)
    buf.seek(0)
    assert isinstance(load_model(buf), ListNetRanker)
    save_model(fitted["listnet"], str(tmp_path / "m.npz"))
    assert os.listdir(tmp_path) == ["m.npz"]


# --------------------------------------------------------------------------- other languages


def _documented_predict(path, X):
    """Scores computed from the raw file, as the module docstring tells another
    language to: JSON + .npy arrays, tree traversal, sum in tree order."""
    with zipfile.ZipFile(path) as zf:
        doc = json.loads(zf.read("model.json"))
        arr = {n[:-4]: np.lib.format.read_array(io.BytesIO(zf.read(n)), allow_pickle=False)
               for n in zf.namelist() if n.endswith(".npy")}
    baseline = doc["booster"]["baseline"]
    scores = []
    for x in X:
        acc = 0.0
        for root in arr["tree_starts"]:
            k = root
            while arr["node_is_leaf"][k] == 0:
                v = x[arr["node_feature_idx"][k]]
                if np.isnan(v):
                    left = arr["node_missing_go_to_left"][k] == 1
                else:
                    left = v <= arr["node_num_threshold"][k]
                k = root + (arr["node_left"][k] if left else arr["node_right"][k])
            acc += arr["node_value"][k]
        scores.append(baseline + acc)
    return np.array(scores), doc


@pytest.mark.parametrize("name", ["lambdamart", "calibrated_platt"])
def test_documented_format_gives_the_same_scores(name, fitted, data, tmp_path):
    X = data[0][:40]
    path = tmp_path / "m.npz"
    save_model(fitted[name], path)
    scores, doc = _documented_predict(path, X)
    assert_array_equal(scores, fitted[name].predict(X))
    if "platt_coef_" in doc["fitted"]:
        z = doc["fitted"]["platt_coef_"] * scores + doc["fitted"]["platt_intercept_"]
        np.testing.assert_allclose(fitted[name].predict_proba(X)[:, 1], 1 / (1 + np.exp(-z)),
                                   rtol=1e-14)


# --------------------------------------------------------------------------- files of earlier versions


@pytest.mark.parametrize("name", ["lambdamart", "xendcg", "listnet", "calibrated_platt"])
def test_model_files_of_format_version_1_still_load_and_match(name):
    folder = os.path.join(DATA_DIR, "persistence_v1")
    path = os.path.join(folder, f"{name}.npz")
    expected = np.load(os.path.join(folder, "expected.npz"))
    X = expected["X"]
    model = load_model(path)
    assert_array_equal(model.predict(X), expected[f"{name}_predict"])
    assert_array_equal(model.feature_importances_, expected[f"{name}_feature_importances"])
    if f"{name}_predict_proba" in expected:
        assert_array_equal(model.predict_proba(X), expected[f"{name}_predict_proba"])
    # The stored expectations are themselves what the documented format says.
    assert_array_equal(_documented_predict(path, X)[0], expected[f"{name}_predict"])


@pytest.mark.parametrize("name", ["yetirank", "lambdamart_unbiased"])
def test_model_files_written_before_the_rankers_moved_load_and_match(name):
    # Written by c59b99e, when the classes lived in sklearn_ltr._ranker and
    # sklearn_ltr._yetirank (see tests/data/make_persistence_fixtures.py).
    folder = os.path.join(DATA_DIR, "persistence_layout")
    path = os.path.join(folder, f"{name}.npz")
    expected = np.load(os.path.join(folder, "expected.npz"))
    X = expected["X"]
    model = load_model(path)
    assert_array_equal(model.predict(X), expected[f"{name}_predict"])
    assert_array_equal(model.feature_importances_, expected[f"{name}_feature_importances"])
    assert_array_equal(_documented_predict(path, X)[0], expected[f"{name}_predict"])
    if name == "lambdamart_unbiased":
        assert_array_equal(model.position_bias_, expected["lambdamart_unbiased_position_bias"])


# --------------------------------------------------------------------------- refusing to save


def test_save_refuses_unfitted_foreign_and_non_json(fitted, data, tmp_path):
    with pytest.raises(NotFittedError):
        save_model(LambdaMARTRanker(), tmp_path / "m.npz")

    class MyRanker(LambdaMARTRanker):
        pass

    X, y, qid = data
    with pytest.raises(ValueError, match="got MyRanker"):
        save_model(MyRanker(**SMALL).fit(X, y, qid=qid), tmp_path / "m.npz")
    ranker = clone(fitted["lambdamart"]).set_params(random_state=np.random.RandomState(0))
    ranker.fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="random_state=RandomState"):
        save_model(ranker, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


def test_scoring_and_importance_type_round_trip_and_scorers_are_refused(fitted, data, tmp_path):
    ranker = fitted["lambdamart_map_split"]
    loaded = _round_trip(ranker, tmp_path)
    assert (loaded.scoring, loaded.importance_type) == ("map@5", "split")
    nodes = ranker._tree_ensemble().nodes
    counts = np.bincount(nodes["feature_idx"][nodes["is_leaf"] == 0],
                         minlength=ranker.n_features_in_)
    assert_array_equal(loaded.feature_importances_, counts / counts.sum())
    X, y, qid = data
    scored = clone(ranker).set_params(scoring=ndcg_scorer(5)).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"Cannot save parameter scoring=make_ranking_scorer"
                                         r"\(ndcg_score, k=5\).*set_params\(scoring='ndcg@5'\)"):
        save_model(scored, tmp_path / "scorer.npz")
    assert not (tmp_path / "scorer.npz").exists()
    # The name the message suggests is the same metric: the same fit, and a file.
    named = clone(ranker).set_params(scoring="ndcg@5").fit(X, y, qid=qid)
    assert_array_equal(named.validation_score_, scored.validation_score_)
    save_model(named, tmp_path / "named.npz")


# --------------------------------------------------------------------------- refusing to load


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _write_members(path, members):
    with zipfile.ZipFile(path, "w") as zf:
        for n, b in members.items():
            zf.writestr(n, b)


def _npy(array):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, allow_pickle=True)
    return buf.getvalue()


def _edit_json(members, edit):
    doc = json.loads(members["model.json"])
    edit(doc)
    members["model.json"] = json.dumps(doc).encode()


def _tamper_cases():
    def set_in(*keys_value):
        *keys, value = keys_value

        def edit(doc):
            d = doc
            for k in keys[:-1]:
                d = d[k]
            d[keys[-1]] = value
        return edit

    def left_backwards(m):
        left = np.lib.format.read_array(io.BytesIO(m["node_left.npy"]))
        leaf = np.lib.format.read_array(io.BytesIO(m["node_is_leaf.npy"]))
        left[np.flatnonzero(leaf == 0)[0]] = 0  # the root points to itself: endless loop
        m["node_left.npy"] = _npy(left)

    def feature_out_of_range(m):
        feat = np.lib.format.read_array(io.BytesIO(m["node_feature_idx.npy"]))
        feat[0] = 6
        m["node_feature_idx.npy"] = _npy(feat)

    def pickled_array(m):
        m["node_value.npy"] = _npy(np.array([object()] * 3, dtype=object))

    def float32_values(m):
        value = np.lib.format.read_array(io.BytesIO(m["node_value.npy"]))
        m["node_value.npy"] = _npy(value.astype(np.float32))

    def drop_member(m):
        del m["node_gain.npy"]

    def bad_json(m):
        m["model.json"] = b"{not json"

    return {
        "newer version": (lambda m: _edit_json(m, set_in("format_version", FORMAT_VERSION + 1)),
                          f"format_version {FORMAT_VERSION + 1}.*Upgrade"),
        "other format": (lambda m: _edit_json(m, set_in("format", "something-else")),
                         "not a sklearn-ltr model"),
        "unknown class": (lambda m: _edit_json(m, set_in("estimator", "Pipeline")),
                          "'Pipeline' is not one of the loadable classes"),
        "unknown parameter": (lambda m: _edit_json(m, set_in("params", "colour", "red")),
                              "parameters do not fit"),
        "invalid parameter": (lambda m: _edit_json(m, set_in("params", "n_estimators", -1)),
                              "parameters do not fit.*n_estimators"),
        "tree count": (lambda m: _edit_json(m, set_in("fitted", "n_iter_", 99)),
                       "n_iter_ differs"),
        "feature names": (lambda m: _edit_json(m, set_in("fitted", "feature_names_in_", ["a"])),
                          "feature_names_in_"),
        "child backwards": (left_backwards, "node_left.npy points outside its tree or backwards"),
        "feature index": (feature_out_of_range, r"feature outside \[0, 6\)"),
        "pickled array": (pickled_array, "declared as|not a plain .npy array"),
        "dtype": (float32_values, "node_value.npy has dtype <f4"),
        "missing member": (drop_member, "node_gain.npy is missing"),
        "bad json": (bad_json, "not valid UTF-8 JSON"),
    }


@pytest.mark.parametrize("case", _tamper_cases())
def test_inconsistent_files_raise_value_error_naming_path_and_problem(case, fitted, tmp_path):
    path = tmp_path / "m.npz"
    save_model(fitted["lambdamart"], path)
    members = _members(path)
    edit, problem = _tamper_cases()[case]
    edit(members)
    bad = tmp_path / "tampered.npz"
    _write_members(bad, members)
    with pytest.raises(ValueError, match=rf"^Cannot load model file {bad}: .*{problem}"):
        load_model(bad)


def test_truncated_corrupted_and_foreign_files_raise_value_error(fitted, tmp_path):
    path = tmp_path / "m.npz"
    save_model(fitted["lambdamart"], path)
    raw = path.read_bytes()
    cases = {
        "truncated.npz": raw[: len(raw) // 2],
        "empty.npz": b"",
        "text.npz": b"1 qid:1 1:2\n",
        "pickle.npz": pickle.dumps(fitted["lambdamart"]),
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match=f"Cannot load model file .*{name}: .*zip"):
            load_model(tmp_path / name)
    # A flipped byte inside a compressed member fails its CRC check.
    start = raw.index(b"node_value.npy") + 40
    corrupted = bytearray(raw)
    corrupted[start] ^= 0xFF
    (tmp_path / "flipped.npz").write_bytes(bytes(corrupted))
    with pytest.raises(ValueError, match="flipped.npz"):
        load_model(tmp_path / "flipped.npz")
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "absent.npz")


def _damaged_file(model, edits, cut, name):
    """``model`` saved to memory, then each ``(where, byte)`` edit written at
    that fraction of the file, then cut to the fraction ``cut`` (None: not
    cut); named ``name`` for the error messages."""
    buf = io.BytesIO()
    save_model(model, buf)
    raw = bytearray(buf.getvalue())
    for where, byte in edits:
        raw[int(where * len(raw))] = byte
    if cut is not None:
        raw = raw[: int(cut * len(raw))]
    damaged = io.BytesIO(bytes(raw))
    damaged.name = name
    return damaged


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                      min_size=1, max_size=3),
       cut=st.one_of(st.none(), st.floats(0, 1)))
def test_fuzz_damaged_files_raise_value_error_or_load_identically(fitted, data, edits, cut):
    ranker = fitted["lambdamart"]
    damaged = _damaged_file(ranker, edits, cut, "damaged.npz")
    try:
        loaded = load_model(damaged)
    except ValueError as exc:
        assert "damaged.npz" in str(exc)
        return
    # Only bytes nothing depends on were hit (zip timestamps, comments, ...).
    assert_array_equal(loaded.predict(data[0]), ranker.predict(data[0]))


# =========================================================================== pipelines
#
# Oracles: the fitted pipeline itself (same steps, parameters and fitted
# state; bit-identical predictions), skops's own reading of the file, and
# the refusals the module docstring and doc/user_guide/saving.rst promise.

import re  # noqa: E402
import sys  # noqa: E402

import joblib  # noqa: E402
import sklearn  # noqa: E402
from sklearn.base import BaseEstimator, TransformerMixin  # noqa: E402
from sklearn.datasets import dump_svmlight_file  # noqa: E402
from sklearn.feature_selection import SelectKBest, f_regression  # noqa: E402
from sklearn.impute import SimpleImputer  # noqa: E402
from sklearn.model_selection import GridSearchCV, GroupKFold  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer, StandardScaler  # noqa: E402

from sklearn_ltr._rankers import registry as _registry  # noqa: E402
from sklearn_ltr.persistence import SKOPS_TRUSTED_TYPES  # noqa: E402

try:
    import skops.io as skops_io
    from skops.io.exceptions import UntrustedTypesFoundException
except ImportError:  # single rankers need no skops; their tests still run
    skops_io = None
needs_skops = pytest.mark.skipif(skops_io is None, reason="pipeline files need skops")

STEPS_MEMBER = "pipeline_steps.skops"
PAGE = os.path.join(os.path.dirname(__file__), os.pardir, "doc", "user_guide", "saving.rst")


class _Spy(TransformerMixin, BaseEstimator):
    """A transformer of another package; counts how often one is unpickled/built."""

    built = 0

    def fit(self, X, y=None):
        self.fitted_ = True
        return self

    def transform(self, X):
        return X

    def __setstate__(self, state):
        type(self).built += 1
        super().__setstate__(state)


def _double(X):
    return 2 * X


def _frame_pipeline(X, y, qid):
    pytest.importorskip("pandas")
    from sklearn_ltr.compose import exclude_qid
    from sklearn_ltr.datasets import to_frame

    frame = to_frame(X, qid)
    pipe = make_pipeline(exclude_qid(SimpleImputer()), exclude_qid(StandardScaler()),
                         LambdaMARTRanker(**SMALL))
    return pipe.fit(frame, y), frame


def _fit_pipeline(name, data):
    """(fitted pipeline, its input X) of each kind of pipeline save_model takes."""
    X, y, qid = data
    if name == "frame_exclude_qid":
        return _frame_pipeline(X, y, qid)
    pipe = {
        "scaler": make_pipeline(StandardScaler(), LambdaMARTRanker(**SMALL)),
        "imputer_scaler": make_pipeline(SimpleImputer(), StandardScaler(), XENDCGRanker(**SMALL)),
        "passthrough_select": Pipeline(
            [("impute", SimpleImputer()), ("skip", "passthrough"), ("none", None),
             ("select", SelectKBest(f_regression, k=4)), ("rank", ListNetRanker(**SMALL))],
            verbose=True,
        ),
        "ufuncs": make_pipeline(FunctionTransformer(np.abs), FunctionTransformer(np.log1p),
                                CalibratedRanker(**SMALL)),
        "ranker_only": Pipeline([("only", LambdaMARTRanker(**SMALL))]),
        "nested": make_pipeline(make_pipeline(SimpleImputer(), StandardScaler()),
                                LambdaMARTRanker(**SMALL)),
    }[name]
    last = pipe.steps[-1][0]
    return pipe.fit(X, _labels(pipe[-1], y), **{f"{last}__qid": qid}), X


PIPELINES = ["scaler", "imputer_scaler", "passthrough_select", "ufuncs", "ranker_only",
             "nested", "frame_exclude_qid"]


@pytest.fixture(scope="module")
def pipelines(data):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = _fit_pipeline(name, data)
        return cache[name]
    return get


def _as_array(Xt):
    return Xt.to_numpy() if hasattr(Xt, "to_numpy") else np.asarray(Xt)


@needs_skops
@pytest.mark.parametrize("name", PIPELINES)
def test_pipeline_round_trip_keeps_steps_and_predicts_bit_identically(name, pipelines,
                                                                      tmp_path, capsys):
    pipe, X = pipelines(name)
    loaded = _round_trip(pipe, tmp_path)
    assert type(loaded) is Pipeline
    assert [n for n, _ in loaded.steps] == [n for n, _ in pipe.steps]
    params = {k: v for k, v in pipe.get_params(deep=False).items() if k != "steps"}
    assert {k: v for k, v in loaded.get_params(deep=False).items() if k != "steps"} == params
    for (_, a), (_, b) in zip(pipe.steps[:-1], loaded.steps[:-1]):
        assert type(a) is type(b)
        assert re.sub(" at 0x[0-9a-f]+", "", repr(a)) == re.sub(" at 0x[0-9a-f]+", "", repr(b))
    if len(pipe) > 1:
        assert_array_equal(_as_array(loaded[:-1].transform(X)), _as_array(pipe[:-1].transform(X)))
    _assert_same_state(pipe[-1], loaded[-1])
    assert loaded.predict(X).tobytes() == pipe.predict(X).tobytes()
    if isinstance(pipe[-1], CalibratedRanker):
        assert_array_equal(loaded.predict_proba(X), pipe.predict_proba(X))


@needs_skops
def test_grid_search_best_estimator_round_trips(data, tmp_path):
    pytest.importorskip("pandas")
    from sklearn_ltr.compose import exclude_qid
    from sklearn_ltr.datasets import to_frame
    from sklearn_ltr.metrics import ndcg_scorer

    X, y, qid = data
    frame = to_frame(X, qid)
    pipe = make_pipeline(exclude_qid(SimpleImputer()), LambdaMARTRanker(**SMALL))
    search = GridSearchCV(pipe, {"lambdamartranker__learning_rate": [0.05, 0.3]},
                          scoring=ndcg_scorer(5), cv=GroupKFold(3)).fit(frame, y, groups=qid)
    loaded = _round_trip(search.best_estimator_, tmp_path)
    assert loaded[-1].learning_rate == search.best_params_["lambdamartranker__learning_rate"]
    assert loaded.predict(frame).tobytes() == search.predict(frame).tobytes()
    with pytest.raises(ValueError, match="or a Pipeline ending in one; got GridSearchCV"):
        save_model(search, tmp_path / "search.model")


@needs_skops
def test_pipeline_file_layout(pipelines, tmp_path):
    """Format 2: the ranker's format-1 members and fields, plus "pipeline" and a
    skops member that skops itself reads."""
    pipe, X = pipelines("imputer_scaler")
    path = tmp_path / "p.model"
    save_model(pipe, path)
    with zipfile.ZipFile(path) as zf:
        members = set(zf.namelist())
        document = json.loads(zf.read("model.json"))
        steps_blob = zf.read(STEPS_MEMBER)
    assert document["format_version"] == 2 < FORMAT_VERSION
    assert document["estimator"] == "XENDCGRanker"
    assert document["pipeline"] == {
        "steps": ["simpleimputer", "standardscaler", "xendcgranker"],
        "params": {"memory": None, "transform_input": None, "verbose": False},
        "sklearn_version": sklearn.__version__,
        "skops_version": __import__("skops").__version__,
    }
    assert members == {"model.json", STEPS_MEMBER} | {k + ".npy" for k in document["arrays"]}
    assert set(np.load(path, allow_pickle=False).files) >= set(document["arrays"])
    steps = skops_io.loads(steps_blob, trusted=skops_io.get_untrusted_types(data=steps_blob))
    assert [type(s) for s in steps] == [SimpleImputer, StandardScaler]
    # The ranker's trees read as the format-1 description says.
    Xt = pipe[:-1].transform(X)
    assert_array_equal(_documented_predict(path, Xt)[0], pipe.predict(X))


def test_single_rankers_still_load_next_to_pipelines(fitted, data, tmp_path):
    """A ranker written now is a format-1 file; BaseGBRanker.save_model writes it."""
    ranker = fitted["listnet"]
    ranker.save_model(tmp_path / "r.model")
    with zipfile.ZipFile(tmp_path / "r.model") as zf:
        assert json.loads(zf.read("model.json"))["format_version"] == 1
        assert STEPS_MEMBER not in zf.namelist()
    loaded = load_model(tmp_path / "r.model")
    assert type(loaded) is ListNetRanker
    assert loaded.predict(data[0]).tobytes() == ranker.predict(data[0]).tobytes()


# ------------------------------------------------------------------ refusing to save pipelines


@needs_skops
def test_save_refuses_pipelines_not_ending_in_a_ranker_or_with_foreign_steps(fitted, data,
                                                                            tmp_path):
    X, y, qid = data
    path = tmp_path / "m.model"
    with pytest.raises(ValueError, match="last step 'standardscaler' is StandardScaler"):
        save_model(make_pipeline(SimpleImputer(), StandardScaler()).fit(X), path)

    class MyRanker(LambdaMARTRanker):
        pass

    sub = make_pipeline(StandardScaler(), MyRanker(**SMALL)).fit(X, y, myranker__qid=qid)
    with pytest.raises(ValueError, match="last step 'myranker' is MyRanker"):
        save_model(sub, path)
    cases = {
        "_spy": (_Spy(), r"_Spy"),
        "functiontransformer": (FunctionTransformer(_double), r"_double"),
        # A scikit-learn function that writes files, called at predict time.
        "dumps": (FunctionTransformer(dump_svmlight_file),
                  r"sklearn\.datasets\._svmlight_format_io\.dump_svmlight_file"),
    }
    for step_name, (step, type_name) in cases.items():
        # Assembled from fitted parts: dump_svmlight_file would write files if fitted.
        pipe = Pipeline([("scale", StandardScaler().fit(X)), (step_name, step),
                         ("rank", fitted["lambdamart"])])
        with pytest.raises(ValueError, match=rf"^Cannot save step '{step_name}' of the "
                           rf"Pipeline: it holds .*{type_name}.*scikit-learn's own "
                           r"transformers.*skops\.io\.dump"):
            save_model(pipe, path)

    class MyPipeline(Pipeline):
        pass

    with pytest.raises(ValueError, match="got MyPipeline"):
        save_model(MyPipeline([("r", fitted["lambdamart"])]), path)
    with pytest.raises(ValueError, match=r"Cannot save Pipeline parameter memory=Memory"):
        save_model(Pipeline([("r", fitted["lambdamart"])], memory=joblib.Memory(None)), path)
    with pytest.raises(NotFittedError):
        save_model(make_pipeline(StandardScaler(), LambdaMARTRanker()), path)
    assert not path.exists()


# ------------------------------------------------------------------ refusing to load pipelines


def _pipeline_tamper_cases():
    def member(make):
        def edit(m):
            m[STEPS_MEMBER] = make()
        return edit

    def pipeline_field(key, value):
        return lambda m: _edit_json(m, lambda d: d["pipeline"].__setitem__(key, value))

    def param(key, value):
        return lambda m: _edit_json(m, lambda d: d["pipeline"]["params"].__setitem__(key, value))

    def drop_member(m):
        del m[STEPS_MEMBER]

    untrusted = "holds types that are not scikit-learn's own, which load_model does not load: "
    return {
        "foreign class": (member(lambda: skops_io.dumps([_Spy()])), untrusted + ".*_Spy"),
        "eval": (member(lambda: skops_io.dumps([FunctionTransformer(eval)])),
                 untrusted + "builtins.eval"),
        "file-writing sklearn function": (
            member(lambda: skops_io.dumps([FunctionTransformer(dump_svmlight_file)])),
            untrusted + r"sklearn\.datasets\._svmlight_format_io\.dump_svmlight_file"),
        "not a list": (member(lambda: skops_io.dumps(StandardScaler())),
                       "a list of the 1 steps"),
        "step count": (member(lambda: skops_io.dumps([StandardScaler()] * 2)),
                       "a list of the 1 steps"),
        "not a transformer": (member(lambda: skops_io.dumps([np.arange(3)])),
                              "holds ndarray, which is not a transformer"),
        "damaged skops": (member(lambda: b"PK not really"), "skops cannot read member"),
        "missing member": (drop_member, f"member {STEPS_MEMBER} is missing"),
        "version 1": (lambda m: _edit_json(m, lambda d: d.__setitem__("format_version", 1)),
                      "format_version 1 cannot hold a pipeline"),
        "duplicate names": (pipeline_field("steps", ["a", "a"]), "unique step names"),
        "name with __": (pipeline_field("steps", ["std__scaler", "rank"]),
                         "does not fit scikit-learn.*__"),
        "unknown parameter": (param("colour", "red"), "does not fit scikit-learn.*colour"),
        "invalid parameter": (param("verbose", "loud"), "does not fit scikit-learn.*verbose"),
    }


@needs_skops
@pytest.mark.parametrize("case", _pipeline_tamper_cases())
def test_tampered_pipeline_files_raise_value_error_and_build_nothing(case, pipelines,
                                                                      tmp_path):
    path = tmp_path / "m.model"
    save_model(pipelines("scaler")[0], path)
    members = _members(path)
    edit, problem = _pipeline_tamper_cases()[case]
    edit(members)
    bad = tmp_path / "tampered.model"
    _write_members(bad, members)
    built = _Spy.built
    with pytest.raises(ValueError, match=rf"^Cannot load model file {bad}: .*{problem}"):
        load_model(bad)
    assert _Spy.built == built  # refused before skops built anything


@needs_skops
@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                      min_size=1, max_size=3))
def test_fuzz_damaged_pipeline_files_raise_value_error_or_load_identically(pipelines, edits):
    pipe, X = pipelines("scaler")
    damaged = _damaged_file(pipe, edits, None, "damaged.model")
    try:
        loaded = load_model(damaged)
    except ValueError as exc:
        assert "damaged.model" in str(exc)
        return
    assert_array_equal(loaded.predict(X), pipe.predict(X))


# --------------------------------------------------------------------------- skops, optional


@needs_skops
def test_pipelines_need_skops_and_single_rankers_do_not(pipelines, fitted, tmp_path,
                                                        monkeypatch):
    pipe, _ = pipelines("scaler")
    save_model(pipe, tmp_path / "p.model")
    monkeypatch.setitem(sys.modules, "skops", None)  # import skops now fails
    monkeypatch.setitem(sys.modules, "skops.io", None)
    with pytest.raises(ImportError, match=r"^Saving a Pipeline needs .*pip install skops"):
        save_model(pipe, tmp_path / "q.model")
    assert not (tmp_path / "q.model").exists()
    with pytest.raises(ImportError, match=r"^Loading a Pipeline needs .*pip install skops"):
        load_model(tmp_path / "p.model")
    save_model(fitted["xendcg"], tmp_path / "r.model")
    assert isinstance(load_model(tmp_path / "r.model"), XENDCGRanker)


# --------------------------------------------------------------------------- skops files of users


def test_skops_trusted_types_name_the_rankers_their_internals_and_exclude_qid():
    assert SKOPS_TRUSTED_TYPES == [
        "sklearn_ltr.CalibratedRanker",
        "sklearn_ltr.LambdaMARTRanker",
        "sklearn_ltr.ListNetRanker",
        "sklearn_ltr.XENDCGRanker",
        "sklearn_ltr.YetiRankRanker",
        "sklearn_ltr._gbdt.binning.BinMapper",
        "sklearn_ltr._gbdt.booster.Booster",
        "sklearn_ltr._rankers.target_statistics.OrderedTargetStatistics",
        "sklearn_ltr.compose._TransformedColumns",
    ]
    from sklearn_ltr import persistence

    persistence.SKOPS_TRUSTED_TYPES.append("os.system")  # a new list at each access
    assert "os.system" not in persistence.SKOPS_TRUSTED_TYPES


def test_pickles_name_the_rankers_by_their_public_path(fitted, data):
    # A pickle names the class by module and name: the public module, so a
    # pickle does not break when the class moves inside the package.
    import pickle
    import pickletools

    import sklearn_ltr

    X = data[0]
    for name, ranker in fitted.items():
        blob = pickle.dumps(ranker)
        globals_named = {arg for _, arg, _ in pickletools.genops(blob)
                         if isinstance(arg, str) and arg.startswith("sklearn_ltr")}
        assert "sklearn_ltr" in globals_named, name
        assert not any(arg.startswith("sklearn_ltr._rankers") for arg in globals_named), name
        assert getattr(sklearn_ltr, type(ranker).__name__) is type(ranker)
        assert_array_equal(pickle.loads(blob).predict(X), ranker.predict(X))


@needs_skops
@pytest.mark.parametrize("name", ["lambdamart", "xendcg", "listnet", "calibrated_platt"])
def test_rankers_round_trip_through_skops_with_the_trusted_types(name, fitted, data):
    X = data[0]
    ranker = fitted[name]
    ranker.predict(X)  # fills the booster's prediction cache, which skops stores too
    blob = skops_io.dumps(ranker)
    assert set(skops_io.get_untrusted_types(data=blob)) <= set(SKOPS_TRUSTED_TYPES)
    with pytest.raises(UntrustedTypesFoundException):
        skops_io.loads(blob)
    loaded = skops_io.loads(blob, trusted=SKOPS_TRUSTED_TYPES)
    assert loaded.predict(X).tobytes() == ranker.predict(X).tobytes()
    _assert_same_state(ranker, loaded)
    if isinstance(ranker, CalibratedRanker):
        assert_array_equal(loaded.predict_proba(X), ranker.predict_proba(X))


@needs_skops
def test_a_pipeline_dumped_by_skops_loads_with_the_trusted_types(pipelines, tmp_path):
    """The recipe of the module docstring, on Pipeline(StandardScaler, ranker)."""
    pipe, X = pipelines("scaler")
    path = str(tmp_path / "pipeline.skops")
    skops_io.dump(pipe, path)
    others = [t for t in skops_io.get_untrusted_types(file=path) if t.startswith("sklearn.")]
    loaded = skops_io.load(path, trusted=SKOPS_TRUSTED_TYPES + others)
    assert loaded.predict(X).tobytes() == pipe.predict(X).tobytes()
    _assert_same_state(pipe[-1], loaded[-1])
    # load_model is not the way to read it, and says so.
    with pytest.raises(ValueError, match=r"looks like a skops file.*skops\.io\.load\(path, "
                       r"trusted=\.\.\.\).*SKOPS_TRUSTED_TYPES"):
        load_model(path)


# --------------------------------------------------------------------------- pickle and joblib


_REFUSED_PICKLE = (r"not a sklearn-ltr model file \(a zip archive\)\. load_model does not "
                   r"read pickles because loading a pickle can run arbitrary code\. If you "
                   r"trust the file, load it in Python \(joblib\.load or pickle\.load\) and "
                   r"write it with sklearn_ltr\.save_model\(model, path\)\.$")


@pytest.mark.parametrize("compress, kind", [
    (0, "a pickle file"),
    (3, "a zlib-compressed pickle file"),
    ("zlib", "a zlib-compressed pickle file"),
    ("gzip", "a gzip-compressed pickle file"),
    ("bz2", "a bz2-compressed pickle file"),
    ("xz", "an xz-compressed pickle file"),
    ("lzma", "an lzma-compressed pickle file"),
])
def test_joblib_files_are_refused_with_the_reason_and_the_way_out(compress, kind, pipelines,
                                                                  tmp_path):
    path = tmp_path / "model.joblib"
    joblib.dump(pipelines("scaler")[0], path, compress=compress)
    with pytest.raises(ValueError, match=rf"^Cannot load model file {re.escape(str(path))}: "
                       rf"it looks like {kind}, as pickle\.dump and joblib\.dump write, "
                       + _REFUSED_PICKLE):
        load_model(path)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickles_are_refused_with_the_reason_also_from_file_objects(protocol, fitted):
    buf = io.BytesIO(pickle.dumps(fitted["lambdamart"], protocol=protocol))
    buf.name = "ranker.pkl"
    with pytest.raises(ValueError, match=r"^Cannot load model file ranker\.pkl: it looks like "
                       r"a pickle file, " + ".*" + _REFUSED_PICKLE):
        load_model(buf)


def test_other_non_zip_files_keep_the_zip_message(fitted, tmp_path):
    import gzip

    cases = {
        # Protocols 0 and 1 carry no marker: not recognised.
        "protocol0.pkl": pickle.dumps([1, 2], protocol=0),
        "data.txt.gz": gzip.compress(b"1 qid:1 1:0.5\n"),
        "short": b"\x80",
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match=rf"{name}: it is not a valid zip archive"):
            load_model(tmp_path / name)
    # lz4 (joblib's compress="lz4") cannot be looked into without the lz4 package.
    (tmp_path / "m.lz4").write_bytes(b"\x04\x22\x4d\x18" + bytes(20))
    with pytest.raises(ValueError, match=r"looks like an lz4-compressed file \(joblib\.dump"):
        load_model(tmp_path / "m.lz4")


# --------------------------------------------------------------------------- the class registry


def test_registered_classes_are_what_files_may_name(data, tmp_path, monkeypatch):
    assert sorted(_registry.model_classes()) == [
        "CalibratedRanker", "LambdaMARTRanker", "ListNetRanker", "XENDCGRanker", "YetiRankRanker"
    ]
    X, y, qid = data

    class MyRanker(LambdaMARTRanker):
        pass

    ranker = MyRanker(**SMALL).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="got MyRanker"):
        save_model(ranker, tmp_path / "m.model")
    monkeypatch.setattr(_registry, "_CLASSES", dict(_registry._CLASSES))
    assert _registry.register_model_class(MyRanker) is MyRanker
    loaded = _round_trip(ranker, tmp_path)
    assert type(loaded) is MyRanker
    assert_array_equal(loaded.predict(X), ranker.predict(X))
    from sklearn_ltr import persistence

    assert f"{MyRanker.__module__}.{MyRanker.__qualname__}" in persistence.SKOPS_TRUSTED_TYPES

    class LambdaMARTRanker2(LambdaMARTRanker):
        pass

    LambdaMARTRanker2.__name__ = "LambdaMARTRanker"
    with pytest.raises(ValueError, match="already registered as 'LambdaMARTRanker'"):
        _registry.register_model_class(LambdaMARTRanker2)


# ------------------------------------------------------------------ doc/user_guide/saving.rst


def _python_blocks(path):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    return ["\n".join(line[4:] for line in m.group(1).splitlines())
            for m in re.finditer(r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", text)]


@needs_skops
def test_the_saving_page_blocks_run(tmp_path, monkeypatch):
    pytest.importorskip("pandas")
    blocks = _python_blocks(PAGE)
    assert len(blocks) == 4
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for block in blocks:
        exec(compile(block, PAGE, "exec"), namespace)
    # The pipeline's other types are scikit-learn's, which skops trusts, and
    # exclude_qid's column selector, which SKOPS_TRUSTED_TYPES names.
    assert namespace["others"] == []
    converted = load_model("pipeline.model")
    frame_test = namespace["frame_test"]
    assert_array_equal(converted.predict(frame_test), namespace["search"].predict(frame_test))
