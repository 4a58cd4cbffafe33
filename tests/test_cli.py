"""Tests of the command line (``python -m sklearn_ltr``), run as subprocesses.

The oracle is the Python API on the same data and parameters: the model the
command line trains, the scores it writes, the metrics and t-tests it
prints must equal what ``LambdaMARTRanker``, ``load_svmlight_ranking``,
``sklearn_ltr.metrics`` and ``scipy.stats.ttest_rel`` give directly.
The main chain (fit, predict, evaluate, compare) and one case of each error
kind run as real subprocesses, concurrently where independent; the other
variants call ``main()`` in-process, which runs the same code without paying
the interpreter's start-up again.
"""

import gzip
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import ttest_rel

from sklearn_ltr import LambdaMARTRanker, XENDCGRanker, load_model
from sklearn_ltr.cli.demo import _holdout_queries
from sklearn_ltr.cli import main, parse_param
from sklearn_ltr.datasets import load_example, load_letor_folds, load_svmlight_ranking
from sklearn_ltr.metrics import (
    err_score_per_query,
    map_score_per_query,
    mrr_score_per_query,
    ndcg_score,
    ndcg_score_per_query,
)

# Small models: the point is agreement with the Python API, not quality.
PARAMS_A = dict(
    n_estimators=6, max_leaf_nodes=7, learning_rate=0.3, max_depth=None, normalize_lambdas=True
)
PARAMS_B = dict(n_estimators=5, max_leaf_nodes=5)


def _start(args, cwd):
    return subprocess.Popen(
        [sys.executable, "-m", "sklearn_ltr", *map(str, args)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_many(commands, cwd):
    """Run the commands concurrently; (returncode, stdout, stderr) of each."""
    processes = [_start(args, cwd) for args in commands]
    results = []
    for p in processes:
        out, err = p.communicate(timeout=300)
        results.append((p.returncode, out, err))
    return results


def run(args, cwd):
    return run_many([args], cwd)[0]


def run_here(args, capsys):
    """main() in this process (cheaper than a subprocess): (status, stdout, stderr)."""
    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse: --help, usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _param_args(params):
    out = []
    for key, value in params.items():
        out += ["--param", f"{key}={'none' if value is None else str(value).lower()}"]
    return out


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def s5(mq2008_dir):
    """MQ2008's S5 part, the test part of fold 1."""
    return mq2008_dir / "S5.txt.gz"


@pytest.fixture(scope="module")
def fold1(mq2008_dir):
    return load_letor_folds(mq2008_dir, 1)


@pytest.fixture(scope="module")
def models(mq2008_dir, workdir, fold1):
    """Two models fitted by the command line, and the same fits through the API."""
    results = run_many(
        [
            ["fit", mq2008_dir, "--fold", "1", *_param_args(PARAMS_A), "-o", "a.model"],
            ["fit", mq2008_dir, "--ranker", "xendcg", *_param_args(PARAMS_B), "-o", "b.model"],
        ],
        workdir,
    )
    for code, out, err in results:
        assert code == 0, err
    (X, y, qid), (X_val, y_val, qid_val), _ = fold1
    val = dict(X_val=X_val, y_val=y_val, qid_val=qid_val)
    api_a = LambdaMARTRanker(random_state=0, **PARAMS_A).fit(X, y, qid=qid, **val)
    api_b = XENDCGRanker(random_state=0, **PARAMS_B).fit(X, y, qid=qid, **val)
    return {
        "a": (workdir / "a.model", api_a, results[0][1]),
        "b": (workdir / "b.model", api_b, results[1][1]),
    }


def _read_tsv(path):
    with open(path, encoding="utf-8") as fh:
        header, *rows = [line.rstrip("\n").split("\t") for line in fh]
    return header, rows


# -- parse_param (in-process) -----------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("n_estimators=500", ("n_estimators", 500)),
        ("tol=-3", ("tol", -3)),
        ("learning_rate=0.05", ("learning_rate", 0.05)),
        ("tol=1e-3", ("tol", 1e-3)),
        ("warm_start=TRUE", ("warm_start", True)),
        ("warm_start=false", ("warm_start", False)),
        ("max_depth=None", ("max_depth", None)),
        ("max_depth=null", ("max_depth", None)),
        ("objective=sigmoid+softmax", ("objective", "sigmoid+softmax")),
        ("x = 3 ", ("x", 3)),
        ("n_estimators=1_0", ("n_estimators", "1_0")),  # not Python's 10
        ("name=__import__('os')", ("name", "__import__('os')")),  # never evaluated
        ("a=b=c", ("a", "b=c")),
        ("categorical_features=6,7", ("categorical_features", [6, 7])),
        ("categorical_features=[6]", ("categorical_features", [6])),
        ("label_gain=[0, 1, 3.5]", ("label_gain", [0.0, 1.0, 3.5])),
        ("scoring=ndcg@10", ("scoring", "ndcg@10")),
        ("name=a,b", ("name", "a,b")),
        ("name=[]", ("name", "[]")),
    ],
)
def test_parse_param_converts_values(text, expected):
    key, value = parse_param(text)
    assert (key, value) == expected
    assert type(value) is type(expected[1])


