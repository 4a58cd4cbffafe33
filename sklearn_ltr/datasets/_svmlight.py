"""Reading and writing ranking data in the svmlight / LETOR text format.

Lines look like ``label qid:Q idx:val idx:val ... # comment``. Parsing is done
by scikit-learn's ``load_svmlight_files``. Query ids are collected here, while
scikit-learn's parser reads each line, instead of with its ``query_id=True``:
that option grows the query array one line at a time, which takes quadratic
time (minutes for an MSLR-WEB30K fold).
"""

import bz2
import gzip
import io
import os
from contextlib import ExitStack

import numpy as np
from sklearn.datasets import dump_svmlight_file, load_svmlight_files

from .._queries import check_qid
from ._interop import group_sizes, qid_from_group_sizes

__all__ = [
    "dump_svmlight_ranking",
    "load_svmlight_ranking",
    "load_svmlight_ranking_files",
]


def _open_binary(path):
    """Open a path for binary reading, decompressing by extension (like sklearn)."""
    ext = os.path.splitext(path)[1]
    if ext == ".gz":
        return gzip.open(path, "rb")
    if ext == ".bz2":
        return bz2.open(path, "rb")
    return open(path, "rb")


class _QidRecorder:
    """File-like wrapper that records the ``qid:`` token of each data line.

    scikit-learn's parser only iterates over the lines of a file object that
    has a ``read`` attribute; this wrapper hands it the lines unchanged (text
    lines are encoded, so text-mode files work too) and keeps, per data line,
    the raw qid value or ``None`` when the line has no qid.
    """

    def __init__(self, fh, name):
        self._fh = fh
        self.name = name
        self.qids = []
        self.lineno = 0
        self.started = False
        self.finished = False

    def read(self, *args):  # pragma: no cover - sklearn only iterates
        raise io.UnsupportedOperation("read")

    def __iter__(self):
        self.started = True
        append = self.qids.append
        for line in self._fh:
            self.lineno += 1
            if isinstance(line, str):
                line = line.encode("utf-8")
            parts = line.split(None, 2)
            if parts and b"#" in line:
                # Same rule as the parser: everything after '#' is a comment.
                parts = line.split(b"#", 1)[0].split(None, 2)
            if parts:
                if len(parts) > 1 and parts[1].startswith(b"qid"):
                    append(parts[1].partition(b":")[2])
                else:
                    append(None)
            yield line
        self.finished = True


def _source_name(f):
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f)
    return getattr(f, "name", None) or repr(f)


def _read_query_file(query_file):
    """Group sizes from a LightGBM ``.query`` file (one size per line)."""
    try:
        sizes = np.loadtxt(query_file, dtype=np.float64, ndmin=1)
    except ValueError as exc:
        raise ValueError(
            f"Could not read query sizes from {_source_name(query_file)}: {exc}"
        ) from None
    return sizes


def _qid_for(recorder, n_rows, query_file):
    """Per-row qid from the recorded tokens and/or a query-size file."""
    qids = recorder.qids
    name = recorder.name
    missing = sum(q is None for q in qids)
    if query_file is not None:
        try:
            sizes = _read_query_file(query_file)
            qid_from_file = qid_from_group_sizes(sizes)
        except ValueError as exc:
            raise ValueError(
                f"query_file {_source_name(query_file)} for {name}: {exc}"
            ) from None
        if qid_from_file.shape[0] != n_rows:
            raise ValueError(
                f"query_file {_source_name(query_file)} gives query sizes that add up "
                f"to {qid_from_file.shape[0]} rows, but {name} has {n_rows} rows."
            )
    if n_rows and missing == n_rows:
        if query_file is None:
            hint = ""
            if isinstance(name, str) and os.path.exists(
                os.path.splitext(name)[0] + ".query"
                if name.endswith((".gz", ".bz2"))
                else name + ".query"
            ):
                hint = " (a .query file sits next to it)"
            raise ValueError(
                f"{name} has no 'qid:' entries, so its queries are unknown. Pass "
                f"query_file= a LightGBM-style file of query sizes, one per line{hint}, "
                "or add 'qid:<int>' after the label on every line."
            )
        return qid_from_file
    if missing:
        first = next(i for i, q in enumerate(qids) if q is None)
        raise ValueError(
            f"{name}: {missing} of {n_rows} data lines have no 'qid:' entry (the first "
            f"is data line {first + 1}); every line needs one."
        )
    try:
        qid = np.array(qids, dtype=np.int64)
    except (ValueError, TypeError, OverflowError):
        bad = next(i for i, q in enumerate(qids) if not q.strip().lstrip(b"+-").isdigit())
        raise ValueError(
            f"{name}: data line {bad + 1} has qid {qids[bad].decode(errors='replace')!r}, "
            "which is not an integer."
        ) from None
    if query_file is not None:
        try:
            agree = np.array_equal(group_sizes(qid), sizes)
        except ValueError:  # qid blocks are not contiguous
            agree = False
        if not agree:
            raise ValueError(
                f"{name} has 'qid:' entries that disagree with the query sizes in "
                f"{_source_name(query_file)}; pass only one of them."
            )
    return qid


