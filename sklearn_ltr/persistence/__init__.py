"""Saving and loading fitted rankers and pipelines without pickle.

:func:`save_model` writes a fitted :class:`~sklearn_ltr.LambdaMARTRanker`,
:class:`~sklearn_ltr.XENDCGRanker`, :class:`~sklearn_ltr.ListNetRanker`,
:class:`~sklearn_ltr.YetiRankRanker` or
:class:`~sklearn_ltr.CalibratedRanker`, or a fitted
:class:`sklearn.pipeline.Pipeline` of scikit-learn transformers ending in one
(such as ``GridSearchCV(...).best_estimator_``), to one file;
:func:`load_model` reads it back. Loading never executes code from the file
(unlike pickle and joblib): the file holds JSON and plain numeric arrays, and
everything is checked before a ranker is built from it. The loaded ranker
predicts bit-identically (``predict``, ``staged_predict``, ``rank``, ``score``,
``feature_importances_``, ``predict_proba``), and ``fit`` with
``warm_start=True`` continues it exactly as it would have continued the saved
ranker: the file also holds the bin thresholds and the random seeds drawn at
the first fit. Pipelines need the optional ``skops`` package (see below).

File format (``format_version`` 1)
----------------------------------
A zip archive (the layout of ``numpy.savez_compressed``, so
``numpy.load(path)`` opens it) with these members:

``model.json``
    UTF-8 JSON object:

    - ``"format"``: ``"sklearn-ltr-model"``; ``"format_version"``: ``1``;
      ``"library_version"``: the ``sklearn_ltr.__version__`` that wrote it.
    - ``"estimator"``: class name, one of ``LambdaMARTRanker``,
      ``XENDCGRanker``, ``ListNetRanker``, ``YetiRankRanker``,
      ``CalibratedRanker``.
    - ``"params"``: ``get_params(deep=False)``; values are null, booleans,
      numbers, strings or lists of them (tuples, sets and 1-d arrays are
      written as lists, sets sorted), or, for a dict (``monotonic_cst`` by
      feature), ``{"items": [[key, value], ...]}`` with string (feature
      name) or integer (column index) keys.
    - ``"fitted"``: ``n_features_in_``, ``feature_names_in_`` (list of
      strings, or null), ``n_iter_`` (number of trees), ``objective_``,
      ``do_early_stopping_``, ``grow_policy_`` (optional; the shape of the
      trees, ``"lossguide"`` where absent), ``n_training_queries``
      (optional; the number of queries in the training data, so that
      ``score`` without ``qid`` can refuse), and for a Platt-calibrated ``CalibratedRanker``
      ``platt_coef_`` and ``platt_intercept_``.
    - ``"booster"``: ``baseline`` (raw score of the model with no trees),
      ``objective_name``, ``n_features``, ``missing_values_bin_idx``,
      ``n_trees``.
    - ``"bin_mapper"``: ``max_bins``, ``missing_values_bin_idx``,
      ``n_features``.
    - ``"warm_start"``: ``random_seed`` (and ``platt_seed`` or null), the
      seeds a continued fit reuses, and ``validation_queries_unseen``
      (optional; true if every fit held out the same ``validation_fraction``
      queries, so that a continued fit stopping early on them need not warn).
    - ``"arrays"``: for every ``.npy`` member, its ``dtype`` (NumPy
      ``descr``, e.g. ``"<f8"``) and ``shape``; the loader checks them.

    Floats are written with 17 significant digits (Python's ``repr``), so
    they read back bit-identically; a non-finite fitted float is the string
    ``"nan"``, ``"inf"`` or ``"-inf"``.

Trees, as plain little-endian ``.npy`` arrays (NumPy format 1.0: magic
``\\x93NUMPY``, two version bytes, a 2-byte header length, a header that is a
Python dict literal with ``descr``, ``fortran_order`` and ``shape``, then the
raw data). All trees are concatenated into ``N`` nodes:

- ``tree_starts.npy`` (int64, ``n_trees``): index of each tree's root.
- ``node_value.npy`` (float64): leaf value (learning rate applied).
- ``node_feature_idx.npy`` (int32): split feature (0-based column), -1 at
  leaves.
- ``node_num_threshold.npy`` (float64): a row goes left iff
  ``x <= threshold``.
- ``node_missing_go_to_left.npy`` (uint8): where NaN goes (1 = left).
- ``node_left.npy``, ``node_right.npy`` (int32): children, as indices
  *relative to the tree's root* (-1 at leaves). A child's index is always
  larger than its parent's.
- ``node_is_leaf.npy`` (uint8).
- ``node_count.npy`` (uint32), ``node_gain.npy`` (float64),
  ``node_depth.npy`` (int32), ``node_bin_threshold.npy`` (uint8): training
  statistics and the split in bin space; not needed to predict.

Binning and training curves, needed to continue training and for
``train_score_``/``validation_score_``: ``bin_thresholds.npy`` (float64, the
thresholds of every feature, concatenated), ``bin_n_thresholds.npy`` (int64,
``n_features``), ``bin_has_missing.npy`` (uint8, ``n_features``),
``train_score.npy`` and ``validation_score.npy`` (float64).

To predict from another language: for row ``x`` and each tree ``t`` in
order, start at ``k = tree_starts[t]``; while ``node_is_leaf[k] == 0``, take
``v = x[node_feature_idx[k]]`` and go to ``tree_starts[t] + node_left[k]``
if ``v`` is NaN and ``node_missing_go_to_left[k] == 1`` or if ``v`` is not
NaN and ``v <= node_num_threshold[k]``, else to
``tree_starts[t] + node_right[k]``; add ``node_value[k]``. The score is
``baseline + (sum of the leaf values, added in tree order)``. For
``predict_proba`` of a ``CalibratedRanker`` the probability of relevance is
``1 / (1 + exp(-z))`` with ``z = score``, or
``z = platt_coef_ * score + platt_intercept_`` after Platt scaling.

Pipelines (``format_version`` 2)
--------------------------------
A fitted ``Pipeline`` whose last step is one of the rankers above is a
format 1 file of that ranker (the same members and ``model.json`` fields, so
its trees read as above) with ``"format_version": 2`` and two additions:

- in ``model.json``, ``"pipeline"``: ``steps``, the names of all steps in
  order (the last one is the ranker's); ``params``, the pipeline's other
  ``get_params(deep=False)`` values (``memory``, ``verbose``,
  ``transform_input``), JSON like the ranker's; ``sklearn_version`` and
  ``skops_version`` of the writer (for information, not read).
- ``pipeline_steps.skops``: the steps before the ranker (transformers,
  ``"passthrough"`` or None) as one list, in order, in the format of
  ``skops.io.dumps`` (itself a zip of JSON and ``.npy`` arrays, no pickle).

Saving and loading a pipeline need ``skops`` (``pip install skops``;
otherwise an ImportError says so). Loading lists the types of the skops
member that skops does not trust by default (it does trust plain containers,
arrays, NumPy ufuncs and scikit-learn's estimators) with
``skops.io.get_untrusted_types``, and loads the member with
``skops.io.loads(..., trusted=...)`` only if each of them is
scikit-learn's own class, a function of ``sklearn.metrics`` or
``sklearn.feature_selection`` (score functions, kernels) or ``numpy.dtype``;
otherwise it raises a ValueError naming the other types. Other functions of
scikit-learn are refused: some read or write files (``sklearn.datasets``),
and a ``FunctionTransformer`` would call them at predict time. skops builds
the objects without calling their constructors. ``save_model``
makes the same check, so a pipeline with any other step (a transformer of
another package, a ``FunctionTransformer`` of your own function) is refused
when saved, not when loaded.

Categorical features (``format_version`` 3)
-------------------------------------------
A ranker with categorical features (``is_categorical_`` is not None), or
fitted on a DataFrame with pandas ``category`` columns, is written as format
3, and so is a pipeline ending in one: the members and ``model.json`` fields
of format 1 (and 2 for a pipeline), with ``"format_version": 3`` and these
additions:

- ``node_is_categorical.npy`` (uint8, ``N``): 1 at a categorical split, else
  0. The ``node_num_threshold`` of a categorical split is NaN (and its
  ``node_bin_threshold``, a training statistic, is 0).
- ``node_left_categories.npy`` (uint32, shape ``(N, 8)``): at a categorical
  split, the set of the categories that go left, as 256 bits: category
  index ``b`` goes left iff ``(node_left_categories[k, b >> 5] >> (b & 31))
  & 1`` is 1. Only bits below the number of categories of the split's
  feature may be set; every word is 0 at the other nodes.
- ``bin_is_categorical.npy`` (uint8, ``n_features``): 1 for the categorical
  features. The splits on a categorical feature are all categorical splits,
  and only those. For a categorical feature, ``bin_thresholds.npy`` holds
  its categories instead of thresholds: ``bin_n_thresholds[f]`` (at most
  ``max_bins``) increasing integer codes in ``[0, 2**31)``, as float64;
  category index ``b`` is the ``b``-th of them.
- in ``"fitted"``, ``"pandas_categories"``: one entry per pandas category
  column of the training DataFrame (an empty list if there was none), each
  ``{"column": j, "dtype": ..., "values": [...]}``: ``j`` is the 0-based
  position of the column among the features (a ``qid`` column does not
  count), ``values`` its categories in their pandas order, and ``dtype``
  ``"str"`` for strings or the NumPy ``descr`` of numbers or booleans
  (``"<i8"``, ``"<f8"``, ``"|b1"``, ...; floats are written as the other
  floats of the file). ``save_model`` refuses a ranker whose category
  columns have categories of other types (dates, or a mix of strings and
  numbers) with a ValueError: turn them into strings and fit again.
- ``"params"`` holds ``categorical_features`` like the other parameters: a
  string, null, or a list of indices, feature names or booleans (a NumPy
  array is written as a list, and read back as one).

To predict, first replace the value of each pandas category column by the
position of the value in that column's ``values`` (NaN if it is not one of
them). Then walk the trees as above, except that at a categorical split on
feature ``f`` a value ``v`` goes to ``missing_go_to_left``'s side if it is
NaN or not one of ``f``'s categories, and otherwise, with ``b`` the index of
``v`` among them, left iff bit ``b`` of ``node_left_categories[k]`` is set.

Wide categorical columns (``format_version`` 4)
-----------------------------------------------
A categorical column with more categories than ``max_bins`` keeps up to
``max_bins`` of them per *binned feature*, and is split on through several
of them, each with its own block of the column's categories (the rule that
picks the categories is in :mod:`sklearn_ltr._gbdt.binning`). A ranker with
such a column is written as format 4 (a pipeline ending in one too): format
3 with one addition, ``bin_feature_columns.npy`` (int64, one entry per
binned feature): the input column of each binned feature, increasing, every
column at least once, and more than once only for categorical columns. The
``bin_*`` arrays and ``node_feature_idx`` then count binned features, not
columns: a split on binned feature ``f`` reads column
``bin_feature_columns[f]``, and a value that is not one of ``f``'s
categories (a category of another block included) goes to
``missing_go_to_left``'s side.

Target statistics (``format_version`` 5)
----------------------------------------
A ranker fitted with ``target_statistics="ordered"`` is written as format 5
(a pipeline ending in one too): format 4 with these additions.

- ``target_statistic_columns.npy`` (int64, ``S`` entries): the categorical
  input columns that have a statistic, increasing. The trees read
  ``n_features_in_ + S`` columns: the input's, then statistic ``j`` as
  column ``n_features_in_ + j`` (numeric, never categorical), so
  ``booster.n_features`` and ``bin_mapper.n_features`` (which count
  columns) count those columns too, and ``bin_feature_columns`` (which
  counts binned features, several for a wide column) ends with one binned
  feature for each.
- ``target_statistic_n_categories.npy`` (int64, ``S``),
  ``target_statistic_categories.npy`` and ``target_statistic_values.npy``
  (float64, their sum): each column's categories seen in training,
  increasing, one after the other, and the statistic of each.
- in ``"fitted"``, ``"target_statistic_prior"``: the mean training label.

To predict, compute column ``n_features_in_ + j`` from column
``target_statistic_columns[j]`` (after pandas categories are replaced by
their positions): the value's statistic where it is one of the column's
categories, and the prior elsewhere (NaN included).

Combinations (``format_version`` 6)
-----------------------------------
A ranker fitted with ``target_statistics="combinations"`` is written as
format 6: format 5, where the ``S`` statistics are first one per
categorical column alone (increasing columns, as in format 5), then one
per combination, with these additions.

- ``target_statistic_partners.npy`` (int64, ``S``): -1 for a statistic of
  its column alone; for a combination, the column combined with
  ``target_statistic_columns[j]``. The partner is categorical if it has a
  statistic of its own, numeric otherwise.
- ``target_statistic_n_edges.npy`` (int64, ``S``) and
  ``target_statistic_edges.npy`` (float64, their sum): for a combination
  with a numeric partner, the partner's increasing quantile edges; none for
  the other statistics.
- A combination's ``target_statistic_categories`` are keys
  ``i * n + b``: ``i`` is the position of the row's category among the
  categories of its column's own statistic; ``b`` is the position of the
  partner's category among the partner's (``n`` of them), or for a numeric
  partner the number of edges at or below its value (``n`` is the number
  of edges plus one).

To predict a combination's column: the key's statistic where the row's
category is one of its column's, the partner's value is one of its
categories (or, numeric, not NaN) and the key is one of the statistic's
keys; the prior elsewhere.

Versions: a reader accepts every ``format_version`` up to its own
(``FORMAT_VERSION``) and refuses newer files with a ValueError. A writer
writes the lowest version that holds what it saves: a single ranker without
categorical features is still a format 1 file, and a pipeline ending in one
a format 2 file. A new field that older readers can ignore does not bump the
version; a change of meaning does (categorical splits), and so does content
that an older reader would silently drop (a pipeline's steps).

skops files of your own
-----------------------
A ranker also goes through ``skops.io.dump`` as it is or inside your own
objects: its trees are NumPy arrays of a structured dtype, which skops stores
as ``.npy``. ``skops.io.load`` needs the package's types in ``trusted``:
``SKOPS_TRUSTED_TYPES`` (a new list at each access) names the five rankers,
the internal classes they hold, and the column selector of
:func:`~sklearn_ltr.compose.exclude_qid`; add the other types of your file
after reviewing them (``skops.io.get_untrusted_types`` lists them)::

    skops.io.dump(pipeline, "pipeline.skops")
    others = [t for t in skops.io.get_untrusted_types(file="pipeline.skops")
              if t.startswith("sklearn.")]  # review them first
    loaded = skops.io.load("pipeline.skops", trusted=SKOPS_TRUSTED_TYPES + others)
"""

