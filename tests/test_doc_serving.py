"""The Python blocks of doc/user_guide/serving.rst run as written, and the
page's claims beyond them hold."""

import json
import os
import re

import numpy as np
import pytest

from _engine_rules import xgboost_plugin_scores
from sklearn_ltr import CalibratedRanker
from sklearn_ltr.datasets import load_example
from sklearn_ltr.export import export_model

PAGE = os.path.join(os.path.dirname(__file__), os.pardir, "doc", "user_guide", "serving.rst")


def python_blocks(path):
    """The bodies of the page's ``.. code-block:: python`` directives."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    blocks = []
    for match in re.finditer(r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", text):
        lines = match.group(1).splitlines()
        blocks.append("\n".join(line[4:] for line in lines))
    return blocks


def test_the_page_blocks_run(tmp_path, monkeypatch):
    pytest.importorskip("lightgbm")
    pytest.importorskip("xgboost")
    pytest.importorskip("onnxruntime")
    blocks = python_blocks(PAGE)
    assert len(blocks) >= 8
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for block in blocks:
        exec(compile(block, PAGE, "exec"), namespace)
    for name in ("ranker.txt", "ranker.json", "ranker.xgb.json", "ranker.xgb-dump.json",
                 "ranker.ranklib.txt", "ranker.solr.json", "ranker.onnx"):
        assert (tmp_path / name).stat().st_size > 0


def test_the_plugin_applies_the_sigmoid_of_a_logistic_definition(tmp_path):
    """The page's recipe for CalibratedRanker's probability in the LTR plugin."""
    (X, y, qid), (X_test, _, _) = load_example()
    ranker = CalibratedRanker(n_estimators=20, random_state=0).fit(X, (y > 0), qid=qid)
    export_model(ranker, tmp_path / "m.json", "xgboost-dump")
    definition = {"objective": "binary:logistic",
                  "splits": json.loads((tmp_path / "m.json").read_text())}
    names = [f"f{j}" for j in range(X.shape[1])]
    X32 = X_test.astype(np.float32).astype(np.float64)
    probability, _ = xgboost_plugin_scores(json.dumps(definition), names, X32)
    np.testing.assert_allclose(probability, ranker.predict_proba(X32)[:, 1], rtol=1e-5,
                               atol=1e-6)
