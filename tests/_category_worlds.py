"""A ranking world whose relevance is mostly a category effect, shared by
the tests of target statistics and of categorical splits in symmetric
trees."""

import numpy as np


def category_effect_world(seed, n_queries, docs, n_categories, *, effect, slope, noise,
                          missing=0.0):
    """Rows of two numeric columns and a category (column 2, codes as
    floats, a share ``missing`` of them NaN); labels 0-4 from ``effect``
    times a normal effect per category, ``slope`` times column 0 and
    ``noise`` times normal noise."""
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), docs)
    n = qid.shape[0]
    effects = rng.normal(size=n_categories)
    category = rng.integers(0, n_categories, n)
    x = rng.normal(size=(n, 2))
    y = np.clip(np.round(effect * effects[category] + slope * x[:, 0]
                         + noise * rng.normal(size=n) + 1.5), 0, 4)
    X = np.column_stack([x, category.astype(float)])
    if missing:
        X[rng.random(n) < missing, 2] = np.nan
    return X, y, qid