import bz2
import json
import lzma
import os
import zipfile
import zlib

import sklearn
from sklearn.pipeline import Pipeline

from .._gbdt.binning import BinMapper
from .._gbdt.booster import Booster
from .._rankers.model_file import (
    FORMAT_NAME,
    JSON_MEMBER,
    check_node_dtype,
    json_param,
    ranker_content,
    write_model_file,
)
from .._rankers.registry import model_classes
from .._rankers.target_statistics import OrderedTargetStatistics
from .._version import __version__
from ..compose import _TransformedColumns
from .pipeline_file import STEPS_MEMBER, dump_steps, load_steps, skops_version, split_pipeline
from .ranker_file import ModelFileError, build_ranker, get_field, read_arrays

__all__ = ["FORMAT_VERSION", "SKOPS_TRUSTED_TYPES", "load_model", "save_model"]

# The newest version this module reads; it writes the lowest one that holds
# what it saves (see "Versions" above).
FORMAT_VERSION = 6
_PIPELINE_VERSION = 2
# Classes a fitted ranker holds besides the ranker itself, and the column
# selector that a pipeline with exclude_qid holds, for skops users.
_INTERNAL_CLASSES = (Booster, BinMapper, OrderedTargetStatistics, _TransformedColumns)


def __getattr__(name):
    # Computed at each access from the registry, which this module cannot
    # read at import time (the rankers are imported after it).
    if name == "SKOPS_TRUSTED_TYPES":
        classes = [*model_classes().values(), *_INTERNAL_CLASSES]
        return sorted(f"{cls.__module__}.{cls.__qualname__}" for cls in classes)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _source_name(path):
    if isinstance(path, (str, os.PathLike)):
        return os.fspath(path)
    return getattr(path, "name", None) or repr(path)


