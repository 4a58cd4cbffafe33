"""``benchmarks/replicate_cross_entropy.py --paper-settings`` run as a user
runs it, on two small LETOR folds written here.

Oracles: the normal-approximation interval written out by hand from the
per-trial NDCG the script logs, and the split's definition (disjoint query
sets of 60/20/20 %, rows kept whole, labels kept with their rows: on a fold
whose only feature is the label every model must rank every test query
perfectly).
"""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPOSITORY

import sklearn_ltr

SCRIPT = REPOSITORY / "benchmarks" / "replicate_cross_entropy.py"
QUERIES, DOCS = 100, 10


def _write_fold(directory, first_qid, labels, feature):
    """Fold files of QUERIES queries (60/20/20 into train/vali/test), each
    with DOCS documents of ``labels``; ``feature(labels)`` gives the one
    feature."""
    directory.mkdir(parents=True)
    qids = np.arange(first_qid, first_qid + QUERIES)
    for name, chosen in (("train", qids[:60]), ("vali", qids[60:80]), ("test", qids[80:])):
        lines = []
        for q in chosen:
            for label, value in zip(labels, feature(labels)):
                lines.append(f"{label:g} qid:{q} 1:{value:.6f}")
        (directory / f"{name}.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The script's log and report of a --quick --paper-settings run with 3
    trials on folds 1 (the feature is the label) and 2 (fewer relevant
    documents, the label plus noise). Every query has a relevant document,
    so none is skipped."""
    for module in ("matplotlib", "scipy"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"the benchmark needs {module}: pip install sklearn-ltr[bench]")
    data, out = tmp_path_factory.mktemp("letor"), tmp_path_factory.mktemp("out")
    _write_fold(data / "Fold1", 1, np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 2.0]), lambda y: y)
    noise = np.random.default_rng(0)
    _write_fold(data / "Fold2", 1001, np.array([0, 0, 0, 0, 0, 0, 0, 1, 1, 2.0]),
                lambda y: y + noise.normal(0.0, 1.5, y.size))
    # The script imports the sklearn_ltr these tests import.
    path = [str(Path(sklearn_ltr.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--paper-settings", "--quick", "--trials", "3",
         "--folds", "1", "2", "--data", str(data), "--out", str(out)],
        capture_output=True, text=True, cwd=REPOSITORY, timeout=1200,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, path))},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, (out / "cross_entropy_paper_settings.md").read_text()


def _logged_ndcg(log, prefix):
    """{model: [(NDCG@5, NDCG@10) per trial]} from the log lines of ``prefix``."""
    found = {}
    for name, at5, at10 in re.findall(
            rf"{prefix} trial \d+ (.+?) +trees +\d+ NDCG@5 ([\d.]+) @10 ([\d.]+)", log):
        found.setdefault(name, []).append((float(at5), float(at10)))
    return found


def _table(report, heading):
    """{model: (mean@5, half@5, mean@10, half@10)} of the first table after
    ``heading``, in NDCG points as written."""
    table = report.split(heading, 1)[1].strip().split("\n\n", 1)[0]
    rows = re.findall(r"^\| (.+?)(?: \(ours\))? \| ([\d.]+) \(±([\d.]+)\) \| "
                      r"([\d.]+) \(±([\d.]+)\) \|", table, re.M)
    return {name: tuple(float(v) for v in values) for name, *values in rows}


def test_each_trial_splits_whole_queries_60_20_20(run):
    log, report = run
    splits = re.findall(r"trial (\d+): train / validation / test (\d+) / (\d+) / (\d+) of (\d+) "
                        r"queries, (\d+) / (\d+) / (\d+) of (\d+) rows", log)
    assert [int(s[0]) for s in splits] == [0, 1, 2]
    for _, *counts in splits:
        queries, total_queries = [int(c) for c in counts[:3]], int(counts[3])
        rows, total_rows = [int(c) for c in counts[4:7]], int(counts[7])
        assert (queries, total_queries) == ([60, 20, 20], QUERIES)
        # Disjoint and whole: the parts add up, and every query brings all its rows.
        assert (rows, total_rows) == ([60 * DOCS, 20 * DOCS, 20 * DOCS], QUERIES * DOCS)
    assert f"split of MQ2008's {QUERIES} queries" in report


def test_labels_stay_with_their_rows(run):
    # Fold 1's only feature is the label, so a split that kept X, y and qid
    # aligned lets every model rank every test query perfectly.
    log, _ = run
    www = _logged_ndcg(log, "WWW2020")
    assert len(www) == 5 and all(len(trials) == 3 for trials in www.values())
    assert {value for trials in www.values() for pair in trials for value in pair} == {1.0}


@pytest.mark.parametrize("labels", ["graded", "binary"])
def test_intervals_are_mean_plus_minus_196_standard_errors(run, labels):
    log, report = run
    logged = _logged_ndcg(log, f"ICTIR2019 {labels}")
    table = _table(report, f"### {labels.capitalize()} labels")
    assert set(table) == set(logged) and len(table) == 4
    spread = []
    for name, trials in logged.items():
        values = np.array(trials)  # (folds, cutoffs)
        assert values.shape == (2, 2)
        for c in range(2):
            col = values[:, c]
            sd = np.sqrt(((col - col.mean()) ** 2).sum() / (len(col) - 1))
            # The log has 4 decimals, the table 2 of NDCG points.
            assert table[name][2 * c] == pytest.approx(100 * col.mean(), abs=0.011)
            assert table[name][2 * c + 1] == pytest.approx(100 * 1.96 * sd / np.sqrt(len(col)),
                                                           abs=0.02)
            spread.append(abs(col[0] - col[1]))
    # Folds far enough apart that another formula (ddof=0, another z)
    # would miss the tolerance.
    assert max(spread) > 0.05