@pytest.mark.parametrize("text", ["n_estimators", "=3", ""])
def test_parse_param_rejects_text_without_key_value(text):
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_param(text)


# -- fit / predict / evaluate against the Python API --------------------------------


def test_fit_trains_the_same_model_as_the_python_api(models, fold1):
    X_test = fold1[2][0]
    for path, api, _ in models.values():
        cli = load_model(path)
        assert type(cli) is type(api)
        assert cli.n_iter_ == api.n_iter_
        np.testing.assert_array_equal(cli.predict(X_test), api.predict(X_test))
    params = load_model(models["a"][0]).get_params()
    for key, value in PARAMS_A.items():
        assert params[key] == value and type(params[key]) is type(value)
    assert params["random_state"] == 0  # the command line's fixed default


def test_fit_summary_reports_trees_and_validation_ndcg(models, fold1):
    _, (X_val, y_val, qid_val), _ = fold1
    for _, api, out in models.values():
        assert f"{api.n_iter_} {api.grow_policy_} trees" in out
        expected = ndcg_score(y_val, api.predict(X_val), qid=qid_val, k=10)
        assert f"validation NDCG@10: {expected:.4f}" in out
        assert "fit in" in out and "vali part" in out


def test_fit_without_early_stopping_ignores_the_vali_part(mq2008_dir, workdir, fold1, capsys):
    # The fold's vali part is loaded anyway; fit would refuse it as unused.
    params = dict(n_estimators=3, early_stopping=False)
    code, out, err = run_here(
        ["fit", mq2008_dir, "--fold", "1", *_param_args(params), "-o", workdir / "no_es.model"],
        capsys)
    assert code == 0, err
    (X, y, qid), _, (X_test, _, _) = fold1
    api = LambdaMARTRanker(random_state=0, **params).fit(X, y, qid=qid)
    np.testing.assert_array_equal(load_model(workdir / "no_es.model").predict(X_test),
                                  api.predict(X_test))


def test_fit_summary_names_the_metric_that_stopped_it(mq2008_dir, workdir, fold1, capsys):
    params = dict(n_estimators=40, max_leaf_nodes=5, learning_rate=0.3, n_iter_no_change=3)
    code, out, err = run_here(
        ["fit", mq2008_dir, "--fold", "1", *_param_args(params), "--param", "scoring=map@5",
         "-o", workdir / "map.model"], capsys)
    assert code == 0, err
    (X, y, qid), (X_val, y_val, qid_val), _ = fold1
    api = LambdaMARTRanker(random_state=0, scoring="map@5", **params).fit(
        X, y, qid=qid, X_val=X_val, y_val=y_val, qid_val=qid_val)
    grown = len(api.validation_score_) - 1
    assert (f"{api.n_iter_} {api.grow_policy_} trees (early stopping on MAP@5 of the "
            "validation set: kept the "
            f"best {api.n_iter_} of {grown} grown)") in out
    assert load_model(workdir / "map.model").scoring == "map@5"