# -- saving -----------------------------------------------------------------


def save_model(estimator, path):
    """Write a fitted ranker, or a pipeline ending in one, to a file without pickle.

    See the module docstring for the format; :func:`load_model` reads it.

    Parameters
    ----------
    estimator : ranker or Pipeline
        A fitted LambdaMARTRanker, XENDCGRanker, ListNetRanker,
        YetiRankRanker or CalibratedRanker (not a subclass), or a fitted
        :class:`sklearn.pipeline.Pipeline` whose last step is one and whose
        other steps are scikit-learn transformers (saving a pipeline needs
        ``skops``).
    path : str, path-like or binary file object
        Destination. A path is written to a temporary file next to it and
        then renamed, so a crash never leaves a half-written model behind.

    Raises
    ------
    ValueError
        If the estimator is not one of the above, a parameter is not
        JSON-safe (for example ``random_state`` holding a RandomState), or a
        pipeline step holds types other than scikit-learn's own.
    ImportError
        If the estimator is a pipeline and skops is not installed.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.

    Examples
    --------
    >>> import io
    >>> from sklearn_ltr import LambdaMARTRanker
    >>> from sklearn_ltr.datasets import make_ranking
    >>> from sklearn_ltr.persistence import load_model, save_model
    >>> X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=0)
    >>> ranker = LambdaMARTRanker(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    >>> buf = io.BytesIO()
    >>> save_model(ranker, buf)
    >>> bool((load_model(io.BytesIO(buf.getvalue())).predict(X) == ranker.predict(X)).all())
    True
    """
    check_node_dtype()
    classes = model_classes()
    extra = []
    if type(estimator) is Pipeline:
        names, steps, ranker = split_pipeline(estimator, classes)
        # The ranker and the parameters first: a NotFittedError or a bad
        # parameter is reported whether or not skops is installed.
        document, blobs = ranker_content(ranker, classes)
        params = {
            k: json_param(k, v, owner="Pipeline ")
            for k, v in estimator.get_params(deep=False).items() if k != "steps"
        }
        extra.append((STEPS_MEMBER, dump_steps(names[:-1], steps)))
        # A categorical ranker's file is already of a later version.
        document["format_version"] = max(document["format_version"], _PIPELINE_VERSION)
        document["pipeline"] = {
            "steps": names,
            "params": params,
            "sklearn_version": sklearn.__version__,
            "skops_version": skops_version(),
        }
    else:
        document, blobs = ranker_content(estimator, classes)
    write_model_file(document, blobs, path, extra)


