"""Tests for sklearn_ltr.datasets: file formats, qid layouts, LETOR folds, synthetic data."""

import bz2
import filecmp
import gzip
import io
import os
import shutil

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.datasets import load_svmlight_file

from sklearn_ltr.datasets import (
    dump_svmlight_ranking,
    group_sizes,
    load_example,
    load_letor_folds,
    load_svmlight_ranking,
    load_svmlight_ranking_files,
    make_ranking,
    qid_from_group_sizes,
    sort_by_qid,
    to_frame,
)

BUNDLED = os.path.join(
    os.path.dirname(__import__("sklearn_ltr.datasets").datasets.__file__), "data"
)


def _direct(path, **kw):
    """Oracle: scikit-learn's own parser (query_id=True) on the decompressed file."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as fh:
        return load_svmlight_file(fh, **kw)


def _assert_csr_equal(A, B):
    assert A.shape == B.shape
    assert (sp.csr_matrix(A) != sp.csr_matrix(B)).nnz == 0


def _random_ranking(rng, n=60, d=7, decimals=None):
    X = rng.standard_normal((n, d))
    X[rng.random((n, d)) < 0.5] = 0.0
    X[:, 0] = 0.0  # leading and trailing all-zero columns test index handling
    X[:, -1] = 0.0
    if decimals is not None:
        X = np.round(X, decimals)
    y = rng.integers(0, 5, n).astype(np.float64)
    qid = rng.choice([3, 17, 4, 250], size=n)  # unsorted, non-contiguous
    return X, y, qid


# --------------------------------------------------------------------------- svmlight


@pytest.mark.parametrize("part", ["S1", "S5"])
def test_load_matches_sklearn_direct_parse(mq2008_dir, part):
    path = os.path.join(mq2008_dir, f"{part}.txt.gz")
    X, y, qid = load_svmlight_ranking(path)
    X2, y2, qid2 = _direct(path, query_id=True)
    _assert_csr_equal(X, X2)
    assert_array_equal(y, y2)
    assert_array_equal(qid, qid2)
    assert qid.dtype == np.int64 and sp.issparse(X) and X.format == "csr"


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("zero_based", [False, True])
def test_dump_load_round_trip(tmp_path, sparse, zero_based):
    rng = np.random.default_rng(0)
    X, y, qid = _random_ranking(rng, decimals=6)
    Xin = sp.csr_matrix(X) if sparse else X
    path = tmp_path / "data.txt"
    dump_svmlight_ranking(Xin, y, qid, str(path), zero_based=zero_based, comment="hi\nthere")
    X2, y2, qid2 = load_svmlight_ranking(path, n_features=X.shape[1], zero_based=zero_based)
    assert_array_equal(X2.toarray(), X)
    assert_array_equal(y2, y)
    assert_array_equal(qid2, qid)


@pytest.mark.parametrize("sparse", [False, True])
def test_dump_refuses_missing_values(sparse):
    X, y, qid = _random_ranking(np.random.default_rng(2), decimals=6)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        dump_svmlight_ranking(sp.csr_matrix(X) if sparse else X, y, qid, io.BytesIO())


def test_round_trip_full_precision_float64_and_exact_float32():
    rng = np.random.default_rng(1)
    X, y, qid = _random_ranking(rng)
    buf = io.BytesIO()
    dump_svmlight_ranking(X, y, qid, buf)
    X2, _, qid2 = load_svmlight_ranking(io.BytesIO(buf.getvalue()), n_features=X.shape[1])
    # sklearn writes 16 significant digits: float64 comes back to within 1e-15.
    np.testing.assert_allclose(X2.toarray(), X, rtol=1e-15, atol=0)
    assert_array_equal(qid2, qid)
    X32 = X.astype(np.float32)
    buf = io.BytesIO()
    dump_svmlight_ranking(X32, y, qid, buf)
    X3, _, _ = load_svmlight_ranking(
        io.BytesIO(buf.getvalue()), n_features=X.shape[1], dtype=np.float32
    )
    assert X3.dtype == np.float32
    assert_array_equal(X3.toarray(), X32)


@pytest.mark.parametrize("compress", ["gz", "bz2"])
def test_compressed_paths(tmp_path, compress):
    rng = np.random.default_rng(2)
    X, y, qid = _random_ranking(rng, decimals=4)
    buf = io.BytesIO()
    dump_svmlight_ranking(X, y, qid, buf)
    path = tmp_path / f"data.txt.{compress}"
    opener = gzip.open if compress == "gz" else bz2.open
    with opener(path, "wb") as fh:
        fh.write(buf.getvalue())
    X2, y2, qid2 = load_svmlight_ranking(str(path), n_features=X.shape[1])
    assert_array_equal(X2.toarray(), X)
    assert_array_equal(qid2, qid)


def test_comments_blank_lines_and_text_mode():
    text = "# header line\n\n2 qid:5 1:1.5 3:2 # doc a\n0 qid:5 2:1\n\n1 qid:-2 1:3\n"
    X, y, qid = load_svmlight_ranking(io.StringIO(text))
    X2, y2, qid2 = load_svmlight_file(io.BytesIO(text.encode()), query_id=True)
    _assert_csr_equal(X, X2)
    assert_array_equal(y, y2)
    assert_array_equal(qid, [5, 5, -2])
    assert_array_equal(qid, qid2)


def test_load_files_aligns_n_features():
    a = io.BytesIO(b"1 qid:1 1:1 9:2\n0 qid:1 2:1\n")
    b = io.BytesIO(b"2 qid:7 3:1\n")
    X1, y1, q1, X2, y2, q2 = load_svmlight_ranking_files([a, b])
    assert X1.shape == (2, 9) and X2.shape == (1, 9)
    assert X2[0, 2] == 1.0  # 1-based index 3 -> column 2 in both files
    assert_array_equal(q2, [7])


@pytest.mark.parametrize(
    "name, n_queries, n_docs", [("rank.train", 201, 3005), ("rank.test", 50, 768)]
)
def test_lightgbm_query_file(example_dir, name, n_queries, n_docs):
    path = os.path.join(example_dir, name + ".gz")
    query = os.path.join(example_dir, name + ".query")
    X, y, qid = load_svmlight_ranking(path, n_features=300, query_file=query)
    # Oracle: the README's direct recipe.
    X2, y2 = _direct(path, n_features=300)
    sizes = np.loadtxt(query, dtype=int)
    _assert_csr_equal(X, X2)
    assert_array_equal(y, y2)
    assert_array_equal(qid, np.repeat(np.arange(len(sizes)), sizes))
    assert X.shape == (n_docs, 300) and np.unique(qid).size == n_queries


def test_no_qid_and_no_query_file_raises():
    with pytest.raises(ValueError, match="no 'qid:'.*query_file="):
        load_svmlight_ranking(io.BytesIO(b"1 1:2\n0 2:1\n"))


def test_query_file_from_file_object_and_errors():
    data = b"1 1:2\n0 2:1\n2 1:1\n"
    X, y, qid = load_svmlight_ranking(io.BytesIO(data), query_file=io.StringIO("2\n1\n"))
    assert_array_equal(qid, [0, 0, 1])
    with pytest.raises(ValueError, match="add up to 4 rows.*has 3 rows"):
        load_svmlight_ranking(io.BytesIO(data), query_file=io.StringIO("2\n2\n"))
    with pytest.raises(ValueError, match="positive"):
        load_svmlight_ranking(io.BytesIO(data), query_file=io.StringIO("3\n0\n"))


def test_query_file_must_agree_with_qid():
    data = b"1 qid:4 1:2\n0 qid:4 2:1\n2 qid:9 1:1\n"
    _, _, qid = load_svmlight_ranking(io.BytesIO(data), query_file=io.StringIO("2\n1\n"))
    assert_array_equal(qid, [4, 4, 9])  # the file's own ids are kept
    with pytest.raises(ValueError, match="disagree"):
        load_svmlight_ranking(io.BytesIO(data), query_file=io.StringIO("1\n2\n"))


def test_lines_without_qid_among_lines_with_qid_raise():
    with pytest.raises(ValueError, match="line 2: no 'qid:' entry.*1 of 3 data lines"):
        load_svmlight_ranking(io.BytesIO(b"1 qid:1 1:2\n0 2:1\n1 qid:2 1:1\n"))


def test_non_integer_qid_raises():
    with pytest.raises(ValueError, match="line 2: qid 'x7' is not an integer"):
        load_svmlight_ranking(io.BytesIO(b"1 qid:1 1:2\n0 qid:x7 2:1\n"))


def test_parse_error_names_file(tmp_path):
    path = tmp_path / "broken.txt"
    path.write_bytes(b"1 qid:1 1:2\n1 qid:1 1:2\nnot_a_label qid:1 1:2\n")
    with pytest.raises(ValueError, match=r"broken\.txt.*line 3"):
        load_svmlight_ranking(path)


def test_missing_file_raises(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        load_svmlight_ranking(tmp_path / "nope.txt")


def test_dump_rejects_non_integer_qid():
    X, y = np.ones((2, 2)), np.zeros(2)
    with pytest.raises(ValueError, match="qid must hold integers"):
        dump_svmlight_ranking(X, y, ["a", "b"], io.BytesIO())
    with pytest.raises(ValueError, match="qid has 3 entries"):
        dump_svmlight_ranking(X, y, [1, 2, 3], io.BytesIO())


# --------------------------------------------------------------------------- qid layouts


def test_group_sizes_hand_computed_and_round_trip():
    assert_array_equal(group_sizes([7, 7, 3, 3, 3, 9]), [2, 3, 1])
    assert_array_equal(group_sizes(np.array(["b", "b", "a"])), [2, 1])
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 9, size=40)
    qid = qid_from_group_sizes(sizes)
    assert_array_equal(qid, np.repeat(np.arange(40), sizes))
    assert_array_equal(group_sizes(qid), sizes)
    assert_array_equal(qid_from_group_sizes(np.array([2.0, 1.0])), [0, 0, 1])


def test_group_sizes_non_contiguous_raises():
    with pytest.raises(ValueError, match="not contiguous.*7.*sort_by_qid"):
        group_sizes([7, 7, 3, 7])


@pytest.mark.parametrize(
    "sizes, match",
    [([2, 0, 1], "positive"), ([3, -1], "positive"), ([1.5, 2], "whole numbers"),
     ([[1, 2]], "1-D"), (["a"], "numeric")],
)
def test_qid_from_group_sizes_rejects_bad_sizes(sizes, match):
    with pytest.raises(ValueError, match=match):
        qid_from_group_sizes(sizes)


def test_sort_by_qid_is_stable_for_dense_sparse_and_others():
    rng = np.random.default_rng(3)
    n = 50
    qid = rng.choice([5, 1, 9], size=n)
    X = rng.standard_normal((n, 3))
    y = np.arange(n)
    w = rng.random(n)
    # Oracle: for each query id in increasing order, its rows in input order.
    expected = [i for q in sorted(set(qid)) for i in range(n) if qid[i] == q]
    Xs, ys, qs, ws, none = sort_by_qid(X, y, qid, w, None)
    assert_array_equal(ys, expected)
    assert_array_equal(Xs, X[expected])
    assert_array_equal(qs, qid[expected])
    assert_array_equal(ws, w[expected])
    assert none is None
    Xsp, _, _ = sort_by_qid(sp.csr_matrix(X), y, qid)
    assert sp.issparse(Xsp)
    assert_array_equal(Xsp.toarray(), X[expected])
    group_sizes(qs)  # sorted rows are contiguous


def test_sort_by_qid_length_mismatch_raises():
    with pytest.raises(ValueError, match="y has 2 rows but qid has 3"):
        sort_by_qid(np.ones((3, 1)), [1, 2], [1, 1, 2])


def test_to_frame():
    pd = pytest.importorskip("pandas")
    X = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]])
    qid = [4, 4, 8]
    df = to_frame(X, qid)
    assert list(df.columns) == ["f0", "f1", "qid"]
    assert_array_equal(df[["f0", "f1"]].to_numpy(), X)
    assert_array_equal(df["qid"], qid)
    dfs = to_frame(sp.csr_matrix(X), qid, feature_names=["bm25", "pr"])
    assert list(dfs.columns) == ["bm25", "pr", "qid"]
    assert_array_equal(dfs[["bm25", "pr"]].to_numpy(), X)  # densified
    dfp = to_frame(pd.DataFrame(X, columns=["a", "b"], index=[10, 11, 12]), qid)
    assert list(dfp.index) == [10, 11, 12] and list(dfp["qid"]) == qid
    with pytest.raises(ValueError, match="feature_names has 1 names"):
        to_frame(X, qid, feature_names=["a"])
    with pytest.raises(ValueError, match="named 'qid'"):
        to_frame(X, qid, feature_names=["qid", "b"])
    with pytest.raises(ValueError, match="qid has 2 entries"):
        to_frame(X, [1, 2])


# --------------------------------------------------------------------------- LETOR folds

# README table: fold -> (train docs, train queries); S part sizes (docs, queries).
FOLD_TRAIN = {1: (9630, 471), 2: (9404, 471), 3: (8643, 470), 4: (8514, 470), 5: (9442, 470)}
S_SIZES = {1: (2933, 157), 2: (3635, 157), 3: (3062, 157), 4: (2707, 157), 5: (2874, 156)}
ROTATION = {1: (1, 4, 5), 2: (2, 5, 1), 3: (3, 1, 2), 4: (4, 2, 3), 5: (5, 3, 4)}


@pytest.mark.parametrize("fold", [1, 2, 3, 4, 5])
def test_letor_s_layout_matches_readme_table(mq2008_dir, fold):
    train, vali, test = load_letor_folds(mq2008_dir, fold)
    first, vali_part, test_part = ROTATION[fold]
    assert (train[0].shape[0], np.unique(train[2]).size) == FOLD_TRAIN[fold]
    assert (vali[0].shape[0], np.unique(vali[2]).size) == S_SIZES[vali_part]
    assert (test[0].shape[0], np.unique(test[2]).size) == S_SIZES[test_part]
    assert train[0].shape[1] == vali[0].shape[1] == test[0].shape[1] == 46
    # Content: the test set is the S file itself, parsed directly by sklearn.
    X, y, qid = _direct(os.path.join(mq2008_dir, f"S{test_part}.txt.gz"), query_id=True)
    _assert_csr_equal(test[0], X)
    assert_array_equal(test[1], y)
    assert_array_equal(test[2], qid)
    # Train starts with S(fold).
    Xf, _, qf = _direct(os.path.join(mq2008_dir, f"S{first}.txt.gz"), query_id=True)
    _assert_csr_equal(train[0][: Xf.shape[0]], Xf)
    assert_array_equal(train[2][: Xf.shape[0]], qf)


def test_letor_fold_dir_layout(tmp_path):
    rng = np.random.default_rng(4)
    written = {}
    for k in range(1, 6):
        d = tmp_path / f"Fold{k}"
        d.mkdir()
        for j, part in enumerate(["train", "vali", "test"]):
            n_feat = 6 if part != "test" else 4  # test lacks the last columns
            X = np.round(rng.random((12, n_feat)) + 0.1, 3)
            y = rng.integers(0, 3, 12).astype(float)
            qid = np.repeat(np.arange(3) + 100 * k + 10 * j, 4)
            written[k, part] = (X, y, qid)
            buf = io.BytesIO()
            dump_svmlight_ranking(X, y, qid, buf)
            if part == "vali":  # mixed plain and compressed files
                with gzip.open(d / "vali.txt.gz", "wb") as fh:
                    fh.write(buf.getvalue())
            else:
                (d / f"{part}.txt").write_bytes(buf.getvalue())
    for k in (1, 3, 5):
        sets = load_letor_folds(tmp_path, k, as_dense=True)
        for (X, y, qid), part in zip(sets, ["train", "vali", "test"]):
            Xw, yw, qw = written[k, part]
            assert isinstance(X, np.ndarray) and X.shape == (12, 6)
            assert_array_equal(X[:, : Xw.shape[1]], Xw)
            assert_array_equal(X[:, Xw.shape[1] :], 0.0)
            assert_array_equal(y, yw)
            assert_array_equal(qid, qw)
    train, _, _ = load_letor_folds(tmp_path, 2)
    assert sp.issparse(train[0])


@pytest.mark.parametrize("fold", [0, 6, -1, 1.0, "1", True, None])
def test_letor_bad_fold_raises(tmp_path, fold):
    with pytest.raises(ValueError, match="fold must be an integer from 1 to 5"):
        load_letor_folds(tmp_path, fold)


def test_letor_missing_layout_raises(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_letor_folds(tmp_path / "absent", 1)
    (tmp_path / "S1.txt").write_bytes(b"1 qid:1 1:1\n")
    with pytest.raises(FileNotFoundError, match="neither a Fold1/"):
        load_letor_folds(tmp_path, 1)
    (tmp_path / "Fold2").mkdir()
    (tmp_path / "Fold2" / "train.txt").write_bytes(b"1 qid:1 1:1\n")
    with pytest.raises(FileNotFoundError, match="lacks vali.txt, test.txt"):
        load_letor_folds(tmp_path, 2)


# --------------------------------------------------------------------------- bundled data


def test_bundled_files_are_the_shared_copies(example_dir):
    for name in ["rank.train.gz", "rank.train.query", "rank.test.gz", "rank.test.query"]:
        assert filecmp.cmp(os.path.join(BUNDLED, name), os.path.join(example_dir, name), shallow=False)
    assert "MIT" in open(os.path.join(BUNDLED, "LICENSE_LightGBM.txt")).read()


def test_load_example_matches_direct_parse(example_dir):
    (X_tr, y_tr, q_tr), (X_te, y_te, q_te) = load_example()
    assert isinstance(X_tr, np.ndarray)
    assert X_tr.shape == (3005, 300) and X_te.shape == (768, 300)
    assert np.unique(q_tr).size == 201 and np.unique(q_te).size == 50
    for X, y, q, name in [(X_tr, y_tr, q_tr, "rank.train"), (X_te, y_te, q_te, "rank.test")]:
        X2, y2 = _direct(os.path.join(example_dir, name + ".gz"), n_features=300)
        sizes = np.loadtxt(os.path.join(example_dir, name + ".query"), dtype=int)
        assert_array_equal(X, X2.toarray())
        assert_array_equal(y, y2)
        assert_array_equal(q, np.repeat(np.arange(sizes.size), sizes))
    (Xs, _, _), _ = load_example(as_dense=False)
    assert sp.issparse(Xs)


def test_load_example_from_a_copy_of_the_package(tmp_path):
    # Works wherever the package is installed: copy it elsewhere and import it.
    import subprocess
    import sys

    import sklearn_ltr

    pkg = os.path.dirname(sklearn_ltr.__file__)
    shutil.copytree(pkg, tmp_path / "sklearn_ltr", ignore=shutil.ignore_patterns("__pycache__"))
    code = (
        "import sklearn_ltr.datasets as d; (a, b, c), (e, f, g) = d.load_example(); "
        "assert d.__file__.startswith(%r); print(a.shape, e.shape)" % str(tmp_path)
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "NUMBA_DISABLE_JIT": "1"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(3005, 300) (768, 300)"


# --------------------------------------------------------------------------- make_ranking


def _ndcg10(y, score, qid):
    """Mean NDCG@10 over queries (exponential gain; all-zero queries count 1)."""
    values = []
    for q in np.unique(qid):
        m = qid == q
        gain = 2.0 ** y[m] - 1
        discount = 1 / np.log2(np.arange(2, m.sum() + 2))
        ideal = (np.sort(gain)[::-1][:10] * discount[:10]).sum()
        if ideal == 0:
            values.append(1.0)
            continue
        order = np.argsort(-score[m], kind="stable")
        values.append((gain[order][:10] * discount[:10]).sum() / ideal)
    return float(np.mean(values))


def test_make_ranking_deterministic_and_seed_dependent():
    a = make_ranking(30, docs_per_query=20, n_features=15, random_state=7)
    b = make_ranking(30, docs_per_query=20, n_features=15, random_state=7)
    c = make_ranking(30, docs_per_query=20, n_features=15, random_state=8)
    for u, v in zip(a, b):
        assert_array_equal(u, v)
    assert a[0].shape != c[0].shape or not np.array_equal(a[0], c[0])
    s1 = make_ranking(30, docs_per_query=20, shuffle_rows=True, random_state=7)
    s2 = make_ranking(30, docs_per_query=20, shuffle_rows=True, random_state=7)
    for u, v in zip(s1, s2):
        assert_array_equal(u, v)


def test_make_ranking_shape_qid_and_dtype():
    X, y, qid = make_ranking(50, docs_per_query=40, n_features=30, random_state=0)
    assert X.shape == (y.shape[0], 30) and X.dtype == np.float64
    assert qid.dtype == np.int64
    assert_array_equal(np.unique(qid), np.arange(50))
    sizes = group_sizes(qid)  # contiguous
    assert np.all(np.diff(qid) >= 0)
    assert sizes.min() >= 20 and sizes.max() <= 60
    assert np.all(np.isfinite(X))
    X32, y32, q32 = make_ranking(5, docs_per_query=2, n_features=3, dtype=np.float32,
                                 random_state=0)
    assert X32.dtype == np.float32 and group_sizes(q32).min() >= 2
    assert set(np.unique(y)) <= {0.0, 1.0, 2.0, 3.0, 4.0}


def test_make_ranking_label_distribution_is_mslr_like():
    _, y, _ = make_ranking(300, docs_per_query=60, n_features=20, random_state=1)
    frac = np.bincount(y.astype(int), minlength=5) / y.size
    target = np.array([0.50, 0.30, 0.15, 0.04, 0.01])
    assert np.all(np.abs(frac - target) < np.array([0.05, 0.05, 0.04, 0.02, 0.008])), frac


def test_make_ranking_feature_variety():
    X, _, _ = make_ranking(60, docs_per_query=50, random_state=2)
    n_distinct = np.array([np.unique(col).size for col in X.T])
    integer_valued = np.all(X == np.round(X), axis=0)
    nonneg = X.min(axis=0) >= 0
    assert np.sum(n_distinct == 2) >= 3  # binary
    assert np.sum((n_distinct >= 3) & (n_distinct <= 6)) >= 3  # few-valued
    assert np.sum(n_distinct > 1000) >= 30  # continuous
    med = np.median(X, axis=0)
    heavy_counts = integer_valued & nonneg & (n_distinct > 6) & (X.max(axis=0) > 10 * (med + 1))
    assert heavy_counts.sum() >= 3


def test_make_ranking_shuffle_and_missing():
    X, y, qid = make_ranking(20, docs_per_query=10, n_features=6, random_state=3)
    Xs, ys, qs = make_ranking(20, docs_per_query=10, n_features=6, shuffle_rows=True,
                              random_state=3)
    assert np.any(np.diff(qs) < 0)
    # Same rows, another order: compare row sets sorted lexicographically.
    rows = np.column_stack([X, y, qid])
    rows_s = np.column_stack([Xs, ys, qs])
    assert_array_equal(rows[np.lexsort(rows.T)], rows_s[np.lexsort(rows_s.T)])
    Xm, ym, qm = make_ranking(20, docs_per_query=10, n_features=6, missing_rate=0.2,
                              random_state=3)
    nan = np.isnan(Xm)
    assert 0.15 < nan.mean() < 0.25
    assert_array_equal(ym, y)
    assert_array_equal(Xm[~nan], X[~nan])


def test_make_ranking_is_learnable_and_nonlinear():
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.linear_model import Ridge

    X, y, qid = make_ranking(300, docs_per_query=40, n_features=40, random_state=0)
    train, test = qid < 200, qid >= 200
    gbdt = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X[train], y[train])
    ndcg_gbdt = _ndcg10(y[test], gbdt.predict(X[test]), qid[test])
    ndcg_random = _ndcg10(y[test], np.random.default_rng(0).random(test.sum()), qid[test])
    ridge = Ridge().fit(X[train], y[train])
    ndcg_linear = _ndcg10(y[test], ridge.predict(X[test]), qid[test])
    assert ndcg_gbdt > ndcg_random + 0.2, (ndcg_gbdt, ndcg_random)
    assert ndcg_gbdt > ndcg_linear + 0.03, (ndcg_gbdt, ndcg_linear)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"n_queries": 0}, "n_queries"), ({"docs_per_query": 1}, "docs_per_query"),
     ({"n_features": 3, "n_informative": 4}, "n_informative=4 exceeds"),
     ({"noise": -1.0}, "noise"), ({"missing_rate": 1.0}, "missing_rate"),
     ({"dtype": np.int64}, "dtype")],
)
def test_make_ranking_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_ranking(**kwargs)


def test_as_dense_feeds_a_scaler_pipeline():
    """load_svmlight_ranking returns CSR, which StandardScaler refuses to
    centre; as_dense=True gives the same values as an array that the
    documented pipeline takes."""
    import io

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_ltr import LambdaMARTRanker
    from sklearn_ltr.datasets import load_svmlight_ranking, load_svmlight_ranking_files

    text = b"".join(
        f"{q % 3} qid:{q // 4} 1:{q * 0.5} 3:{(q * 7) % 5}\n".encode() for q in range(40)
    )
    X_sparse, y, qid = load_svmlight_ranking(io.BytesIO(text))
    X_dense, y2, qid2 = load_svmlight_ranking(io.BytesIO(text), as_dense=True)
    assert isinstance(X_dense, np.ndarray)
    np.testing.assert_array_equal(X_dense, X_sparse.toarray())
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(qid, qid2)
    pipe = make_pipeline(StandardScaler(), LambdaMARTRanker(n_estimators=3, random_state=0))
    with pytest.raises(ValueError, match="Cannot center sparse matrices"):
        pipe.fit(X_sparse, y, lambdamartranker__qid=qid)
    pipe.fit(X_dense, y, lambdamartranker__qid=qid)
    X1, _, _, X2, _, _ = load_svmlight_ranking_files(
        [io.BytesIO(text), io.BytesIO(text)], as_dense=True)
    assert isinstance(X1, np.ndarray) and X1.shape == X2.shape == X_dense.shape