def test_predict_writes_the_api_scores_exactly(s5, models, workdir):
    """Scores read back are model.predict's bit for bit, so fit -> predict ->
    NDCG gives the API's number."""
    path, api, _ = models["a"]
    (code, out, err), (code_r, out_r, err_r) = run_many(
        [
            ["predict", path, s5, "-o", "scores.txt"],
            ["predict", path, s5, "-o", "-", "--rankings"],
        ],
        workdir,
    )
    assert code == 0, err
    assert code_r == 0, err_r
    X, _, qid = load_svmlight_ranking(s5, n_features=api.n_features_in_)
    expected = api.predict(X)
    with open(workdir / "scores.txt") as fh:
        scores = np.array([float(line) for line in fh])
    np.testing.assert_array_equal(scores, expected)
    y = load_svmlight_ranking(s5)[1]
    assert ndcg_score(y, scores, qid=qid) == ndcg_score(y, api.predict(X), qid=qid)

    # Rankings: every row once, ranks as LambdaMARTRanker.rank, docids from the comments.
    with gzip.open(s5, "rt") as fh:
        docids = [line.split("#docid = ")[1].split()[0] for line in fh if line.strip()]
    header, *rows = [line.split("\t") for line in out_r.splitlines()]
    assert header == ["qid", "rank", "row", "docid", "score"]
    assert sorted(int(r[2]) for r in rows) == list(range(X.shape[0]))
    ranks = api.rank(X, qid=qid)
    for q, rank, row, docid, score in rows:
        row = int(row)
        assert int(q) == qid[row] and int(rank) == ranks[row]
        assert docid == docids[row] and float(score) == expected[row]
    # Grouped by query in file order, best first.
    listed_qids = [int(r[0]) for r in rows]
    assert list(dict.fromkeys(listed_qids)) == list(dict.fromkeys(qid.tolist()))
    assert all(int(r[1]) == 1 or int(r[1]) == int(p[1]) + 1 for p, r in zip(rows, rows[1:]))


def _table(out):
    """{metric: fields} of the rows of evaluate's table."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("metric ")) + 1
    stop = lines.index("", start)
    return {line.split()[0]: line.split() for line in lines[start:stop]}


def _api_metrics(y, scores, qid, max_grade):
    table = {}
    for k in (1, 3, 5, 10):
        table[f"NDCG@{k}"] = ndcg_score_per_query(y, scores, qid=qid, k=k)[1]
    table["MRR"] = mrr_score_per_query(y, scores, qid=qid)[1]
    table["MAP"] = map_score_per_query(y, scores, qid=qid)[1]
    for k in (1, 3, 5, 10):
        table[f"ERR@{k}"] = err_score_per_query(y, scores, qid=qid, k=k, max_grade=max_grade)[1]
    return table


def test_evaluate_matches_the_metrics_of_the_python_api(mq2008_dir, s5, models, workdir, fold1):
    path, api, _ = models["a"]
    (code, out, err), (code_dir, out_dir, err_dir) = run_many(
        [
            ["evaluate", path, s5, "--per-query", "pq.tsv"],
            ["evaluate", path, mq2008_dir, "--fold", "1", "--per-query", "pq_dir.tsv"],
        ],
        workdir,
    )
    assert code == 0, err
    assert code_dir == 0, err_dir
    X, y, qid = fold1[2]
    scores = api.predict(X)
    expected = _api_metrics(y, scores, qid, max_grade=2)
    header, rows = _read_tsv(workdir / "pq.tsv")
    assert header == ["qid", "n_docs", "n_relevant", *expected]
    unique, counts = np.unique(qid, return_counts=True)
    assert [int(r[0]) for r in rows] == unique.tolist()
    assert [int(r[1]) for r in rows] == counts.tolist()
    assert [int(r[2]) for r in rows] == [int(np.sum(y[qid == q] >= 1)) for q in unique]
    for j, (name, values) in enumerate(expected.items()):
        np.testing.assert_array_equal([float(r[3 + j]) for r in rows], values, err_msg=name)
        assert _table(out)[name] == [name, f"{np.mean(values):.4f}"]
    # The S5 file and the test part of fold 1 are the same data.
    assert _read_tsv(workdir / "pq_dir.tsv") == (header, rows)
    # The conventions are stated.
    for phrase in ("2**label - 1", "1 / log2(rank + 1)", "NDCG counts 1", "max grade 2"):
        assert phrase in out


def test_compare_prints_scipy_paired_t_test(s5, models, workdir, fold1):
    path_a, api_a, _ = models["a"]
    path_b, api_b, _ = models["b"]
    code, out, err = run(
        ["evaluate", path_a, s5, "--compare", path_b, "--k", "10", "5", "--per-query", "c.tsv"],
        workdir,
    )
    assert code == 0, err
    X, y, qid = fold1[2]
    a = _api_metrics(y, api_a.predict(X), qid, max_grade=2)
    b = _api_metrics(y, api_b.predict(X), qid, max_grade=2)
    names = ["NDCG@10", "NDCG@5", "MRR", "MAP", "ERR@10", "ERR@5"]
    lines = _table(out)
    assert list(lines) == names
    for name in names:
        result = ttest_rel(a[name], b[name])
        mean_a, mean_b = np.mean(a[name]), np.mean(b[name])
        assert lines[name] == [
            name,
            f"{mean_a:.4f}",
            f"{mean_b:.4f}",
            f"{mean_b - mean_a:+.4f}",
            f"{-result.statistic:.3f}",  # B against A
            f"{result.pvalue:.4g}",
        ]
    header, rows = _read_tsv(workdir / "c.tsv")
    assert header[3:] == [f"A:{n}" for n in names] + [f"B:{n}" for n in names]
    np.testing.assert_array_equal([float(r[3]) for r in rows], a["NDCG@10"])
    np.testing.assert_array_equal([float(r[9]) for r in rows], b["NDCG@10"])


def test_data_with_fewer_features_is_padded_to_the_model(models, workdir, capsys):
    """A file whose largest index is below the model's feature count still predicts."""
    path, api, _ = models["a"]
    rows = [(2, 1, {1: 0.5, 3: 0.25}), (0, 1, {2: 1.0}), (1, 7, {1: 0.75, 5: 0.5})]
    (workdir / "small.txt").write_text(
        "".join(
            f"{label} qid:{q} " + " ".join(f"{i}:{v}" for i, v in feats.items()) + "\n"
            for label, q, feats in rows
        )
    )
    (workdir / "wide.txt").write_text("1 qid:1 1:0.5\n0 qid:1 47:1\n")
    code, out, err = run(["predict", path, "small.txt", "-o", "-"], workdir)
    assert code == 0, err
    X = np.zeros((3, api.n_features_in_))
    for r, (_, _, feats) in enumerate(rows):
        for i, v in feats.items():
            X[r, i - 1] = v
    np.testing.assert_array_equal([float(s) for s in out.split()], api.predict(X))
    code, _, err = run_here(["predict", path, workdir / "wide.txt", "-o", "-"], capsys)
    assert code == 2
    assert "wide.txt, line 2" in err and "47" in err


