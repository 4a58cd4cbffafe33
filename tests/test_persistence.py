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

from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, ListNetRanker, XENDCGRanker
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.persistence import FORMAT_VERSION, load_model, save_model

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
SMALL = dict(n_estimators=6, max_leaf_nodes=6, min_samples_leaf=5, random_state=0)

RANKERS = {
    "lambdamart": LambdaMARTRanker(**SMALL),
    "lambdamart_sampled": LambdaMARTRanker(subsample=0.7, max_features=0.6, **SMALL),
    "lambdamart_early_stopping": LambdaMARTRanker(
        **{**SMALL, "n_estimators": 30}, early_stopping=True, n_iter_no_change=2
    ),
    "xendcg": XENDCGRanker(**SMALL),
    "listnet": ListNetRanker(label_distribution="exponential", **SMALL),
    "calibrated_rcr": CalibratedRanker(**SMALL),
    "calibrated_platt": CalibratedRanker(objective="softmax", calibration="platt", **SMALL),
}


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(
        n_queries=30, docs_per_query=12, n_features=6, missing_rate=0.1, random_state=0
    )
    return X, y, qid


def _labels(ranker, y):
    return (y > 0).astype(np.float64) if isinstance(ranker, CalibratedRanker) else y


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


def _assert_same_state(a, b):
    """Same class, parameters and fitted state, down to the trees and bins."""
    assert type(a) is type(b)
    assert a.get_params() == b.get_params()
    state_a, state_b = dict(vars(a)), dict(vars(b))
    assert state_a.keys() == state_b.keys()
    booster_a, booster_b = state_a.pop("_booster"), state_b.pop("_booster")
    mapper_a, mapper_b = state_a.pop("_bin_mapper"), state_b.pop("_bin_mapper")
    for key in state_a:
        assert_array_equal(state_a[key], state_b[key], err_msg=key)
        assert type(state_a[key]) is type(state_b[key]), key
    ba = {k: v for k, v in vars(booster_a).items() if k != "_flat"}
    bb = {k: v for k, v in vars(booster_b).items() if k != "_flat"}
    assert ba.keys() == bb.keys()
    for key in ba:
        if key == "trees":
            assert len(ba[key]) == len(bb[key])
            for ta, tb in zip(ba[key], bb[key]):
                assert ta.dtype == tb.dtype
                assert ta.tobytes() == tb.tobytes()  # bit-identical, NaN included
        else:
            assert_array_equal(ba[key], bb[key], err_msg=key)
    ma, mb = vars(mapper_a), vars(mapper_b)
    assert ma.keys() == mb.keys()
    for key in ma:
        if key == "bin_thresholds_":
            assert len(ma[key]) == len(mb[key])
            for x, z in zip(ma[key], mb[key]):
                assert_array_equal(x, z)
        else:
            assert_array_equal(ma[key], mb[key], err_msg=key)
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


@pytest.mark.parametrize("name", ["lambdamart_sampled", "xendcg", "calibrated_platt"])
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
    assert document["format_version"] == FORMAT_VERSION
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


# --------------------------------------------------------------------------- refusing to save


def test_save_refuses_unfitted_foreign_and_non_json(fitted, data, tmp_path):
    with pytest.raises(NotFittedError):
        save_model(LambdaMARTRanker(), tmp_path / "m.npz")

    class MyRanker(LambdaMARTRanker):
        pass

    X, y, qid = data
    with pytest.raises(ValueError, match="got MyRanker"):
        save_model(MyRanker(**SMALL).fit(X, y, qid=qid), tmp_path / "m.npz")
    with pytest.raises(ValueError, match="got Pipeline"):
        from sklearn.pipeline import make_pipeline

        save_model(make_pipeline(fitted["lambdamart"]), tmp_path / "m.npz")
    ranker = clone(fitted["lambdamart"]).set_params(random_state=np.random.RandomState(0))
    ranker.fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="random_state=RandomState"):
        save_model(ranker, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


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
                          "format_version 2.*Upgrade"),
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


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                      min_size=1, max_size=3),
       cut=st.one_of(st.none(), st.floats(0, 1)))
def test_fuzz_damaged_files_raise_value_error_or_load_identically(fitted, data, edits, cut):
    ranker = fitted["lambdamart"]
    buf = io.BytesIO()
    save_model(ranker, buf)
    raw = bytearray(buf.getvalue())
    for where, byte in edits:
        raw[int(where * len(raw))] = byte
    if cut is not None:
        raw = raw[: int(cut * len(raw))]
    damaged = io.BytesIO(bytes(raw))
    damaged.name = "damaged.npz"
    try:
        loaded = load_model(damaged)
    except ValueError as exc:
        assert "damaged.npz" in str(exc)
        return
    # Only bytes nothing depends on were hit (zip timestamps, comments, ...).
    assert_array_equal(loaded.predict(data[0]), ranker.predict(data[0]))