def load_svmlight_ranking_files(
    files,
    *,
    n_features=None,
    dtype=np.float64,
    zero_based="auto",
    query_files=None,
):
    """Load several svmlight / LETOR ranking files with a common feature count.

    Like :func:`sklearn.datasets.load_svmlight_files`: every ``X`` gets the same
    number of columns, and ``zero_based="auto"`` is decided over all files at
    once, so a train and a test file are indexed alike.

    Parameters
    ----------
    files : list of (str, path-like or file object)
        Paths (``.gz`` and ``.bz2`` are decompressed by extension) or open
        file objects (binary or text mode).
    n_features : int, default=None
        Number of columns. Default: the largest feature index found.
    dtype : numpy dtype, default=np.float64
        Dtype of ``X``.
    zero_based : bool or "auto", default="auto"
        Whether feature indices start at 0. ``"auto"`` assumes 1-based
        indices unless some file uses index 0.
    query_files : list of (str, path-like, file object or None), default=None
        For files without ``qid:`` (LightGBM's example format): a file of
        query sizes, one per line, for each entry of ``files``.

    Returns
    -------
    [X1, y1, qid1, X2, y2, qid2, ...] : list
        For each file, ``X`` as a CSR matrix of shape (n_samples, n_features),
        ``y`` of shape (n_samples,) and integer ``qid`` of shape (n_samples,)
        in file order.

    Raises
    ------
    ValueError
        If a file cannot be parsed (the message names it), has lines with and
        without ``qid:``, or has no ``qid:`` and no query file.

    Examples
    --------
    >>> import io
    >>> from sklearn_ltr.datasets import load_svmlight_ranking_files
    >>> train = io.BytesIO(b"2 qid:1 1:0.5 3:1\\n0 qid:1 2:1\\n")
    >>> test = io.BytesIO(b"1 qid:9 1:2\\n")
    >>> X1, y1, q1, X2, y2, q2 = load_svmlight_ranking_files([train, test])
    >>> X1.shape, X2.shape, q2
    ((2, 3), (1, 3), array([9]))
    """
    if isinstance(files, (str, os.PathLike)) or hasattr(files, "read"):
        raise ValueError(
            "files must be a list of files; use load_svmlight_ranking for one file."
        )
    files = list(files)
    if query_files is None:
        query_files = [None] * len(files)
    else:
        query_files = list(query_files)
        if len(query_files) != len(files):
            raise ValueError(
                f"query_files has {len(query_files)} entries but files has "
                f"{len(files)}; give one (or None) per file."
            )
    with ExitStack() as stack:
        recorders = []
        for f in files:
            name = _source_name(f)
            if isinstance(f, (str, os.PathLike)):
                fh = stack.enter_context(_open_binary(os.fspath(f)))
            elif hasattr(f, "read") or hasattr(f, "__iter__"):
                fh = f
            else:
                raise ValueError(
                    f"files must hold paths or file objects; got {type(f).__name__}."
                )
            recorders.append(_QidRecorder(fh, name))
        try:
            parsed = load_svmlight_files(
                recorders,
                n_features=n_features,
                dtype=dtype,
                zero_based=zero_based,
                query_id=False,
            )
        except (ValueError, EOFError, OSError) as exc:
            culprit = [r for r in recorders if r.started and not r.finished]
            if not culprit:
                raise
            rec = culprit[-1]
            raise ValueError(
                f"Could not parse {rec.name} as svmlight/LETOR ranking data "
                f"(near line {rec.lineno}): {exc}"
            ) from exc
    result = []
    for rec, query_file, i in zip(recorders, query_files, range(0, len(parsed), 2)):
        X, y = parsed[i], parsed[i + 1]
        result += [X, y, _qid_for(rec, X.shape[0], query_file)]
    return result