# -- help and errors ------------------------------------------------------------------


def test_help_of_every_command_exits_0(workdir, capsys):
    code, out, err = run(["--help"], workdir)  # through python -m
    assert code == 0, err
    assert out.startswith("usage: python -m sklearn_ltr")
    for command in ("fit", "predict", "evaluate", "demo"):
        assert command in out
    helps = {}
    for command in ("fit", "predict", "evaluate", "demo"):
        code, helps[command], err = run_here([command, "--help"], capsys)
        assert code == 0, (command, err)
        assert helps[command].startswith(f"usage: python -m sklearn_ltr {command}")
    assert "--param KEY=VALUE" in helps["fit"] and "vali part" in helps["fit"]
    assert "--rankings" in helps["predict"]
    assert "ttest_rel" in helps["evaluate"] and "2**label - 1" in helps["evaluate"]


def _one_line_error(code, err):
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err


def test_bad_params_and_output_dir_exit_2_with_one_line(s5, workdir, capsys):
    valid = sorted(LambdaMARTRanker().get_params())
    base = ["fit", s5, "-o", workdir / "never.model"]
    unknown = _one_line_error(*run(base + ["--param", "n_estimator=5"], workdir)[::2])
    assert "'n_estimator'" in unknown and "did you mean n_estimators" in unknown
    assert unknown.strip().endswith("valid parameters: " + ", ".join(valid) + ".")
    cases = {
        "n_estimators=abc": "'n_estimators' parameter of LambdaMARTRanker must be an int",
        "n_estimators": "expects KEY=VALUE",
        "max_bins=300": "'max_bins' parameter",
        "early_stopping=maybe": "'early_stopping' parameter",
    }
    for param, message in cases.items():
        err = _one_line_error(*run_here(base + ["--param", param], capsys)[::2])
        assert message in err, param
    err = _one_line_error(*run_here(base + ["--param", "tol=1", "--param", "tol=2"], capsys)[::2])
    assert "twice" in err
    missing = workdir / "no-such-dir" / "m.model"
    err = _one_line_error(*run_here(["fit", s5, "-o", missing], capsys)[::2])
    assert "no-such-dir" in err and "does not exist" in err
    assert not (workdir / "never.model").exists()


