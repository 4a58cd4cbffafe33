"""Write the model files that every later version of sklearn-ltr must still load.

Run once per model file ``format_version``, from the repository root, with
the release that introduced it::

    python tests/data/make_persistence_fixtures.py 3

It fits small models, saves them with
:func:`sklearn_ltr.persistence.save_model` as
``tests/data/persistence_v<N>/<name>.npz``, and stores in ``expected.npz``
the rows they are evaluated on (with missing values) and what this version
predicts for them. ``tests/test_persistence.py`` and
``tests/test_persistence_categorical.py`` load the files and check the
predictions. Never regenerate the files of a released format version: their
point is to catch a later version that can no longer read them, or reads
them differently.

- Version 1 (single rankers): one model of each ranker (CalibratedRanker with
  Platt scaling).
- Version 2 (pipelines): a pipeline of scikit-learn transformers ending in a
  ranker. Its file was written by the last commit before format 3
  (5061855), with ``PYTHONPATH`` pointing at a checkout of it; the function
  below uses only what that version had.
- Version 3 (categorical features): a ranker on integer category codes and
  one on a DataFrame with string and integer pandas category columns.
- ``layout`` (format 1, no new version): the rankers that came after format
  1's fixtures, YetiRankRanker and unbiased LambdaMART (with its fitted
  position biases), written by c59b99e, the last commit before the estimator
  classes moved from the package's top level into ``sklearn_ltr/_rankers/``:
  files name their class by its bare name, so the move must not matter.
  Written with ``PYTHONPATH`` pointing at a checkout of c59b99e.
"""

import os
import sys

import numpy as np

from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, ListNetRanker, XENDCGRanker
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.persistence import save_model

HERE = os.path.dirname(os.path.abspath(__file__))


def _data():
    X, y, qid = make_ranking(
        n_queries=30, docs_per_query=10, n_features=6, missing_rate=0.1, random_state=0
    )
    rows = X[:12].copy()
    rows[0, :] = np.nan  # every split's missing-value branch
    return X, y, qid, rows


def _folder(version):
    out_dir = os.path.join(HERE, f"persistence_{version}" if version == "layout"
                           else f"persistence_v{version}")
    os.makedirs(out_dir, exist_ok=True)
    return out_dir


def write_version_1():
    models = {
        "lambdamart": LambdaMARTRanker(n_estimators=6, max_leaf_nodes=5, random_state=0),
        "xendcg": XENDCGRanker(n_estimators=6, max_leaf_nodes=5, subsample=0.8, random_state=0),
        "listnet": ListNetRanker(n_estimators=6, max_leaf_nodes=5, max_features=0.7,
                                 random_state=0),
        "calibrated_platt": CalibratedRanker(
            n_estimators=6, max_leaf_nodes=5, calibration="platt", random_state=0
        ),
    }
    X, y, qid, rows = _data()
    out_dir = _folder(1)
    expected = {"X": rows}
    for name, model in models.items():
        labels = (y > 0).astype(np.float64) if name.startswith("calibrated") else y
        model.fit(X, labels, qid=qid)
        save_model(model, os.path.join(out_dir, f"{name}.npz"))
        expected[f"{name}_predict"] = model.predict(rows)
        expected[f"{name}_feature_importances"] = model.feature_importances_
        if hasattr(model, "predict_proba"):
            expected[f"{name}_predict_proba"] = model.predict_proba(rows)
    np.savez(os.path.join(out_dir, "expected.npz"), **expected)


def write_version_2():
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, qid, rows = _data()
    pipe = make_pipeline(SimpleImputer(), StandardScaler(),
                         LambdaMARTRanker(n_estimators=6, max_leaf_nodes=5, random_state=0))
    pipe.fit(X, y, lambdamartranker__qid=qid)
    out_dir = _folder(2)
    save_model(pipe, os.path.join(out_dir, "pipeline.npz"))
    np.savez(os.path.join(out_dir, "expected.npz"), X=rows, pipeline_predict=pipe.predict(rows))


