"""Other readers of our LightGBM model files: treelite and lleaves.

Both read LightGBM's text format (``export_model(..., "lightgbm")``) with a
parser of their own and keep LightGBM's float64 thresholds and leaf values,
so their scores must equal ours to float64 rounding (1e-12 relative to the
largest score, as LightGBM's in test_export.py) on the rows of
tests/_export_cases.py, which put each split's feature at, just above and
just below its threshold, at NaN and at +-inf.

lleaves tells numeric from categorical features by the file's
``feature_infos`` and refuses a threshold of 0, so it checks that the file
is written as LightGBM writes it. It compiles the model with llvmlite < 0.44, which cannot share an
environment with numba's llvmlite, so it runs in a subprocess in a virtual
environment of its own: set ``SKLEARN_LTR_LLEAVES_PYTHON`` to that
environment's python (``.ci/run`` makes one). The test writes the model and
the rows to files, the subprocess compiles the model with lleaves and writes
its predictions, and the test compares them with ours.
"""

import os
import subprocess
import textwrap

import numpy as np
import pytest
from numpy.testing import assert_allclose

from _export_cases import (CATEGORICAL_COLUMNS, CATEGORICAL_MAX_BINS, N_FEATURES, RANKERS,
                           categorical_probe_rows, categorical_training_data, category_probes,
                           fitted, fitted_categorical, probe_rows)
from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.export import export_model

LLEAVES_PYTHON = "SKLEARN_LTR_LLEAVES_PYTHON"


def assert_scores_equal(theirs, ours, rtol=1e-12):
    assert_allclose(theirs, ours, rtol=rtol, atol=rtol * np.abs(ours).max())


# -- treelite ------------------------------------------------------------------------


def _treelite_scores(path, X):
    treelite = pytest.importorskip("treelite")
    import treelite.gtil

    frontend = getattr(treelite, "frontend", None)
    if frontend is not None and hasattr(frontend, "load_lightgbm_model"):  # treelite >= 4
        model = frontend.load_lightgbm_model(str(path))
    else:
        model = treelite.Model.load(str(path), model_format="lightgbm")
    return np.asarray(treelite.gtil.predict(model, X, pred_margin=True)).reshape(X.shape[0])


@pytest.mark.parametrize("name", RANKERS)
def test_treelite_reads_our_lightgbm_file_and_predicts_our_scores(name, tmp_path):
    model = fitted(name)
    export_model(model, tmp_path / "model.txt", "lightgbm")
    for X in (probe_rows(name), probe_rows(name, float32=True)):
        assert_scores_equal(_treelite_scores(tmp_path / "model.txt", X), model.predict(X))
    assert np.isnan(X).any() and np.isinf(X).any()


def test_treelite_routes_our_categorical_splits_as_ours(tmp_path):
    """Known, rare, unseen and negative codes and NaN (integer codes: a
    fractional one is read as its integer part, as LightGBM reads it)."""
    model = fitted_categorical()
    export_model(model, tmp_path / "model.txt", "lightgbm")
    X = categorical_probe_rows()
    assert_scores_equal(_treelite_scores(tmp_path / "model.txt", X), model.predict(X))


# -- lleaves, in its own environment ---------------------------------------------------

# Run by the lleaves environment's python: compile the model as lleaves'
# documentation shows, raw scores (our predict's), float64 throughout.
_LLEAVES_SCRIPT = textwrap.dedent("""
    import sys

    import lleaves
    import numpy as np

    model_path, rows_path, out_path = sys.argv[1:]
    model = lleaves.Model(model_file=model_path)
    model.compile(raw_score=True, use_fp64=True)
    np.save(out_path, model.predict(np.load(rows_path), n_jobs=1))
""")


class LleavesRefused(Exception):
    """lleaves failed on the file: the subprocess ended with an error."""


@pytest.fixture(scope="module")
def lleaves_python():
    python = os.environ.get(LLEAVES_PYTHON)
    if not python:
        pytest.skip(f"{LLEAVES_PYTHON} is not set: set it to the python of a virtual environment "
                    "with lleaves, llvmlite<0.44 and numpy (.ci/run makes one) to run these tests")
    found = subprocess.run([python, "-c", "import lleaves, numpy"], capture_output=True, text=True)
    if found.returncode != 0:
        pytest.skip(f"lleaves is not importable by {LLEAVES_PYTHON}={python}: "
                    f"{found.stderr.strip().splitlines()[-1] if found.stderr.strip() else 'no output'}")
    return python


def _lleaves_scores(python, model, X, tmp_path):
    export_model(model, tmp_path / "model.txt", "lightgbm")
    np.save(tmp_path / "rows.npy", X)
    (tmp_path / "run_lleaves.py").write_text(_LLEAVES_SCRIPT)
    ran = subprocess.run(
        [python, str(tmp_path / "run_lleaves.py"), str(tmp_path / "model.txt"),
         str(tmp_path / "rows.npy"), str(tmp_path / "scores.npy")],
        capture_output=True, text=True,
    )
    if ran.returncode != 0:
        raise LleavesRefused(ran.stderr[-3000:])
    return np.load(tmp_path / "scores.npy")


def _categorical_only_model():
    """A model whose every split is categorical: the other columns of the
    categorical training data are constant, so nothing splits on them."""
    X, y, qid = categorical_training_data()
    X = X.copy()
    X[:, np.setdiff1d(np.arange(N_FEATURES), CATEGORICAL_COLUMNS)] = 0.0
    return LambdaMARTRanker(
        categorical_features=list(CATEGORICAL_COLUMNS), max_bins=CATEGORICAL_MAX_BINS,
        n_estimators=30, early_stopping=False, random_state=0,
    ).fit(X, y, qid=qid)


def _categorical_only_rows(model):
    """Every pair of category probes of the two columns (integer codes, NaN,
    negative, unseen and rare ones), the other columns 0."""
    ensemble = model._tree_ensemble()
    first, second = (category_probes(ensemble, f) for f in CATEGORICAL_COLUMNS)
    X = np.zeros((first.size * second.size, N_FEATURES))
    X[:, CATEGORICAL_COLUMNS[0]] = np.repeat(first, second.size)
    X[:, CATEGORICAL_COLUMNS[1]] = np.tile(second, first.size)
    return X


def test_lleaves_compiles_a_model_of_categorical_splits_only(lleaves_python, tmp_path):
    model = _categorical_only_model()
    nodes = model._tree_ensemble().nodes
    splits = nodes[nodes["is_leaf"] == 0]
    assert splits.size > 0 and (splits["is_categorical"] != 0).all()
    X = _categorical_only_rows(model)
    assert np.isnan(X).any() and (X < 0).any()
    assert_scores_equal(_lleaves_scores(lleaves_python, model, X, tmp_path), model.predict(X))


@pytest.mark.parametrize("case", list(RANKERS) + ["categorical"])
def test_lleaves_predicts_our_scores(case, lleaves_python, tmp_path):
    """lleaves tells numeric features from categorical ones by their
    ``feature_infos`` entry (``[min:max]`` is numeric) and refuses a
    threshold of exactly 0; ours writes both as LightGBM does."""
    if case == "categorical":
        model, X = fitted_categorical(), categorical_probe_rows()
        nodes = model._tree_ensemble().nodes
        numeric = nodes[(nodes["is_leaf"] == 0) & (nodes["is_categorical"] == 0)]
        assert numeric.size and (nodes["is_categorical"] != 0).any()
    else:
        model, X = fitted(case), probe_rows(case)
    assert_scores_equal(_lleaves_scores(lleaves_python, model, X, tmp_path), model.predict(X))