def test_malformed_data_names_file_and_line(s5, models, workdir, capsys):
    path = models["a"][0]
    bad = workdir / "bad.txt"
    bad.write_text("# a comment line\n2 qid:1 1:0.5 2:1\n\n0 qid:1 1:0.25 2:oops\n1 qid:2 1:1\n")
    err = _one_line_error(*run(["evaluate", path, "bad.txt"], workdir)[::2])
    assert "bad.txt, line 4:" in err and "'oops'" in err
    for args in (["fit", bad, "-o", workdir / "never.model"], ["predict", path, bad, "-o", "-"]):
        err = _one_line_error(*run_here(args, capsys)[::2])
        assert f"{bad}, line 4:" in err and "'oops'" in err
    (workdir / "noqid.txt").write_text("1 1:0.5\n0 2:1\n")
    err = _one_line_error(*run_here(["evaluate", path, workdir / "noqid.txt"], capsys)[::2])
    assert "noqid.txt has no 'qid:' entries" in err and "--query-file" in err
    err = _one_line_error(*run_here(["evaluate", bad, s5], capsys)[::2])
    assert f"Cannot load model file {bad}" in err


def test_predict_without_qid_and_with_query_file(models, workdir, capsys):
    """Scores need no queries; --query-file gives them for --rankings."""
    path, api, _ = models["a"]
    (workdir / "plain.txt").write_text("1 1:0.5 2:0.1\n0 2:1\n2 1:0.9 3:0.4\n")
    (workdir / "plain.query").write_text("2\n1\n")
    code, out, err = run_here(["predict", path, workdir / "plain.txt", "-o", "-"], capsys)
    assert code == 0, err
    X, _, qid = load_svmlight_ranking(
        workdir / "plain.txt", query_file=workdir / "plain.query", n_features=api.n_features_in_
    )
    np.testing.assert_array_equal([float(s) for s in out.split()], api.predict(X))
    code, out, err = run_here(
        ["predict", path, workdir / "plain.txt", "--query-file", workdir / "plain.query",
         "-o", "-", "--rankings"],
        capsys,
    )
    assert code == 0, err
    header, *rows = [line.split("\t") for line in out.splitlines()]
    assert header == ["qid", "rank", "row", "score"]  # no docids in this file
    ranks = api.rank(X, qid=qid)
    assert sorted((int(r[2]), int(r[0]), int(r[1])) for r in rows) == [
        (i, int(qid[i]), int(ranks[i])) for i in range(3)
    ]


def test_demo_still_prints_its_table(capsys):
    """The demo's LambdaMART row matches the same fit through the API."""
    code, out, err = run_here(["demo", "--n-estimators", "3", "--patience", "2"], capsys)
    assert code == 0, err
    train_full, (X_test, y_test, qid_test) = load_example()
    (X, y, qid), (X_val, y_val, qid_val) = _holdout_queries(*train_full, fraction=0.2, seed=0)
    api = LambdaMARTRanker(
        n_estimators=3, learning_rate=0.1, max_leaf_nodes=31, min_samples_leaf=20,
        n_iter_no_change=2, random_state=0,
    ).fit(X, y, qid=qid, X_val=X_val, y_val=y_val, qid_val=qid_val)
    scores = api.predict(X_test)
    row = next(line for line in out.splitlines() if line.startswith("LambdaMARTRanker "))
    assert row.split()[1] == str(api.n_iter_)
    expected = [f"{ndcg_score(y_test, scores, qid=qid_test, k=k):.4f}" for k in (1, 3, 5, 10)]
    assert row.split()[3:] == expected
    assert "model" in out and "NDCG@10" in out and "queries without relevant documents" in out


# -- export ------------------------------------------------------------------------


def test_export_round_trips_through_lightgbm_and_xgboost(models, workdir, fold1, capsys):
    lightgbm = pytest.importorskip("lightgbm")
    xgboost = pytest.importorskip("xgboost")
    path, api, _ = models["a"]
    X_test = fold1[2][0]
    code, out, err = run_here(["export", path, "--format", "lightgbm", "-o",
                               workdir / "a.txt"], capsys)
    assert code == 0, err
    assert out.startswith(f"wrote {workdir / 'a.txt'} (lightgbm): LambdaMARTRanker")
    scores = lightgbm.Booster(model_file=str(workdir / "a.txt")).predict(X_test)
    np.testing.assert_allclose(scores, api.predict(X_test), rtol=1e-12,
                               atol=1e-12 * np.abs(scores).max())
    code, _, err = run_here(["export", path, "--format", "xgboost", "-o", workdir / "a.json"],
                            capsys)
    assert code == 0, err
    booster = xgboost.Booster(model_file=str(workdir / "a.json"))
    X32 = X_test.astype(np.float32)
    scores = booster.predict(xgboost.DMatrix(X32), output_margin=True)
    np.testing.assert_allclose(scores, api.predict(X32.astype(np.float64)), rtol=1e-5,
                               atol=1e-5 * np.abs(scores).max())