def load_svmlight_ranking(
    f, *, n_features=None, dtype=np.float64, zero_based="auto", query_file=None
):
    """Load a svmlight / LETOR ranking file into ``(X, y, qid)``.

    Parameters
    ----------
    f : str, path-like or file object
        Path (``.gz`` and ``.bz2`` are decompressed by extension) or an open
        file object (binary or text mode). Lines are
        ``label qid:Q idx:val ... [# comment]``.
    n_features : int, default=None
        Number of columns. Default: the largest feature index found. Pass it
        when loading data that must line up with other data.
    dtype : numpy dtype, default=np.float64
        Dtype of ``X``.
    zero_based : bool or "auto", default="auto"
        Whether feature indices start at 0. ``"auto"`` assumes 1-based
        indices unless index 0 occurs.
    query_file : str, path-like or file object, default=None
        For a file without ``qid:`` (LightGBM's example format): a file of
        query sizes, one per line, in row order (LightGBM's ``.query``).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), dtype float64
    qid : ndarray of shape (n_samples,), dtype int64
        Query id of each row, in file order. With ``query_file``, queries
        are numbered ``0 .. n_queries - 1``.

    Raises
    ------
    ValueError
        If the file cannot be parsed (the message names it), or it has no
        ``qid:`` and no ``query_file`` was given.
    FileNotFoundError
        If the path does not exist.

    See Also
    --------
    load_svmlight_ranking_files : Several files with a common feature count.
    dump_svmlight_ranking : The inverse.

    Examples
    --------
    >>> import io
    >>> from sklearn_ltr.datasets import load_svmlight_ranking
    >>> data = io.BytesIO(b"2 qid:1 1:0.5 3:1\\n0 qid:1 2:1\\n1 qid:4 1:2 # doc 3\\n")
    >>> X, y, qid = load_svmlight_ranking(data)
    >>> X.toarray()
    array([[0.5, 0. , 1. ],
           [0. , 1. , 0. ],
           [2. , 0. , 0. ]])
    >>> y, qid
    (array([2., 0., 1.]), array([1, 1, 4]))
    """
    return tuple(
        load_svmlight_ranking_files(
            [f],
            n_features=n_features,
            dtype=dtype,
            zero_based=zero_based,
            query_files=[query_file],
        )
    )


def dump_svmlight_ranking(X, y, qid, f, *, zero_based=False, comment=None):
    """Write ranking data as svmlight / LETOR text with ``qid:``.

    Zero entries are not written. Rows are written in the given order (they
    need not be sorted by query). :func:`load_svmlight_ranking` reads the file
    back; pass it ``n_features`` and the same ``zero_based`` to recover
    leading or trailing all-zero columns exactly. Values are written with 16
    significant digits (scikit-learn's format): float32 data and decimals
    round-trip exactly, other float64 values to within about 1e-16 relative.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,)
        Relevance labels.
    qid : array-like of shape (n_samples,)
        Integer query id of each row.
    f : str or file object
        Path, or a file object opened in binary mode.
    zero_based : bool, default=False
        Write 0-based feature indices. The default writes 1-based indices,
        as LETOR and MSLR files use.
    comment : str, default=None
        Text written at the top of the file as ``#`` lines.

    Raises
    ------
    ValueError
        If ``qid`` does not hold integers or has the wrong length.

    Examples
    --------
    >>> import io
    >>> import numpy as np
    >>> from sklearn_ltr.datasets import dump_svmlight_ranking
    >>> out = io.BytesIO()
    >>> dump_svmlight_ranking(np.array([[0.5, 0.0], [0.0, 2.0]]), [1, 0], [3, 3], out)
    >>> print(out.getvalue().decode())
    1 qid:3 1:0.5
    0 qid:3 2:2
    <BLANKLINE>
    """
    n_samples = X.shape[0] if hasattr(X, "shape") else len(X)
    qid = check_qid(qid, n_samples)
    if qid.dtype.kind == "f" and np.all(qid == np.round(qid)):
        qid = qid.astype(np.int64)
    if qid.dtype.kind not in "iu":
        raise ValueError(
            f"qid must hold integers to be written as svmlight 'qid:'; got dtype "
            f"{qid.dtype}. Map other ids to integers first, e.g. with "
            "np.unique(qid, return_inverse=True)[1]."
        )
    dump_svmlight_file(
        X, y, f, zero_based=zero_based, comment=comment, query_id=qid
    )
