"""What the LTR-plugin and Solr exporters share: a tree walker, number text
that Java reads back exactly, and the missing-value policy.

Missing values. Our splits send NaN to a learned side. A format that can say
so per split (the plugin's ``missing`` pointer, Solr's ``missing`` branch)
gets our sides. A format that cannot (RankLib) is served by an engine that
puts a value of its own in place of a missing feature (0.0); exporting such a
model would silently score a missing value as that value, so the exporter
refuses unless the caller passes ``missing_as=<that value>``. With
``missing_as=v`` the exported model scores a row with missing values as our
model scores it with NaN replaced by ``v``: an explicit choice, not a silent
change. A model trained without missing values (no split learned a side)
exports without the option.
"""

import numpy as np

__all__ = ["fold_tree", "java_float", "learned_missing_features", "check_missing_as",
           "refuse_learned_missing"]


def fold_tree(tree, leaf, split, node=0, depth=0):
    """Build one tree's representation from its leaves up.

    Parameters
    ----------
    tree : ndarray of NODE_DTYPE
        One tree's nodes (child indices relative to its root).
    leaf : callable
        ``leaf(row, node, depth)`` for a leaf.
    split : callable
        ``split(row, node, depth, left, right)`` for a split, given what the
        walk built for its left and right children.
    node, depth : int
        Where to start (the root by default).

    Returns
    -------
    object
        What ``leaf`` or ``split`` returned for ``node``.
    """
    row = tree[node]
    if row["is_leaf"]:
        return leaf(row, node, depth)
    left = fold_tree(tree, leaf, split, int(row["left"]), depth + 1)
    right = fold_tree(tree, leaf, split, int(row["right"]), depth + 1)
    return split(row, node, depth, left, right)


def java_float(value):
    """Text that Java's ``Float.parseFloat`` reads as the float32 nearest to
    ``value`` (``Infinity`` spelled the Java way).

    The text is the shortest decimal of the float32's exact double value, so
    it is read back exactly whether a parser goes straight to float or
    through double.
    """
    with np.errstate(over="ignore"):
        v = float(np.float32(value))
    if np.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(v)


def learned_missing_features(ensemble):
    """Names of the features at which a split learned where NaN goes."""
    learned = ensemble.splits_with_learned_missing_direction()
    names = ensemble.names()
    return [names[f] for f in np.unique(ensemble.column_of(ensemble.nodes["feature_idx"][learned]))]


def check_missing_as(missing_as, format):
    """``missing_as`` as a float, or None.

    The engines' feature values are float32, so ``missing_as`` must be one:
    otherwise the engine would hold a value other than the one promised.
    """
    if missing_as is None:
        return None
    try:
        v = float(missing_as)
    except (TypeError, ValueError):
        v = np.nan
    if not np.isfinite(v) or float(np.float32(v)) != v:
        raise ValueError(
            f"format {format!r}: missing_as must be a finite float32 value such as 0.0 (the "
            f"value the engine puts in place of a missing feature); got {missing_as!r}."
        )
    return v


def refuse_learned_missing(ensemble, format, engine_value):
    """Raise if the model learned where missing values go (the format cannot
    say it and the engine would put ``engine_value`` in their place)."""
    features = learned_missing_features(ensemble)
    if features:
        raise ValueError(
            f"format {format!r} cannot say where missing values go, and the model learned it "
            f"at splits on the features {features} (they had missing values in training); "
            f"the engine puts {engine_value!r} in place of a missing feature, so those rows "
            f"would be scored differently. Pass missing_as={engine_value!r} to export a model "
            f"that scores a missing value as this model scores {engine_value!r}, or train "
            f"with missing values replaced by {engine_value!r}."
        )