def test_export_every_format_with_names_and_options(models, workdir, capsys):
    path, api, _ = models["b"]
    names = workdir / "names.txt"
    names.write_text("".join(f"feature_{i}\n" for i in range(api.n_features_in_)))
    formats = ["lightgbm", "lightgbm-json", "xgboost", "xgboost-dump", "ranklib", "solr"]
    if importlib.util.find_spec("onnx") is not None:
        formats.append("onnx")
    for format in formats:
        out_path = workdir / f"b.{format}"
        code, _, err = run_here(["export", path, "--format", format, "-o", out_path,
                                 "--feature-names", names], capsys)
        assert code == 0, (format, err)
        assert out_path.stat().st_size > 0
        if format != "onnx":
            assert "feature_3" in out_path.read_text() or format == "ranklib", format
    code, _, err = run_here(["export", path, "--format", "solr", "-o", workdir / "s.json",
                             "--option", "name=my-ranker"], capsys)
    assert code == 0, err
    assert '"my-ranker"' in (workdir / "s.json").read_text()


def test_export_errors_exit_2_with_one_line(models, workdir, capsys):
    path, _, _ = models["a"]
    err = _one_line_error(*run_here(["export", path, "--format", "lightgbm", "-o",
                                     workdir / "x", "--option", "name=x"], capsys)[::2])
    assert "format 'lightgbm' takes the options none; got ['name']" in err
    err = _one_line_error(*run_here(["export", workdir / "missing.model", "--format",
                                     "lightgbm", "-o", workdir / "x"], capsys)[::2])
    assert "missing.model" in err
    code, out, _ = run_here(["export", "--help"], capsys)
    assert code == 0 and "missing_as=VALUE" in out and "xgboost-dump" in out


# -- pipelines saved with save_model ---------------------------------------------------


@pytest.fixture(scope="module")
def pipeline_models(workdir, fold1):
    """Pipelines saved with save_model, and the fitted pipelines: scaler + LambdaMART on
    arrays, and (with pandas) imputer + XE-NDCG on to_frame(X, qid) behind exclude_qid."""
    pytest.importorskip("skops", reason="pipeline files need skops")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_ltr import save_model

    (X, y, qid), _, _ = fold1
    X = X.toarray()  # StandardScaler centers only arrays
    pipe = make_pipeline(StandardScaler(), LambdaMARTRanker(random_state=0, **PARAMS_A))
    pipe.fit(X, y, lambdamartranker__qid=qid)
    save_model(pipe, workdir / "pipe.model")
    models = {"array": (workdir / "pipe.model", pipe)}
    try:
        import pandas  # noqa: F401
    except ImportError:
        return models
    from sklearn.impute import SimpleImputer

    from sklearn_ltr.compose import exclude_qid
    from sklearn_ltr.datasets import to_frame

    frame_pipe = make_pipeline(exclude_qid(SimpleImputer()),
                               XENDCGRanker(random_state=0, **PARAMS_B))
    frame_pipe.fit(to_frame(X, qid), y)
    save_model(frame_pipe, workdir / "pipe_frame.model")
    models["frame"] = (workdir / "pipe_frame.model", frame_pipe)
    return models


def test_predict_with_a_saved_pipeline_writes_the_pipeline_scores(s5, pipeline_models, workdir,
                                                                  capsys):
    path, pipe = pipeline_models["array"]
    code, _, err = run(["predict", path, s5, "-o", "pipe_scores.txt"], workdir)
    assert code == 0, err
    X, _, qid = load_svmlight_ranking(s5, n_features=pipe.n_features_in_)
    with open(workdir / "pipe_scores.txt") as fh:
        scores = np.array([float(line) for line in fh])
    # Rows reach a pipeline as a dense array (StandardScaler cannot center sparse ones).
    assert scores.tobytes() == pipe.predict(X.toarray()).tobytes()
    code, out, err = run_here(["predict", path, s5, "-o", "-", "--rankings"], capsys)
    assert code == 0, err
    ranks = pipe[-1].rank(pipe[:-1].transform(X.toarray()), qid=qid)
    for q, rank, row, _, score in (line.split("\t") for line in out.splitlines()[1:]):
        assert int(rank) == ranks[int(row)] and float(score) == scores[int(row)]