# -- loading ------------------------------------------------------------------


def _check_header(document):
    """Format name and version, checked before anything else is read;
    returns the version."""
    if not isinstance(document, dict):
        raise ModelFileError(f"{JSON_MEMBER} is not a JSON object")
    if document.get("format") != FORMAT_NAME:
        raise ModelFileError(f"it is not a sklearn-ltr model (format {document.get('format')!r})")
    version = get_field(document, "format_version", "int", "model.json")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"it has format_version {version}, written by sklearn-ltr "
            f"{document.get('library_version')}; this version ({__version__}) reads format "
            f"versions up to {FORMAT_VERSION}. Upgrade sklearn-ltr"
        )
    if version < 1:
        raise ModelFileError(f"format_version {version} is invalid")
    if "pipeline" in document and version < _PIPELINE_VERSION:
        raise ModelFileError(f"a file of format_version {version} cannot hold a pipeline")
    return version


def _build_pipeline(zf, info, ranker):
    names = get_field(info, "steps", "any", "pipeline")
    if not (
        isinstance(names, list) and names and all(isinstance(n, str) for n in names)
        and len(set(names)) == len(names)
    ):
        raise ModelFileError(f"pipeline.steps must be a list of unique step names, got {names!r}")
    params = get_field(info, "params", "dict", "pipeline")
    try:
        raw = zf.read(STEPS_MEMBER)
    except KeyError:
        raise ModelFileError(f"member {STEPS_MEMBER} is missing") from None
    steps = load_steps(raw, len(names) - 1)
    try:
        pipeline = Pipeline(list(zip(names, steps + [ranker])), **params)
        # Private, but the checks fit would make: parameter values, step
        # names, and that every step but the last transforms.
        pipeline._validate_params()
        pipeline._validate_steps()
    except (TypeError, ValueError) as exc:
        raise ModelFileError(
            f"its pipeline does not fit scikit-learn {sklearn.__version__}: {exc}"
        ) from None
    return pipeline


