"""Reading and writing ranking data in the svmlight / LETOR text format.

Lines look like ``label qid:Q idx:val idx:val ... # comment``. Parsing is done
by scikit-learn's ``load_svmlight_files``. Query ids are collected here, while
scikit-learn's parser reads each line, instead of with its ``query_id=True``:
that option grows the query array one line at a time, which takes quadratic
time (minutes for an MSLR-WEB30K fold).

Malformed input raises a ValueError naming the file, the line and the
problem. Most problems make scikit-learn's parser raise, and the line it was
reading is then described; what it would accept silently (a malformed
``qid:``, underscores in numbers, non-finite labels, index 0 when indices
are 1-based, implausibly large indices) is checked here, while reading or
right after, and traced back to its line.
"""

import bz2
import gzip
import io
import os
from contextlib import ExitStack

import numpy as np
from scipy import sparse
from sklearn.datasets import dump_svmlight_file, load_svmlight_files

from .._utils.queries import check_qid
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


# Without n_features, a feature index above this is taken for a corrupt line
# rather than a real feature: no ranker can fit that many features anyway (bin
# thresholds alone would take over 30 GB), and a stray large index would
# silently widen every matrix. Data that really has more features passes
# n_features explicitly.
_MAX_INFERRED_N_FEATURES = 2**24
# scikit-learn's parser stores indices in a C int.
_MAX_PARSER_INDEX = 2**31 - 1
# A digit string of at most this many digits always fits in int64.
_INT64_SAFE_DIGITS = 18
_INT64 = np.iinfo(np.int64)


class _MalformedLine(ValueError):
    """A problem found while reading; the message is final (names file and line)."""


def _parse_int(token):
    """Integer value of a token, or None. Python's int() would also accept
    underscores ("1_0" is 10), which no svmlight writer produces."""
    if b"_" in token:
        return None
    try:
        return int(token)
    except ValueError:
        return None


def _parse_float(token):
    """Float value of a token, or None (no underscores, as for _parse_int)."""
    if b"_" in token:
        return None
    try:
        return float(token)
    except ValueError:
        return None


def _show(token):
    text = token.decode("ascii", "backslashreplace")
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _line_problem(data, zero_based):
    """The first problem of a data line, in reading order, or None.

    Parameters
    ----------
    data : bytes
        The line up to its first ``#``.
    zero_based : bool or "auto"
        Whether index 0 is allowed (it is unless False).

    Returns
    -------
    problem : str or None
        What is wrong, in words; None if the line is well formed.
    """
    position = next((i for i, b in enumerate(data) if b >= 0x80 or b == 0), None)
    if position is not None:
        if data[position] == 0:
            return f"NUL byte at column {position + 1}"
        return (
            f"byte 0x{data[position]:02x} at column {position + 1} is not ASCII; "
            "svmlight data is ASCII text (anything after '#' is ignored)"
        )
    tokens = data.split()
    if not tokens:
        return None
    label = tokens[0]
    if b":" in label:
        return f"the label is missing: the line starts with {_show(label)}"
    value = _parse_float(label)
    if value is None:
        return f"label {_show(label)} is not a number"
    if not np.isfinite(value):
        return f"label {_show(label)} is not a finite number"
    features = tokens[1:]
    if features and features[0].startswith(b"qid"):
        qid_problem = _qid_problem(features[0])
        if qid_problem:
            return qid_problem
        features = features[1:]
    previous = -1
    for token in features:
        if token.startswith(b"qid"):
            return f"{_show(token)} comes after a feature; 'qid:' must follow the label"
        index_text, colon, value_text = token.partition(b":")
        if not colon:
            return f"{_show(token)} is not an 'index:value' pair"
        index = _parse_int(index_text)
        if index is None:
            return f"feature index {_show(index_text)} is not an integer"
        if index < 0:
            return f"feature index {index} is negative"
        if index == 0 and zero_based is False:
            return "feature index 0 with zero_based=False (indices start at 1)"
        if index > _MAX_PARSER_INDEX:
            return f"feature index {index} is too large (the limit is {_MAX_PARSER_INDEX})"
        if index == previous:
            return f"feature index {index} appears twice"
        if index < previous:
            return (
                f"feature index {index} comes after index {previous}; indices must "
                "increase along a line"
            )
        if _parse_float(value_text) is None:
            return f"value {_show(value_text)} of feature {index} is not a number"
        previous = index
    return None


def _qid_problem(token):
    if not token.startswith(b"qid:"):
        return f"{_show(token)} is not a 'qid:<integer>' entry"
    value = _parse_int(token[4:])
    if value is None:
        return f"qid {_show(token[4:])} is not an integer"
    if not _INT64.min <= value <= _INT64.max:
        return f"qid {value} does not fit in a 64-bit integer"
    return None


