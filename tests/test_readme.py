"""The README as a newcomer meets it: each Python snippet runs as a file of
its own in a fresh process and prints what it computes, and the number it
prints is the one the Python API gives."""

import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

README = os.path.join(os.path.dirname(__file__), os.pardir, "README.md")


def readme_snippets():
    with open(README, encoding="utf-8") as fh:
        return re.findall(r"```python\n(.*?)```", fh.read(), flags=re.S)


def run_snippet(code, tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    done = subprocess.run([sys.executable, "-W", "error::UserWarning", str(path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_readme_has_the_snippets_this_test_knows():
    assert len(readme_snippets()) == 3


def test_routing_snippet_prints_the_test_ndcg_of_the_search(tmp_path):
    out = run_snippet(readme_snippets()[0], tmp_path, "routing")
    printed = float(out.strip().splitlines()[-1])
    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_ltr import LambdaMARTRanker
    from sklearn_ltr.datasets import load_example
    from sklearn_ltr.metrics import ndcg_score, ndcg_scorer

    (X, y, qid), (X_test, y_test, qid_test) = load_example()
    try:
        sklearn.set_config(enable_metadata_routing=True)
        search = GridSearchCV(
            make_pipeline(StandardScaler(), LambdaMARTRanker(random_state=0)),
            {"lambdamartranker__max_leaf_nodes": [15, 31]}, scoring=ndcg_scorer(10),
            cv=GroupKFold(5)).fit(X, y, qid=qid, groups=qid)
    finally:
        sklearn.set_config(enable_metadata_routing=False)
    assert printed == pytest.approx(
        ndcg_score(y_test, search.predict(X_test), qid=qid_test, k=10), abs=1e-12)


def test_column_snippet_prints_the_mean_cross_validated_ndcg(tmp_path):
    out = run_snippet(readme_snippets()[1], tmp_path, "column")
    printed = float(out.strip().splitlines()[-1])
    from sklearn.model_selection import GroupKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_ltr import LambdaMARTRanker
    from sklearn_ltr.compose import exclude_qid
    from sklearn_ltr.datasets import load_example, to_frame
    from sklearn_ltr.metrics import ndcg_scorer

    (X, y, qid), _ = load_example()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = cross_val_score(
            make_pipeline(exclude_qid(StandardScaler()), LambdaMARTRanker(random_state=0)),
            to_frame(X, qid), y, groups=qid, scoring=ndcg_scorer(10), cv=GroupKFold(5))
    assert printed == pytest.approx(np.mean(scores), abs=1e-12)


def test_the_saved_best_pipeline_gives_the_python_number_in_the_cli(tmp_path):
    pytest.importorskip("skops")
    out = run_snippet(readme_snippets()[2], tmp_path, "tuned")
    printed = out.strip().splitlines()[-1]
    assert re.fullmatch(r"NDCG@10 0\.\d{4}", printed)
    with open(README, encoding="utf-8") as fh:
        command = re.search(r"python -m sklearn_ltr (evaluate best\.ltr test\.txt --k 10)",
                            fh.read()).group(1)
    done = subprocess.run([sys.executable, "-m", "sklearn_ltr", *command.split()],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Pipeline(standardscaler -> lambdamartranker)" in done.stdout
    cli = re.search(r"^NDCG@10 +(0\.\d{4})$", done.stdout, flags=re.M).group(1)
    assert printed == f"NDCG@10 {cli}"