def load_model(path):
    """Read a ranker or pipeline written by :func:`save_model`.

    Nothing in the file is executed: the ranker's class comes from a fixed
    list, and the JSON and arrays are checked (types, dtypes, shapes, tree
    structure) before the ranker is built. A pipeline's other steps are
    loaded with skops only if they hold nothing but scikit-learn's own types.

    Parameters
    ----------
    path : str, path-like or binary file object
        A file written by :func:`save_model`.

    Returns
    -------
    estimator : ranker or Pipeline
        The fitted ranker (LambdaMARTRanker, XENDCGRanker, ListNetRanker,
        YetiRankRanker or CalibratedRanker), or pipeline ending in one. With
        ``warm_start=True`` and a larger ``n_estimators``, ``fit`` continues
        the ranker exactly as it would have continued the saved one.

    Raises
    ------
    ValueError
        If the file is corrupted or truncated, is not a model file (pickle
        and joblib files get a message of their own), has a newer
        ``format_version``, names an unknown class or an untrusted type, or
        its content is inconsistent. The message names the file and the
        problem.
    ImportError
        If the file holds a pipeline and skops is not installed.
    FileNotFoundError
        If the path does not exist.

    Examples
    --------
    >>> import io, os, tempfile
    >>> from sklearn_ltr import XENDCGRanker, load_model, save_model
    >>> from sklearn_ltr.datasets import make_ranking
    >>> X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=0)
    >>> ranker = XENDCGRanker(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     save_model(ranker, os.path.join(tmp, "ranker.zip"))
    ...     loaded = load_model(os.path.join(tmp, "ranker.zip"))
    >>> loaded, bool((loaded.predict(X) == ranker.predict(X)).all())
    (XENDCGRanker(n_estimators=5, random_state=0), True)
    >>> load_model(io.BytesIO(b"not a model"))
    Traceback (most recent call last):
    ...
    ValueError: Cannot load model file ...: it is not a valid zip archive ...
    """
    name = _source_name(path)
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                raw = zf.read(JSON_MEMBER)
            except KeyError:
                if "schema.json" in zf.namelist():
                    raise ModelFileError(_SKOPS_FILE) from None
                raise ModelFileError(f"it has no {JSON_MEMBER}; it is not a sklearn-ltr model") from None
            try:
                document = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ModelFileError(f"{JSON_MEMBER} is not valid UTF-8 JSON ({exc})") from None
            version = _check_header(document)
            arrays = read_arrays(zf, document.get("arrays"), version)
            ranker = build_ranker(document, arrays)
            if "pipeline" not in document:
                return ranker
            info = get_field(document, "pipeline", "dict", "model.json")
            return _build_pipeline(zf, info, ranker)
    except ModelFileError as exc:
        raise ValueError(f"Cannot load model file {name}: {exc}.") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        kind = _pickle_kind(path)
        if kind is not None:
            raise ValueError(
                f"Cannot load model file {name}: it looks like {kind}, as pickle.dump and "
                "joblib.dump write, not a sklearn-ltr model file (a zip archive). load_model "
                "does not read pickles because loading a pickle can run arbitrary code. If "
                "you trust the file, load it in Python (joblib.load or pickle.load) and write "
                "it with sklearn_ltr.save_model(model, path)."
            ) from None
        raise ValueError(
            f"Cannot load model file {name}: it is not a valid zip archive (corrupted or "
            f"truncated?): {exc}"
        ) from None


