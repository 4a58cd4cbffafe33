"""Every public import path of the release before the package was split into
layers still works, and names the same objects as the new homes."""

import importlib
import subprocess
import sys

import pytest

PUBLIC = {
    "sklearn_ltr": ["LambdaMARTRanker", "XENDCGRanker", "ListNetRanker", "YetiRankRanker",
                    "CalibratedRanker", "save_model", "load_model", "__version__"],
    "sklearn_ltr.calibration": ["CalibratedRanker"],
    "sklearn_ltr.persistence": ["save_model", "load_model", "FORMAT_VERSION",
                                "SKOPS_TRUSTED_TYPES"],
    "sklearn_ltr.metrics": ["ndcg_score", "ndcg_scorer", "map_score", "mrr_score",
                            "make_ranking_scorer"],
    "sklearn_ltr.datasets": ["make_ranking", "load_example", "load_letor_folds",
                             "simulate_clicks", "qid_from_group_sizes", "to_frame"],
    "sklearn_ltr.export": ["export_model", "to_lightgbm", "to_xgboost"],
    "sklearn_ltr.inspection": ["feature_contributions", "explain_pair"],
    "sklearn_ltr.compose": ["exclude_qid"],
    "sklearn_ltr.exceptions": ["CategoryPoolingWarning", "SingleQueryWarning"],
    "sklearn_ltr.cli": ["main"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_import(module):
    imported = importlib.import_module(module)
    for name in PUBLIC[module]:
        assert hasattr(imported, name), f"{module}.{name}"


def test_the_public_paths_name_the_same_classes():
    import sklearn_ltr
    from sklearn_ltr import calibration
    from sklearn_ltr._rankers import registry

    assert calibration.CalibratedRanker is sklearn_ltr.CalibratedRanker
    assert {name: getattr(sklearn_ltr, name) for name in registry.model_classes()} == \
        registry.model_classes()


def test_the_dask_paths_import():
    pytest.importorskip("distributed")
    from sklearn_ltr import dask as ltr_dask

    for name in ("DaskLambdaMARTRanker", "DaskXENDCGRanker", "DaskListNetRanker",
                 "DaskYetiRankRanker", "DaskCalibratedRanker", "repartition_by_query"):
        assert hasattr(ltr_dask, name), name


def test_python_dash_m_runs_the_command_line():
    done = subprocess.run([sys.executable, "-m", "sklearn_ltr", "--help"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for command in ("fit", "predict", "evaluate", "export", "demo"):
        assert command in done.stdout