def test_predict_gives_a_frame_pipeline_its_frame(s5, pipeline_models, capsys):
    if "frame" not in pipeline_models:
        pytest.skip(reason="the frame pipeline needs pandas")
    from sklearn_ltr.datasets import to_frame

    path, pipe = pipeline_models["frame"]
    code, out, err = run_here(["predict", path, s5, "-o", "-"], capsys)
    assert code == 0, err
    X, _, qid = load_svmlight_ranking(s5, n_features=pipe.n_features_in_ - 1)
    expected = pipe.predict(to_frame(X, qid))
    assert np.array([float(s) for s in out.split()]).tobytes() == expected.tobytes()


def test_evaluate_and_compare_saved_pipelines_match_the_python_metrics(s5, pipeline_models,
                                                                       workdir, fold1, capsys):
    path, pipe = pipeline_models["array"]
    X, y, qid = fold1[2]
    expected = _api_metrics(y, pipe.predict(X.toarray()), qid, max_grade=2)
    code, out, err = run_here(["evaluate", path, s5, "--per-query", workdir / "pipe_pq.tsv"],
                              capsys)
    assert code == 0, err
    assert (f"model A: {path} (Pipeline(standardscaler -> lambdamartranker): "
            f"LambdaMARTRanker, {pipe[-1].n_iter_} trees, {X.shape[1]} features)") in out
    header, rows = _read_tsv(workdir / "pipe_pq.tsv")
    for j, (name, values) in enumerate(expected.items()):
        np.testing.assert_array_equal([float(r[3 + j]) for r in rows], values, err_msg=name)
        assert _table(out)[name] == [name, f"{np.mean(values):.4f}"]
    if "frame" not in pipeline_models:
        return
    from sklearn_ltr.datasets import to_frame

    path_b, pipe_b = pipeline_models["frame"]
    code, out, err = run_here(["evaluate", path, s5, "--compare", path_b], capsys)
    assert code == 0, err
    b = _api_metrics(y, pipe_b.predict(to_frame(X, qid)), qid, max_grade=2)
    assert "Pipeline(columntransformer -> xendcgranker): XENDCGRanker" in out
    for name, fields in _table(out).items():
        assert fields[1:4] == [f"{np.mean(expected[name]):.4f}", f"{np.mean(b[name]):.4f}",
                               f"{np.mean(b[name]) - np.mean(expected[name]):+.4f}"]


def test_pickle_and_joblib_models_are_refused_with_the_reason(s5, models, workdir, capsys):
    import joblib

    path, api, _ = models["a"]
    joblib.dump(api, workdir / "a.joblib", compress=3)
    for command in (["predict", workdir / "a.joblib", s5, "-o", "-"],
                    ["evaluate", workdir / "a.joblib", s5]):
        err = _one_line_error(*run_here(command, capsys)[::2])
        assert "a.joblib: it looks like a zlib-compressed pickle file" in err
        assert "loading a pickle can run arbitrary code" in err
        assert "sklearn_ltr.save_model(model, path)" in err


def test_a_pipeline_model_without_skops_exits_2_saying_how_to_install_it(s5, 
        pipeline_models, capsys, monkeypatch):
    import sys as _sys

    path, _ = pipeline_models["array"]
    monkeypatch.setitem(_sys.modules, "skops", None)
    monkeypatch.setitem(_sys.modules, "skops.io", None)
    err = _one_line_error(*run_here(["predict", path, s5, "-o", "-"], capsys)[::2])
    assert f"Cannot load model file {path}" in err and "pip install skops" in err


def test_version_and_the_console_script_name_themselves(workdir):
    import shutil

    import sklearn_ltr

    code, out, err = run(["--version"], workdir)
    assert code == 0 and out.strip() == f"sklearn-ltr {sklearn_ltr.__version__}"
    script = shutil.which("sklearn-ltr") or os.path.join(os.path.dirname(sys.executable),
                                                         "sklearn-ltr")
    if not os.path.exists(script):
        pytest.skip(reason="the sklearn-ltr console script is not installed")
    done = subprocess.run([script, "fit"], capture_output=True, text=True, cwd=workdir)
    assert done.returncode == 2 and done.stderr.startswith("usage: sklearn-ltr fit")


def test_export_refuses_a_pipeline_file_in_one_line(workdir, capsys):
    pytest.importorskip("skops")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_ltr import save_model
    from sklearn_ltr.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=10, docs_per_query=8, n_features=4, random_state=0)
    pipe = make_pipeline(StandardScaler(), LambdaMARTRanker(n_estimators=2, random_state=0))
    pipe.fit(X, y, lambdamartranker__qid=qid)
    save_model(pipe, workdir / "pipe.model")
    err = _one_line_error(*run_here(["export", workdir / "pipe.model", "--format", "lightgbm",
                                     "-o", workdir / "pipe.txt"], capsys)[::2])
    assert "holds a Pipeline (standardscaler -> lambdamartranker)" in err


