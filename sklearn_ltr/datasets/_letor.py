"""LETOR-style cross-validation folds (MQ2007/2008, MSLR-WEB10K/30K, Yahoo-like).

Two directory layouts are in use. The published layout has ``Fold1/`` ...
``Fold5/`` subdirectories with ``train.txt``, ``vali.txt`` and ``test.txt``.
The compact layout keeps only the five parts ``S1.txt`` ... ``S5.txt``, from
which every fold is a rotation (LETOR 4.0 ``readme.txt``): fold K trains on
S(K), S(K+1), S(K+2), validates on S(K+3) and tests on S(K+4), indices taken
modulo 5, so Fold1 = train S1, S2, S3 / vali S4 / test S5.
"""

import numbers
import os

import numpy as np
import scipy.sparse as sp

from ._svmlight import load_svmlight_ranking_files

__all__ = ["load_letor_folds"]

_SUFFIXES = ("", ".gz", ".bz2")


def _find(directory, stem):
    """Path of ``stem`` in ``directory``, plain or compressed, else None."""
    for suffix in _SUFFIXES:
        candidate = os.path.join(directory, stem + suffix)
        if os.path.isfile(candidate):
            return candidate
    return None


def _fold_parts(fold):
    """Indices (1..5) of the S parts making up train, vali and test of a fold."""
    parts = [(fold - 1 + shift) % 5 + 1 for shift in range(5)]
    return parts[:3], parts[3], parts[4]


def load_letor_folds(path, fold, *, n_features=None, dtype=np.float64, as_dense=False):
    """Load the train, validation and test sets of one LETOR fold.

    Parameters
    ----------
    path : str or path-like
        A LETOR dataset directory, either with ``Fold1/`` ... ``Fold5/``
        subdirectories holding ``train.txt``, ``vali.txt`` and ``test.txt``,
        or with the five parts ``S1.txt`` ... ``S5.txt``. Files may be
        ``.gz`` or ``.bz2`` compressed. The ``FoldK/`` layout is used when
        that subdirectory exists.
    fold : int in 1..5
        The fold number. With the S layout, fold K trains on S(K), S(K+1),
        S(K+2) (concatenated in that order), validates on S(K+3) and tests on
        S(K+4), indices modulo 5.
    n_features : int, default=None
        Number of columns. Default: the largest feature index in the files
        read (all five S files, or the fold's three files), so train,
        validation and test always have the same columns.
    dtype : numpy dtype, default=np.float64
        Dtype of ``X``.
    as_dense : bool, default=False
        Return ``X`` as dense ndarrays instead of CSR matrices. LETOR
        features are mostly non-zero, so dense arrays are usually smaller
        and faster to fit on; the default keeps what the parser returns.

    Returns
    -------
    (X_train, y_train, qid_train), (X_vali, y_vali, qid_vali), (X_test, y_test, qid_test)
        ``X`` of shape (n_samples, n_features) (CSR matrix, or ndarray with
        ``as_dense=True``), ``y`` float64 labels, ``qid`` int64 query ids as
        written in the files.

    Raises
    ------
    ValueError
        If ``fold`` is not an integer from 1 to 5.
    FileNotFoundError
        If ``path`` holds neither layout.

    Examples
    --------
    >>> from sklearn_ltr.datasets import load_letor_folds
    >>> train, vali, test = load_letor_folds("MQ2008", 1)  # doctest: +SKIP
    >>> X_train, y_train, qid_train = train  # doctest: +SKIP
    """
    if isinstance(fold, bool) or not isinstance(fold, numbers.Integral) or not (
        1 <= fold <= 5
    ):
        raise ValueError(f"fold must be an integer from 1 to 5; got {fold!r}.")
    fold = int(fold)
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise FileNotFoundError(f"LETOR directory {path!r} does not exist.")

    fold_dir = os.path.join(path, f"Fold{fold}")
    if os.path.isdir(fold_dir):
        files = [_find(fold_dir, stem) for stem in ("train.txt", "vali.txt", "test.txt")]
        if None in files:
            missing = [s for s, f in zip(("train", "vali", "test"), files) if f is None]
            raise FileNotFoundError(
                f"{fold_dir} lacks {', '.join(m + '.txt' for m in missing)} "
                "(plain, .gz or .bz2)."
            )
        loaded = load_svmlight_ranking_files(files, n_features=n_features, dtype=dtype)
        sets = [tuple(loaded[i : i + 3]) for i in (0, 3, 6)]
    else:
        s_files = [_find(path, f"S{k}.txt") for k in range(1, 6)]
        if None in s_files:
            raise FileNotFoundError(
                f"{path} has neither a Fold{fold}/ directory (train.txt, vali.txt, "
                "test.txt) nor all five parts S1.txt ... S5.txt (plain, .gz or .bz2)."
            )
        # All five parts are needed by every fold; reading them together also
        # fixes n_features and 0/1-based indexing the same way for each fold.
        loaded = load_svmlight_ranking_files(s_files, n_features=n_features, dtype=dtype)
        parts = {k: tuple(loaded[3 * (k - 1) : 3 * k]) for k in range(1, 6)}
        train_parts, vali_part, test_part = _fold_parts(fold)
        train = (
            sp.vstack([parts[k][0] for k in train_parts], format="csr"),
            np.concatenate([parts[k][1] for k in train_parts]),
            np.concatenate([parts[k][2] for k in train_parts]),
        )
        sets = [train, parts[vali_part], parts[test_part]]
    if as_dense:
        sets = [(X.toarray(), y, qid) for X, y, qid in sets]
    return tuple(sets)