class _LineRecorder:
    """File-like wrapper that watches the lines scikit-learn's parser reads.

    The parser only iterates over a file object with a ``read`` attribute;
    this wrapper hands it the lines unchanged (text lines are encoded, so
    text-mode files work too) and on the way

    - keeps each data line's ``qid:`` token (``None`` if it has none);
    - remembers the file line numbers of blank and comment-only lines, to
      turn a data row back into a file line in error messages;
    - raises on what the parser would silently accept: a malformed ``qid:``
      (the parser skips it unread) and underscores in numbers (``int`` and
      ``float`` take ``"1_0"`` for 10);
    - remembers the current line, which is the culprit if the parser raises.
    """

    def __init__(self, fh, name, zero_based):
        self._fh = fh
        self.name = name
        self.zero_based = zero_based
        self.qids = []
        self.skipped = []
        self.lineno = 0
        self.line = b""
        self.started = False
        self.finished = False

    def read(self, *args):  # pragma: no cover - sklearn only iterates
        raise io.UnsupportedOperation("read")

    def error(self, lineno, problem):
        return _MalformedLine(f"{self.name}, line {lineno}: {problem}.")

    def __iter__(self):
        self.started = True
        append = self.qids.append
        lineno = 0
        try:
            for line in self._fh:
                lineno += 1
                if isinstance(line, str):
                    line = line.encode("utf-8")
                self.lineno, self.line = lineno, line
                # Same rule as the parser: everything after '#' is a comment.
                data = line.split(b"#", 1)[0] if b"#" in line else line
                parts = data.split(None, 2)
                if not parts:
                    self.skipped.append(lineno)
                elif b"_" in data:
                    raise self.error(lineno, _line_problem(data, self.zero_based)
                                     or "underscores are not allowed in numbers")
                elif len(parts) > 1 and parts[1].startswith(b"qid"):
                    q = parts[1][4:]
                    if parts[1][3:4] != b":" or not q.isdigit() or len(q) > _INT64_SAFE_DIGITS:
                        problem = _line_problem(data, self.zero_based) or _qid_problem(parts[1])
                        if problem:
                            raise self.error(lineno, problem)
                        q = str(int(q)).encode()  # "+7", "-3": canonical digits
                    append(q)
                else:
                    append(None)
                yield line
        except UnicodeDecodeError as exc:
            # A text-mode file decodes a whole chunk before handing out its
            # lines: the bad line is the one being read plus the line ends
            # that precede the bad byte in the chunk.
            chunk = exc.object if isinstance(exc.object, bytes) else b""
            raise self.error(
                lineno + 1 + chunk[: exc.start].count(b"\n"),
                f"the text is not valid {exc.encoding} ({exc.reason}); open the file in "
                "binary mode or with its encoding",
            ) from None
        self.finished = True

    def file_line(self, row):
        """File line number of data row ``row`` (0-based)."""
        line = row + 1
        for s in self.skipped:  # sorted; every skipped line at or before shifts it
            if s > line:
                break
            line += 1
        return line


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
            f"{name}, line {recorder.file_line(first)}: no 'qid:' entry, but other lines "
            f"have one ({missing} of {n_rows} data lines have none); every line needs one."
        )
    # Every token was checked while reading: digits that fit, or canonicalised.
    qid = np.array(qids, dtype=np.int64)
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


def _first_bad_row(X, y, shift, limit, n_features, zero_based):
    """(row, problem) of the first row whose label or indices are invalid, or None.

    ``X`` holds the indices as written in the file (not yet shifted).
    """
    found = []
    bad_label = np.flatnonzero(~np.isfinite(y))
    if bad_label.size:
        found.append((bad_label[0], f"label {y[bad_label[0]]} is not a finite number"))
    if X.nnz:
        indptr, indices = X.indptr, X.indices
        if zero_based is False:
            zero = np.flatnonzero(indices == 0)
            if zero.size:
                found.append((
                    np.searchsorted(indptr, zero[0], side="right") - 1,
                    "feature index 0 with zero_based=False (indices start at 1)",
                ))
        over = np.flatnonzero(indices - shift >= limit)
        if over.size:
            index = int(indices[over[0]])
            if n_features is None:
                problem = (
                    f"feature index {index} is larger than any real feature count "
                    f"(the limit without n_features is {_MAX_INFERRED_N_FEATURES}); pass "
                    "n_features= if the data really has that many features"
                )
            else:
                problem = f"feature index {index} does not fit in n_features={n_features}"
            found.append((np.searchsorted(indptr, over[0], side="right") - 1, problem))
    return min(found, key=lambda rp: rp[0]) if found else None


def _check_options(n_features, zero_based):
    if n_features is not None and not (
        isinstance(n_features, (int, np.integer))
        and not isinstance(n_features, bool)
        and n_features >= 1
    ):
        raise ValueError(f"n_features must be a positive integer or None, got {n_features!r}.")
    if not (zero_based is True or zero_based is False or zero_based == "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}.")


