"""Synthetic learning-to-rank data shaped like MSLR-WEB30K.

Every document has a few hidden relevance factors. Its features are monotone
transforms of them (continuous, heavy-tailed counts, log-normal, few-valued
ordinals, binaries), noisy mixtures of them, or pure noise, and its graded
label comes from a non-linear function of the factors (thresholds, hinges, a
bump, products) plus a per-query offset and noise. Label cut points are set on
a calibration sample so that grades 0-4 occur roughly as in MSLR (about 50%,
30%, 15%, 4%, 1%). Optional categorical columns hold category codes with
Zipf-distributed frequencies; each category shifts the relevance by its own
amount, and in some columns also adds a term in one factor whose sign and size
depend on the category.
The data is generated in chunks of rows written straight into the output
arrays, so peak memory stays close to the output size.
"""

import numbers

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_ranking"]

_GRADE_QUANTILES = np.array([0.50, 0.80, 0.95, 0.99])
_TYPES = ("normal", "count", "lognormal", "ordinal", "binary")
_TYPE_P = np.array([0.35, 0.25, 0.15, 0.15, 0.10])
_QUERY_FACTOR_SD = 0.5  # per-query shift of the hidden factors (topic effects)
_QUERY_OFFSET_SD = 0.4  # per-query shift of the relevance score (query difficulty)
_CHUNK_ROWS = 1 << 15
# The categorical columns together carry this share of the variance of the
# noise-free relevance signal: enough that using the categories well shows in
# NDCG@10, while the numeric features still carry most of the signal.
_CATEGORICAL_SHARE = 0.4
_ZIPF_EXPONENT = 1.0
# make_ranking's category_frequencies -> the exponent of 1 / rank.
_CATEGORY_EXPONENTS = {"zipf": _ZIPF_EXPONENT, "uniform": 0.0}
_N_CALIBRATION_QUERIES = 400
_CALIBRATION_DOCS = 100


