"""A small real ranking dataset shipped with the package.

The data is LightGBM's LambdaRank example (``examples/lambdarank`` in
microsoft/LightGBM, MIT License, Copyright (c) Microsoft Corporation; see
``data/LICENSE_LightGBM.txt``). Its origin is not documented, so treat it as
real but anonymised data for examples and tests, not as a named benchmark.
"""

import gzip
from importlib import resources

from ._svmlight import load_svmlight_ranking_files

__all__ = ["load_example"]

_N_FEATURES = 300


def load_example(*, as_dense=True):
    """Load the bundled LightGBM LambdaRank example (201 + 50 queries, 300 features).

    The training set has 3,005 documents in 201 queries and the test set
    768 documents in 50 queries; labels are graded 0-4. The files carry no
    ``qid:``, so queries are numbered ``0 .. n_queries - 1`` in file order,
    separately for each set, from the accompanying ``.query`` size files.

    Parameters
    ----------
    as_dense : bool, default=True
        Return ``X`` as dense ndarrays (about 7 MB for the training set);
        ``False`` returns CSR matrices.

    Returns
    -------
    (X_train, y_train, qid_train), (X_test, y_test, qid_test)
        ``X`` of shape (n_samples, 300), ``y`` float64 labels, ``qid`` int64.

    Examples
    --------
    >>> from sklearn_ltr.datasets import load_example
    >>> (X_train, y_train, qid_train), (X_test, y_test, qid_test) = load_example()
    >>> X_train.shape, X_test.shape
    ((3005, 300), (768, 300))
    >>> int(qid_train.max()) + 1, int(qid_test.max()) + 1
    (201, 50)
    """
    data = resources.files(__package__).joinpath("data")
    with (
        data.joinpath("rank.train.gz").open("rb") as train_raw,
        data.joinpath("rank.test.gz").open("rb") as test_raw,
        gzip.GzipFile(fileobj=train_raw, mode="rb") as train_fh,
        gzip.GzipFile(fileobj=test_raw, mode="rb") as test_fh,
        data.joinpath("rank.train.query").open("rb") as train_query,
        data.joinpath("rank.test.query").open("rb") as test_query,
    ):
        X_tr, y_tr, q_tr, X_te, y_te, q_te = load_svmlight_ranking_files(
            [train_fh, test_fh],
            n_features=_N_FEATURES,
            zero_based=False,
            query_files=[train_query, test_query],
        )
    if as_dense:
        X_tr, X_te = X_tr.toarray(), X_te.toarray()
    return (X_tr, y_tr, q_tr), (X_te, y_te, q_te)