def test_fit_reads_positions_for_click_debiasing(workdir, capsys):
    from sklearn.datasets import dump_svmlight_file

    from sklearn_ltr.datasets import make_ranking, simulate_clicks

    X, y, qid = make_ranking(n_queries=30, docs_per_query=20, n_features=5, random_state=0)
    log = simulate_clicks(y.astype(int), qid, scores=y.astype(float), score_noise=1.0,
                          n_sessions=4, k=10, max_label=4, random_state=0)
    Xc, click, session, position = X[log.row], log.click, log.session, log.position
    train = workdir / "clicks.txt"
    dump_svmlight_file(Xc, click, str(train), query_id=session, zero_based=False)
    positions = workdir / "clicks.position"
    positions.write_text("".join(f"{p}\n" for p in position))
    params = dict(n_estimators=4, early_stopping=False, random_state=0,
                  position_debiasing="additive")
    out_model = workdir / "additive.model"
    code, _, err = run_here(["fit", train, "-o", out_model, "--position-file", positions]
                            + _param_args(params), capsys)
    assert code == 0, err
    X_read, click_read, session_read = load_svmlight_ranking(train, n_features=5)
    api = LambdaMARTRanker(**params).fit(X_read, click_read, qid=session_read, position=position)
    loaded = load_model(out_model)
    np.testing.assert_array_equal(loaded.position_offset_, api.position_offset_)
    np.testing.assert_array_equal(loaded.predict(X_read), api.predict(X_read))
    # Positions without a method to read them, and a file of the wrong length.
    plain = _param_args(dict(n_estimators=2))
    err = _one_line_error(*run_here(["fit", train, "-o", workdir / "never.model",
                                     "--position-file", positions] + plain, capsys)[::2])
    assert "position_debiasing" in err and "ignored" in err
    short = workdir / "short.position"
    short.write_text("1\n2\n")
    err = _one_line_error(*run_here(["fit", train, "-o", workdir / "never.model",
                                     "--position-file", short] + _param_args(params),
                                    capsys)[::2])
    assert "has 2 value(s)" in err and f"{click.size} rows" in err
    zero_based = workdir / "zero_based.position"
    zero_based.write_text("".join(f"{p - 1}\n" for p in position))
    err = _one_line_error(*run_here(["fit", train, "-o", workdir / "never.model",
                                     "--position-file", zero_based] + _param_args(params),
                                    capsys)[::2])
    assert f"{zero_based} holds 0: positions are 1-based" in err and "add 1" in err


def test_fit_declares_categorical_columns_and_target_statistics(workdir, capsys):
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(40), 15)
    category = rng.integers(0, 50, qid.shape[0])
    X = np.column_stack([rng.normal(size=qid.shape[0]), category + 1.0])
    y = np.clip(np.round(rng.normal(size=50)[category] + 1.5), 0, 4)
    train = workdir / "categories.txt"
    dump_svmlight_file(X, y, str(train), query_id=qid, zero_based=False)
    params = dict(n_estimators=4, early_stopping=False, random_state=0)
    out_model = workdir / "statistics.model"
    code, _, err = run_here(["fit", train, "-o", out_model, "--param", "categorical_features=1",
                             "--param", "target_statistics=ordered"]
                            + _param_args(params), capsys)
    assert code == 0, err
    X_read, y_read, qid_read = load_svmlight_ranking(train, n_features=2)
    api = LambdaMARTRanker(categorical_features=[1], target_statistics="ordered",
                           **params).fit(X_read, y_read, qid=qid_read)
    loaded = load_model(out_model)
    assert loaded.get_params()["categorical_features"] == [1]
    np.testing.assert_array_equal(loaded.predict(X_read), api.predict(X_read))


@pytest.mark.parametrize("word, ours", [("train", "fit"), ("task=train", "fit"),
                                        ("task=predict", "predict"), ("test", "evaluate"),
                                        ("task=convert_model", "export")])
def test_other_tools_command_words_name_ours(word, ours, capsys):
    err = _one_line_error(*run_here([word, "data.txt"], capsys)[::2])
    assert f"'{word}' is not a command here; did you mean '{ours}'?" in err
    assert run_here([ours, "--help"], capsys)[0] == 0