class _Structure:
    """The hidden problem: which columns carry what, and the relevance function."""

    def __init__(self, rng, n_features, n_informative):
        k = n_informative
        self.k = k
        # Feature types in contiguous blocks of columns (real feature sets are
        # laid out by kind too); blocks are updated in place through views,
        # which is much faster than gathering scattered columns.
        types = np.sort(rng.choice(len(_TYPES), size=n_features, p=_TYPE_P))
        self.blocks = []
        for t, name in enumerate(_TYPES):
            cols = np.flatnonzero(types == t)
            if cols.size == 0:
                continue
            m = cols.size
            if name == "normal":
                params = (rng.uniform(0.5, 3.0, m), rng.uniform(-2.0, 2.0, m))
            elif name == "count":
                params = (rng.uniform(0.5, 1.5, m), rng.uniform(0.0, 3.0, m))
            elif name == "lognormal":
                params = (rng.uniform(0.5, 1.5, m), 10.0 ** rng.uniform(-3.0, 1.0, m))
            elif name == "ordinal":
                levels = rng.integers(3, 7, m).astype(np.float64)
                params = (levels, rng.uniform(0.5, 1.0, m) * levels / 2)
            else:
                params = (rng.uniform(-0.5, 2.0, m),)
            self.blocks.append((name, cols[0], cols[-1] + 1, params))

        # The hidden factors sit at random non-binary columns (binaries would
        # lose most of their information), or anywhere if there are too few.
        non_binary = rng.permutation(np.flatnonzero(types != _TYPES.index("binary")))
        binary = rng.permutation(np.flatnonzero(types == _TYPES.index("binary")))
        columns = np.concatenate((non_binary, binary))
        self.informative = columns[:k]
        n_redundant = min(n_features - k, k)
        self.redundant = rng.permutation(columns[k:])[:n_redundant]
        # Each redundant column mixes two factors plus its own noise, like the
        # many correlated BM25/TF-IDF variants of real feature sets.
        self.red_src = rng.integers(0, k, size=(n_redundant, 2))
        self.red_w = rng.uniform(0.3, 1.0, size=(n_redundant, 2))

        # Relevance function of the k factors.
        self.linear = rng.normal(0.0, 0.5, k) * (rng.random(k) < 0.6)
        roles = rng.permutation(k)
        n_step = max(1, k // 4)
        self.step = roles[:n_step]
        self.step_t = rng.uniform(-0.5, 1.5, n_step)
        self.step_h = rng.uniform(0.5, 1.5, n_step)
        self.hinge = roles[n_step : 2 * n_step]
        self.hinge_t = rng.uniform(-0.5, 1.0, self.hinge.size)
        self.bump = roles[2 * n_step : 2 * n_step + 2]
        self.bump_c = rng.uniform(-0.5, 0.5, self.bump.size)
        n_pairs = max(1, k // 4)
        self.pairs = rng.integers(0, k, size=(n_pairs, 2))
        self.pair_w = rng.normal(0.0, 0.7, n_pairs)
        self.and_pair = rng.integers(0, k, size=2)
        self.and_t = rng.uniform(0.0, 1.0, 2)
        self.scale = 1.0
        self.cuts = None

    def factors(self, rng, sizes):
        """Hidden factors of the documents of queries with the given sizes."""
        n = int(sizes.sum())
        shift = rng.normal(0.0, _QUERY_FACTOR_SD, size=(sizes.shape[0], self.k))
        u = rng.standard_normal((n, self.k))
        u += np.repeat(shift, sizes, axis=0)
        return u

    def relevance(self, u):
        """Noise-free relevance score (before scaling) from the factors."""
        g = u @ self.linear
        g += (u[:, self.step] > self.step_t) @ self.step_h
        g += np.maximum(u[:, self.hinge] - self.hinge_t, 0.0).sum(axis=1)
        g -= 0.5 * ((u[:, self.bump] - self.bump_c) ** 2).sum(axis=1)
        g += (u[:, self.pairs[:, 0]] * u[:, self.pairs[:, 1]]) @ self.pair_w
        a, b = self.and_pair
        g += 1.5 * ((u[:, a] > self.and_t[0]) & (u[:, b] > self.and_t[1]))
        return g

    def score(self, rng, u, sizes, noise, extra=None):
        """Relevance with per-query offset and noise, in units of the signal sd.

        ``extra`` is the categorical columns' part of the relevance, if any.
        """
        s = self.relevance(u)
        if extra is not None:
            s += extra
        s /= self.scale
        s += np.repeat(rng.normal(0.0, _QUERY_OFFSET_SD, sizes.shape[0]), sizes)
        if noise:
            s += noise * rng.standard_normal(s.shape[0])
        return s

    def calibrate(self, rng, noise, categories=None, category_rng=None):
        """Fix the signal scale and the grade cut points on a separate sample.

        With ``categories``, their effects are first weighted so that they
        carry ``_CATEGORICAL_SHARE`` of the signal's variance; their codes
        come from ``category_rng``, so ``rng`` draws what it draws without them.
        """
        sizes = np.full(_N_CALIBRATION_QUERIES, _CALIBRATION_DOCS)
        u = self.factors(rng, sizes)
        if categories is None:
            self.scale = float(np.std(self.relevance(u))) or 1.0
            self.cuts = np.quantile(self.score(rng, u, sizes, noise), _GRADE_QUANTILES)
            return
        g = self.relevance(u)
        extra = categories.effect(categories.draw(category_rng, u.shape[0]), u)
        categories.weight = (
            np.sqrt(_CATEGORICAL_SHARE / (1 - _CATEGORICAL_SHARE)) * np.std(g) / np.std(extra)
        )
        extra *= categories.weight
        self.scale = float(np.std(g + extra)) or 1.0
        self.cuts = np.quantile(self.score(rng, u, sizes, noise, extra), _GRADE_QUANTILES)

    def fill_features(self, rng, out, u):
        """Write the features of one chunk into ``out`` (noise drawn in place)."""
        rng.standard_normal(out=out, dtype=out.dtype)
        out[:, self.informative] = u
        if self.redundant.size:
            mixed = (
                u[:, self.red_src[:, 0]] * self.red_w[:, 0]
                + u[:, self.red_src[:, 1]] * self.red_w[:, 1]
                + 0.7 * out[:, self.redundant]
            )
            mixed /= np.sqrt(self.red_w[:, 0] ** 2 + self.red_w[:, 1] ** 2 + 0.49)
            out[:, self.redundant] = mixed
        for name, start, stop, params in self.blocks:
            z = out[:, start:stop]  # a view: transformed in place
            if name == "normal":
                z *= params[0]
                z += params[1]
            elif name == "count":
                # exp(x) < 1 floors to 0: the many zero term counts of real data
                z *= params[0]
                z += params[1]
                np.exp(z, out=z)
                np.floor(z, out=z)
            elif name == "lognormal":
                z *= params[0]
                np.exp(z, out=z)
                z *= params[1]
            elif name == "ordinal":
                z += params[1]
                np.floor(z, out=z)
                np.clip(z, 0.0, params[0] - 1.0, out=z)
            else:
                z[...] = z > params[0]


class _Categories:
    """Categorical columns: Zipf-distributed codes and per-category effects.

    Column ``j`` has ``n_categories[j]`` categories. Frequencies fall as
    ``1 / rank ** exponent`` (1: Zipf's law; 0: uniform); codes are a random
    permutation of the ranks, so neither the order of the codes nor their
    frequency says anything about the effect.
    Each category adds its own normal shift to the relevance; in the columns at
    even positions (0, 2, ...) it also multiplies one hidden factor by a slope
    of random sign, so that what that factor is worth depends on the category.
    """

    def __init__(self, rng, n_categories, n_factors, exponent=_ZIPF_EXPONENT):
        self.n_categories = n_categories
        self.cdf, self.code_of_rank, self.shift, self.factor, self.slope = [], [], [], [], []
        for j, m in enumerate(n_categories):
            cdf = np.cumsum(1.0 / np.arange(1, m + 1) ** exponent)
            self.cdf.append(cdf / cdf[-1])
            self.code_of_rank.append(rng.permutation(m))
            self.shift.append(rng.standard_normal(m))  # indexed by code
            if j % 2 == 0:
                self.factor.append(int(rng.integers(n_factors)))
                self.slope.append(rng.choice((-1.0, 1.0), m) * rng.uniform(0.5, 1.5, m))
            else:
                self.factor.append(None)
                self.slope.append(None)
        self.weight = 1.0  # set by _Structure.calibrate

    def draw(self, rng, n):
        """Codes of ``n`` documents, an int array of shape (n, n_categorical)."""
        codes = np.empty((n, len(self.n_categories)), dtype=np.int64)
        for j, cdf in enumerate(self.cdf):
            rank = np.searchsorted(cdf, rng.random(n), side="right")
            codes[:, j] = self.code_of_rank[j][rank]
        return codes

    def effect(self, codes, u):
        """The categorical columns' part of the relevance (before weighting)."""
        g = np.zeros(codes.shape[0])
        for j in range(codes.shape[1]):
            c = codes[:, j]
            g += self.shift[j][c]
            if self.factor[j] is not None:
                g += self.slope[j][c] * u[:, self.factor[j]]
        return g * self.weight


def _check_n_categories(n_categories, n_categorical):
    """``n_categories`` as an int array of length ``n_categorical``."""
    message = (
        "n_categories must be an integer >= 2 or a sequence of n_categorical="
        f"{n_categorical} such integers, each at most 2**24 (codes stay exact "
        f"in float32); got {n_categories!r}."
    )
    if isinstance(n_categories, numbers.Integral) and not isinstance(n_categories, bool):
        values = np.full(n_categorical, int(n_categories), dtype=np.int64)
    else:
        try:
            values = np.asarray(n_categories)
        except (TypeError, ValueError):
            raise ValueError(message) from None
        if values.shape != (n_categorical,) or not (
            values.dtype.kind in "iu" or (values.dtype == object and all(
                isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values
            ))
        ):
            raise ValueError(message)
        values = values.astype(np.int64)
    if np.any(values < 2) or np.any(values > 2**24):
        raise ValueError(message)
    return values


def _check_int(value, name, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def make_ranking(
    n_queries=100,
    *,
    docs_per_query=120,
    n_features=136,
    n_informative=None,
    n_categorical=0,
    n_categories=100,
    category_frequencies="zipf",
    noise=1.0,
    missing_rate=0.0,
    dtype=np.float64,
    shuffle_rows=False,
    random_state=None,
):
    """Generate a synthetic ranking problem shaped like MSLR-WEB30K.

    Documents per query vary uniformly between about half and 1.5 times
    ``docs_per_query`` (at least 2). Features are a mix of continuous,
    heavy-tailed count, log-normal, few-valued ordinal and binary columns. A
    few hidden factors drive ``n_informative`` features directly and as many
    more through noisy mixtures; the rest is noise. Labels 0-4 come from a
    non-linear function of the factors (thresholds, hinges, a bump,
    interactions) plus a per-query offset and noise, cut so that about 50% of
    labels are 0, 30% are 1, 15% are 2, 4% are 3 and 1% are 4.

    With ``n_categorical > 0``, the last ``n_categorical`` of the
    ``n_features`` columns are categorical: they hold category codes
    ``0 .. n_categories - 1`` (as floats in ``X``'s dtype) for the rankers'
    ``categorical_features``. Category frequencies follow Zipf's law (the
    ``r``-th most frequent category has a share proportional to ``1 / r``: a
    few common categories and a long tail of rare ones), and codes are
    assigned to categories at random, so their order carries no information.
    Each category adds its own random amount to the relevance; in the
    categorical columns at even positions (the first, third, ...) the
    category also adds a term proportional to one hidden factor, with a slope
    whose sign and size depend on the category, so that what that factor is
    worth depends on the category. Together the categorical columns carry
    about 40% of the variance of the noise-free relevance signal, the numeric
    features the rest. The numeric columns are those that ``make_ranking``
    draws with ``n_features - n_categorical`` features and the same other
    arguments, as long as ``missing_rate=0``; the categories change the labels.

    Take training and test sets from **one call**, split by query. Each call
    draws its own hidden problem from ``random_state`` (which columns carry
    the factors, the relevance function, the label cut points), so a second
    call with another ``random_state`` is a different problem with a
    different ground truth: a model fitted on one call has no reason to rank
    the documents of another well. Split with
    :class:`~sklearn.model_selection.GroupShuffleSplit` (or ``GroupKFold``)
    and ``groups=qid``, which keeps each query's rows on one side (see the
    Examples).

    Parameters
    ----------
    n_queries : int, default=100
        Number of queries.
    docs_per_query : int, default=120
        Average number of documents per query (at least 2).
    n_features : int, default=136
        Number of feature columns, the categorical ones included.
    n_informative : int, default=None
        Number of hidden factors, each also a numeric feature column.
        Default: ``min(20, n_features - n_categorical)``.
    n_categorical : int, default=0
        Number of categorical columns, the last ones of ``X``: pass
        ``categorical_features=list(range(n_features - n_categorical,
        n_features))`` to a ranker. At most ``n_features - 1``, and
        ``n_features - n_informative`` if ``n_informative`` is given. With 0,
        the output is the same as without this option.
    n_categories : int or array-like of int of shape (n_categorical,), default=100
        Number of categories of each categorical column (2 to ``2**24``; the
        rankers keep up to ``max_bins`` of them, the most frequent).
    category_frequencies : {"zipf", "uniform"}, default="zipf"
        How often each category occurs: "zipf", the ``r``-th most frequent
        has a share proportional to ``1 / r``; "uniform", all equally often
        (every category then has about ``n_rows / n_categories`` rows, the
        hardest case for a ranker that keeps only the most frequent).
    noise : float, default=1.0
        Standard deviation of the label noise, relative to the standard
        deviation of the noise-free relevance signal.
    missing_rate : float in [0, 1), default=0.0
        Fraction of feature values replaced by NaN, at random.
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of ``X``. ``np.float32`` halves the memory.
    shuffle_rows : bool, default=False
        Shuffle rows across queries, so that ``qid`` is neither sorted nor
        contiguous (for testing code that must not assume either).
    random_state : int, RandomState instance or None, default=None
        Seed. The same integer always gives identical arrays.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Features.
    y : ndarray of shape (n_samples,), dtype float64
        Graded labels 0, 1, 2, 3, 4.
    qid : ndarray of shape (n_samples,), dtype int64
        Query ids ``0 .. n_queries - 1``, sorted and contiguous unless
        ``shuffle_rows=True``.

    Examples
    --------
    >>> from sklearn_ltr.datasets import make_ranking
    >>> X, y, qid = make_ranking(n_queries=5, docs_per_query=10, n_features=8,
    ...                          random_state=0)
    >>> X.shape[1], int(qid.max()) + 1, set(y) <= {0, 1, 2, 3, 4}
    (8, 5, True)

    Two categorical columns of 50 categories, the last two of 10:

    >>> X, y, qid = make_ranking(n_queries=5, docs_per_query=10, n_features=10,
    ...                          n_categorical=2, n_categories=50, random_state=0)
    >>> categorical_features = list(range(10 - 2, 10))
    >>> codes = X[:, categorical_features]
    >>> bool((codes == codes.round()).all() and codes.min() >= 0 and codes.max() < 50)
    True

    Training and test queries of one problem, from one call split by query
    (the rows keep their order, so a query's rows stay together):

    >>> from sklearn.model_selection import GroupShuffleSplit
    >>> X, y, qid = make_ranking(n_queries=50, docs_per_query=10, n_features=8,
    ...                          random_state=0)
    >>> splitter = GroupShuffleSplit(n_splits=1, test_size=0.2, random_state=0)
    >>> train, test = next(splitter.split(X, y, groups=qid))
    >>> X_train, y_train, qid_train = X[train], y[train], qid[train]
    >>> X_test, y_test, qid_test = X[test], y[test], qid[test]
    >>> len(set(qid_train)), len(set(qid_test)), len(set(qid_train) & set(qid_test))
    (40, 10, 0)
    """
    n_queries = _check_int(n_queries, "n_queries", 1)
    docs_per_query = _check_int(docs_per_query, "docs_per_query", 2)
    n_features = _check_int(n_features, "n_features", 1)
    n_categorical = _check_int(n_categorical, "n_categorical", 0)
    if n_categorical >= n_features:
        raise ValueError(
            f"n_categorical={n_categorical} leaves no numeric column among "
            f"n_features={n_features}; n_categorical must be at most n_features - 1."
        )
    n_numeric = n_features - n_categorical
    if n_informative is None:
        n_informative = min(20, n_numeric)
    n_informative = _check_int(n_informative, "n_informative", 1)
    if n_informative > n_features:
        raise ValueError(
            f"n_informative={n_informative} exceeds n_features={n_features}."
        )
    if n_informative > n_numeric:
        raise ValueError(
            f"n_informative={n_informative} exceeds the {n_numeric} numeric columns "
            f"(n_features={n_features} - n_categorical={n_categorical})."
        )
    if n_categorical:
        n_categories = _check_n_categories(n_categories, n_categorical)
    if category_frequencies not in _CATEGORY_EXPONENTS:
        raise ValueError(
            f"category_frequencies must be 'zipf' or 'uniform'; got {category_frequencies!r}."
        )
    if not isinstance(noise, numbers.Real) or not noise >= 0:
        raise ValueError(f"noise must be a non-negative number; got {noise!r}.")
    if not isinstance(missing_rate, numbers.Real) or not 0 <= missing_rate < 1:
        raise ValueError(f"missing_rate must be in [0, 1); got {missing_rate!r}.")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be np.float32 or np.float64; got {dtype}.")

    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    root = np.random.SeedSequence(seed)
    ss_structure, ss_sizes, ss_calibration, ss_shuffle, ss_chunks = root.spawn(5)
    structure = _Structure(np.random.default_rng(ss_structure), n_numeric, n_informative)
    categories = None
    if n_categorical:
        # Streams of their own, so that the numeric columns are those drawn
        # without categories.
        ss_cat_structure, ss_cat_calibration, ss_cat_chunks = root.spawn(1)[0].spawn(3)
        categories = _Categories(
            np.random.default_rng(ss_cat_structure), n_categories, structure.k,
            _CATEGORY_EXPONENTS[category_frequencies],
        )
        structure.calibrate(
            np.random.default_rng(ss_calibration), float(noise), categories,
            np.random.default_rng(ss_cat_calibration),
        )
    else:
        structure.calibrate(np.random.default_rng(ss_calibration), float(noise))

    low = max(2, docs_per_query // 2)
    high = max(low, int(round(1.5 * docs_per_query)))
    sizes = np.random.default_rng(ss_sizes).integers(low, high + 1, size=n_queries)
    n_samples = int(sizes.sum())
    offsets = np.concatenate(([0], np.cumsum(sizes)))

    X = np.empty((n_samples, n_features), dtype=dtype)
    y = np.empty(n_samples, dtype=np.float64)
    qid = np.empty(n_samples, dtype=np.int64)
    perm = np.random.default_rng(ss_shuffle).permutation(n_samples) if shuffle_rows else None

    # Chunks of whole queries of about _CHUNK_ROWS rows; their bounds depend
    # only on the sizes, so results do not depend on anything but the seed.
    bounds = [0]
    for q in range(1, n_queries + 1):
        if offsets[q] - offsets[bounds[-1]] >= _CHUNK_ROWS or q == n_queries:
            bounds.append(q)
    chunk_seeds = ss_chunks.spawn(len(bounds) - 1)
    cat_seeds = ss_cat_chunks.spawn(len(bounds) - 1) if n_categorical else chunk_seeds
    for (q0, q1), chunk_seed, cat_seed in zip(
        zip(bounds[:-1], bounds[1:]), chunk_seeds, cat_seeds
    ):
        rng = np.random.default_rng(chunk_seed)
        r0, r1 = offsets[q0], offsets[q1]
        chunk_sizes = sizes[q0:q1]
        out = X[r0:r1] if perm is None else np.empty((r1 - r0, n_features), dtype)
        u = structure.factors(rng, chunk_sizes)
        extra = None
        if n_categorical:
            # fill_features draws its noise into a contiguous array.
            numeric = np.empty((r1 - r0, n_numeric), dtype)
            structure.fill_features(rng, numeric, u)
            out[:, :n_numeric] = numeric
            del numeric
            codes = categories.draw(np.random.default_rng(cat_seed), r1 - r0)
            out[:, n_numeric:] = codes
            extra = categories.effect(codes, u)
        else:
            structure.fill_features(rng, out, u)
        labels = np.searchsorted(
            structure.cuts, structure.score(rng, u, chunk_sizes, float(noise), extra)
        ).astype(np.float64)
        if missing_rate > 0:
            out[rng.random(out.shape, dtype=np.float32) < missing_rate] = np.nan
        chunk_qid = np.repeat(np.arange(q0, q1, dtype=np.int64), chunk_sizes)
        if perm is None:
            y[r0:r1] = labels
            qid[r0:r1] = chunk_qid
        else:
            dest = perm[r0:r1]
            X[dest] = out
            y[dest] = labels
            qid[dest] = chunk_qid
    return X, y, qid
