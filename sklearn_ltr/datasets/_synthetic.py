"""Synthetic learning-to-rank data shaped like MSLR-WEB30K.

Every document has a few hidden relevance factors. Its features are monotone
transforms of them (continuous, heavy-tailed counts, log-normal, few-valued
ordinals, binaries), noisy mixtures of them, or pure noise, and its graded
label comes from a non-linear function of the factors (thresholds, hinges, a
bump, products) plus a per-query offset and noise. Label cut points are set on
a calibration sample so that grades 0-4 occur roughly as in MSLR (about 50%,
30%, 15%, 4%, 1%). The data is generated in chunks of rows written straight
into the output arrays, so peak memory stays close to the output size.
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

    def score(self, rng, u, sizes, noise):
        """Relevance with per-query offset and noise, in units of the signal sd."""
        s = self.relevance(u) / self.scale
        s += np.repeat(rng.normal(0.0, _QUERY_OFFSET_SD, sizes.shape[0]), sizes)
        if noise:
            s += noise * rng.standard_normal(s.shape[0])
        return s

    def calibrate(self, rng, noise):
        """Fix the signal scale and the grade cut points on a separate sample."""
        sizes = np.full(_N_CALIBRATION_QUERIES, _CALIBRATION_DOCS)
        u = self.factors(rng, sizes)
        self.scale = float(np.std(self.relevance(u))) or 1.0
        self.cuts = np.quantile(self.score(rng, u, sizes, noise), _GRADE_QUANTILES)

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

    Parameters
    ----------
    n_queries : int, default=100
        Number of queries.
    docs_per_query : int, default=120
        Average number of documents per query (at least 2).
    n_features : int, default=136
        Number of feature columns.
    n_informative : int, default=None
        Number of hidden factors, each also a feature column. Default:
        ``min(20, n_features)``.
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
    """
    n_queries = _check_int(n_queries, "n_queries", 1)
    docs_per_query = _check_int(docs_per_query, "docs_per_query", 2)
    n_features = _check_int(n_features, "n_features", 1)
    if n_informative is None:
        n_informative = min(20, n_features)
    n_informative = _check_int(n_informative, "n_informative", 1)
    if n_informative > n_features:
        raise ValueError(
            f"n_informative={n_informative} exceeds n_features={n_features}."
        )
    if not isinstance(noise, numbers.Real) or not noise >= 0:
        raise ValueError(f"noise must be a non-negative number; got {noise!r}.")
    if not isinstance(missing_rate, numbers.Real) or not 0 <= missing_rate < 1:
        raise ValueError(f"missing_rate must be in [0, 1); got {missing_rate!r}.")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be np.float32 or np.float64; got {dtype}.")

    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    ss_structure, ss_sizes, ss_calibration, ss_shuffle, ss_chunks = (
        np.random.SeedSequence(seed).spawn(5)
    )
    structure = _Structure(np.random.default_rng(ss_structure), n_features, n_informative)
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
    for (q0, q1), chunk_seed in zip(zip(bounds[:-1], bounds[1:]), chunk_seeds):
        rng = np.random.default_rng(chunk_seed)
        r0, r1 = offsets[q0], offsets[q1]
        chunk_sizes = sizes[q0:q1]
        out = X[r0:r1] if perm is None else np.empty((r1 - r0, n_features), dtype)
        u = structure.factors(rng, chunk_sizes)
        structure.fill_features(rng, out, u)
        labels = np.searchsorted(
            structure.cuts, structure.score(rng, u, chunk_sizes, float(noise))
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