def categorical_data():
    """The version 3 training data: ``(X, y, qid, frame)``. ``X`` has the
    six features of the other versions and a column of category codes 0..14
    (NaN and -1 missing); ``frame`` has the same six and two pandas category
    columns, ``brand`` (strings) and ``size`` (integers)."""
    import pandas as pd

    X, y, qid, _ = _data()
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 15, size=y.shape[0]).astype(np.float64)
    codes[rng.random(y.shape[0]) < 0.08] = np.nan
    codes[rng.random(y.shape[0]) < 0.04] = -1
    # Labels that depend on the categories, so that the trees split on them.
    y = y + (codes % 4 == 1) + 2 * (codes % 5 == 3)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    brands = np.array([f"b{int(c) % 9}" if c >= 0 else None for c in np.nan_to_num(codes, nan=-1)],
                      dtype=object)
    frame["brand"] = pd.Categorical(brands)
    frame["size"] = pd.Categorical((np.nan_to_num(codes, nan=0) * 7 % 11).astype(np.int64))
    return np.column_stack([X, codes]), y, qid, frame


def categorical_rows(X, frame):
    """Test rows for version 3: the first rows of the training data with
    unseen (99, "zzz", 77), negative and missing categories put in."""
    import pandas as pd

    rows = X[:12].copy()
    rows[0, :] = np.nan
    rows[1:5, -1] = [99, -1, np.nan, 14]
    brand = frame["brand"].iloc[:12].astype(object).to_numpy().copy()
    brand[1:4] = ["zzz", None, "b3"]
    size = frame["size"].iloc[:12].astype(np.int64).to_numpy().copy()
    size[1] = 77
    rows_frame = pd.DataFrame(rows[:, :-1], columns=frame.columns[:-2])
    rows_frame["brand"] = pd.Categorical(brand)
    rows_frame["size"] = pd.Categorical(size)
    return rows, rows_frame


def write_version_3():
    X, y, qid, frame = categorical_data()
    rows, rows_frame = categorical_rows(X, frame)
    codes_model = LambdaMARTRanker(n_estimators=6, max_leaf_nodes=5, max_bins=12,
                                   categorical_features=[6], random_state=0).fit(X, y, qid=qid)
    frame_model = XENDCGRanker(n_estimators=6, max_leaf_nodes=5, min_samples_leaf=5,
                               random_state=0).fit(frame, y, qid=qid)
    out_dir = _folder(3)
    save_model(codes_model, os.path.join(out_dir, "lambdamart_codes.npz"))
    save_model(frame_model, os.path.join(out_dir, "xendcg_frame.npz"))
    # The rows themselves too (the category columns as plain arrays, which
    # need no pickle), so that the test does not depend on make_ranking.
    brand = rows_frame["brand"].astype(object).to_numpy()
    np.savez(
        os.path.join(out_dir, "expected.npz"),
        X=rows,
        frame_X=rows_frame.drop(columns=["brand", "size"]).to_numpy(),
        frame_brand=np.array([b if isinstance(b, str) else "" for b in brand]),
        frame_brand_missing=np.array([not isinstance(b, str) for b in brand]),
        frame_size=rows_frame["size"].astype(np.int64).to_numpy(),
        lambdamart_codes_predict=codes_model.predict(rows),
        xendcg_frame_predict=frame_model.predict(rows_frame),
    )


def write_layout():
    from sklearn_ltr import YetiRankRanker

    X, y, qid, rows = _data()
    # Positions 1, 2, ... within each query in row order, as a production
    # ranker might have shown them.
    _, starts, sizes = np.unique(qid, return_index=True, return_counts=True)
    position = np.concatenate([np.arange(1, n + 1) for n in sizes[np.argsort(starts)]])
    models = {
        "yetirank": (YetiRankRanker(n_estimators=6, max_leaf_nodes=5, random_state=0), {}),
        "lambdamart_unbiased": (
            LambdaMARTRanker(n_estimators=6, max_leaf_nodes=5,
                             position_debiasing="unbiased_lambdamart", random_state=0),
            {"position": position},
        ),
    }
    out_dir = _folder("layout")
    expected = {"X": rows}
    for name, (model, extra) in models.items():
        model.fit(X, y, qid=qid, **extra)
        save_model(model, os.path.join(out_dir, f"{name}.npz"))
        expected[f"{name}_predict"] = model.predict(rows)
        expected[f"{name}_feature_importances"] = model.feature_importances_
    expected["lambdamart_unbiased_position_bias"] = models["lambdamart_unbiased"][0].position_bias_
    np.savez(os.path.join(out_dir, "expected.npz"), **expected)


if __name__ == "__main__":
    {"1": write_version_1, "2": write_version_2, "3": write_version_3,
     "layout": write_layout}[sys.argv[1]]()
