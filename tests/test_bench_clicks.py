"""``benchmarks/bench_clicks.py --quick`` run as a user runs it, and the
examination curves it compares learned propensities with.

Oracles: the PBM's examination (1/r)**eta, and for cascade and DBN the click
log itself (the implied clicked side sum(E_r a) / sum(a) is the expected
clicks per unit of attractiveness, so it matches the observed clicks of a
large log)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPOSITORY

import sklearn_ltr
from sklearn_ltr.datasets import make_ranking, simulate_clicks

SCRIPT = REPOSITORY / "benchmarks" / "bench_clicks.py"


def _needs(*modules):
    for module in modules:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"the benchmark needs {module}: pip install sklearn-ltr[bench]")


@pytest.fixture(scope="module")
def bench():
    _needs("matplotlib", "scipy")
    sys.path.insert(0, str(REPOSITORY / "benchmarks"))
    try:
        import bench_clicks
    finally:
        sys.path.remove(str(REPOSITORY / "benchmarks"))
    return bench_clicks


def test_quick_run_writes_report_and_plot(tmp_path):
    _needs("matplotlib", "scipy", "xgboost", "lightgbm")
    out = tmp_path / "clicks.md"
    path = [str(Path(sklearn_ltr.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--trees", "5", "--out", str(out)],
        capture_output=True, text=True, cwd=REPOSITORY, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, path)),
             "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = out.read_text()
    assert (tmp_path / "clicks_propensities.png").stat().st_size > 0
    assert "## Failures" not in report
    for line in ("**NDCG goals, early-stopped on the validation clicks:", "**NDCG goals, all trees:",
                 "**Propensity goal:", "- pbm1-strong-s10: LambdaMART unbiased_lambdamart"):
        assert line in report
    # Every model of the benchmark has a row in each world.
    for name in ("LambdaMART clicks", "LambdaMART unbiased_lambdamart", "LambdaMART ipw",
                 "LambdaMART additive", "LambdaMART clicks, half learning rate",
                 "XGBoost rank:ndcg clicks", "XGBoost lambdarank_unbiased",
                 "LightGBM lambdarank clicks", "LightGBM lambdarank position",
                 "LambdaMART true labels (ceiling)"):
        assert report.count(f"| {name}") >= 4, name
    # The PBM world's implied curve is (1/r)**eta with eta = 1.
    row = next(line for line in report.splitlines()
               if line.startswith("| pbm1-strong-s10 | clicked | implied |"))
    values = [float(v) for v in row.split("|")[4].split()]
    np.testing.assert_allclose(values, 1 / np.arange(1, 11), atol=5e-4)


@pytest.mark.parametrize("click", ["pbm1", "cascade", "dbn"])
def test_implied_clicked_curve_matches_the_clicks(bench, click):
    _, y, qid = make_ranking(200, docs_per_query=20, n_features=5, random_state=0)
    log = simulate_clicks(y.astype(int), qid, scores=y + np.random.default_rng(0).normal(0, 1, len(y)),
                          score_noise=1.0, n_sessions=100, k=10, max_label=4, random_state=0,
                          **bench.CLICK_MODELS[click])
    t_plus, t_minus = bench.implied_curves(log, y, click)
    a = bench.attractiveness(y[log.row])
    observed = np.array([log.click[log.position == r].sum() / a[log.position == r].sum()
                         for r in range(1, 11)])
    np.testing.assert_allclose(t_plus, observed / observed[0], rtol=0.05, atol=0.01)
    assert t_plus[0] == t_minus[0] == 1
    if click == "pbm1":
        np.testing.assert_allclose(t_plus, 1 / np.arange(1, 11))