def load_svmlight_ranking_files(
    files,
    *,
    n_features=None,
    dtype=np.float64,
    zero_based="auto",
    query_files=None,
    as_dense=False,
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
        Number of columns. Default: the largest feature index found, which
        must then be at most 2**24 (a larger one is taken for corruption).
    dtype : numpy dtype, default=np.float64
        Dtype of ``X``.
    zero_based : bool or "auto", default="auto"
        Whether feature indices start at 0. ``"auto"`` assumes 1-based
        indices unless some file uses index 0.
    query_files : list of (str, path-like, file object or None), default=None
        For files without ``qid:`` (LightGBM's example format): a file of
        query sizes, one per line, for each entry of ``files``.
    as_dense : bool, default=False
        Return each ``X`` as a dense ndarray instead of a CSR matrix (a
        feature absent from a line is 0, as in the sparse matrix). LETOR-style
        features are mostly non-zero, and transformers such as
        ``StandardScaler`` refuse sparse input unless ``with_mean=False``.

    Returns
    -------
    [X1, y1, qid1, X2, y2, qid2, ...] : list
        For each file, ``X`` as a CSR matrix (ndarray with ``as_dense=True``)
        of shape (n_samples, n_features),
        ``y`` of shape (n_samples,) and integer ``qid`` of shape (n_samples,)
        in file order.

    Raises
    ------
    ValueError
        If a line is malformed; the message names the file, the line number
        and the problem. A data line is ``label [qid:Q] idx:val ...``: the
        label a finite number, ``Q`` a 64-bit integer, indices non-negative
        integers (positive unless zero-based) strictly increasing along the
        line, values numbers (NaN and inf allowed; NaN means missing), ASCII
        throughout. Also if some lines have ``qid:`` and others not, or no
        line has one and no query file is given.

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
    _check_options(n_features, zero_based)
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
            recorders.append(_LineRecorder(fh, name, zero_based))
        try:
            # Indices are read as written (zero_based=True, no n_features) and
            # checked and shifted below, where a bad one can be traced to its line.
            parsed = load_svmlight_files(recorders, dtype=dtype, zero_based=True, query_id=False)
        except _MalformedLine as exc:
            raise ValueError(str(exc)) from None
        except (ValueError, OverflowError, EOFError, OSError) as exc:
            culprit = [r for r in recorders if r.started and not r.finished]
            if not culprit:
                raise
            rec = culprit[-1]
            if isinstance(exc, (EOFError, OSError)):
                raise ValueError(
                    f"Could not read {rec.name} (after line {rec.lineno}): {exc}"
                ) from exc
            data = rec.line.split(b"#", 1)[0]
            problem = _line_problem(data, zero_based) or str(exc)
            raise ValueError(f"{rec.name}, line {rec.lineno}: {problem}.") from None

    Xs, ys = parsed[0::2], parsed[1::2]
    if zero_based == "auto":
        zero_based_files = any(X.nnz and X.indices.min() == 0 for X in Xs)
        shift = 0 if zero_based_files else 1
    else:
        shift = 0 if zero_based else 1
    limit = _MAX_INFERRED_N_FEATURES if n_features is None else n_features
    for rec, X, y in zip(recorders, Xs, ys):
        bad = _first_bad_row(X, y, shift, limit, n_features, zero_based)
        if bad is not None:
            row, problem = bad
            raise ValueError(f"{rec.name}, line {rec.file_line(int(row))}: {problem}.")
    if n_features is None:
        n_features = max((int(X.indices.max()) + 1 - shift for X in Xs if X.nnz), default=0)
    result = []
    for rec, X, y, query_file in zip(recorders, Xs, ys, query_files):
        indices = X.indices - shift if shift else X.indices
        X = type(X)((X.data, indices, X.indptr), shape=(X.shape[0], n_features))
        result += [X.toarray() if as_dense else X, y, _qid_for(rec, X.shape[0], query_file)]
    return result


def load_svmlight_ranking(
    f, *, n_features=None, dtype=np.float64, zero_based="auto", query_file=None, as_dense=False
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
    as_dense : bool, default=False
        Return ``X`` as a dense ndarray instead of a CSR matrix (a feature
        absent from a line is 0). Use it for pipelines with transformers
        that refuse sparse input, such as ``StandardScaler``.

    Returns
    -------
    X : scipy.sparse.csr_matrix or ndarray of shape (n_samples, n_features)
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
            as_dense=as_dense,
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
        If ``qid`` does not hold integers or has the wrong length, or if X
        contains NaN.

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
    values = X.data if sparse.issparse(X) else np.asarray(X, dtype=np.float64)
    if np.isnan(values).any():
        raise ValueError(
            "X contains NaN, which svmlight files cannot hold here: scikit-learn's writer "
            "refuses it, and an absent entry would read back as 0, not as missing. "
            "Replace missing values first (e.g. with a value outside the feature's range)."
        )
    dump_svmlight_file(
        X, y, f, zero_based=zero_based, comment=comment, query_id=qid
    )