_SKOPS_FILE = (
    "it looks like a skops file (skops.io.dump), not a sklearn-ltr model file; load it with "
    "skops.io.load(path, trusted=...), trusting sklearn_ltr.persistence.SKOPS_TRUSTED_TYPES "
    "and the other types of skops.io.get_untrusted_types(file=path) that you have reviewed"
)


# -- pickle and joblib files ----------------------------------------------------------

# Leading bytes of the compressed streams joblib.dump(..., compress=...) writes,
# with a decompressor for the first bytes of each (lz4 is not in the standard
# library: its files are reported without looking inside).
_COMPRESSED = [
    (b"\x1f\x8b", "gzip", lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)),
    (b"BZh", "bz2", bz2.BZ2Decompressor),
    (b"\xfd7zXZ\x00", "xz", lzma.LZMADecompressor),
    (b"\x5d\x00\x00", "lzma", lzma.LZMADecompressor),
    (b"\x04\x22\x4d\x18", "lz4", None),
]
# Compressed input read at most to find the first decompressed bytes (bz2
# outputs nothing before the end of its first block, up to 900 kB).
_SNIFF_LIMIT = 2**21


def _is_pickle(head):
    # Protocols 2 to 5 start with the PROTO opcode and the protocol number;
    # joblib writes protocol 4 or 5. Protocols 0 and 1 have no marker.
    return len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def _pickle_kind(path):
    """How a file that is not a zip archive looks like a pickle, or None."""
    try:
        if isinstance(path, (str, os.PathLike)):
            with open(path, "rb") as fh:
                return _pickle_kind_of_stream(fh)
        if hasattr(path, "seek") and hasattr(path, "read"):
            path.seek(0)
            return _pickle_kind_of_stream(path)
    except (OSError, ValueError):  # unreadable or unseekable: keep the zip message
        pass
    return None


def _pickle_kind_of_stream(fh):
    head = fh.read(16)
    if _is_pickle(head):
        return "a pickle file"
    compressed = [(n, make) for magic, n, make in _COMPRESSED if head.startswith(magic)]
    # joblib's zlib streams: a deflate header (0x78 ..., a multiple of 31).
    if len(head) >= 2 and head[0] == 0x78 and (head[0] * 256 + head[1]) % 31 == 0:
        compressed.append(("zlib", zlib.decompressobj))
    if not compressed:
        return None
    kind, make = compressed[0]
    article = "an" if kind in ("xz", "lzma", "lz4") else "a"
    if make is None:
        return f"an {kind}-compressed file (joblib.dump(..., compress='{kind}') writes these)"
    decompressor, out, data, read = make(), b"", head, len(head)
    try:
        while len(out) < 2 and data:
            out += decompressor.decompress(data)
            data = fh.read(65536) if read < _SNIFF_LIMIT else b""
            read += len(data)
    except (zlib.error, OSError, EOFError, lzma.LZMAError):
        return None
    return f"{article} {kind}-compressed pickle file" if _is_pickle(out) else None
