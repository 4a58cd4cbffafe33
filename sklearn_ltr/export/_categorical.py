"""Categorical splits as the exporters see them.

At a categorical split our model sends a row left iff its value is one of
the split's left categories, and every other value to the side that
``missing_go_to_left`` names: NaN, negative values, fractional values,
categories rarer than the ``max_bins`` most frequent and categories never
seen in fit, as well as the known categories of that side. So one side of a
split, the *listed* side, takes a finite set of values (its known
categories, ``categories[f]`` restricted to it), and the other, the
*missing* side, takes everything else. A format with set splits writes the
listed side's categories as its set and makes the engine's "not in the set"
branch (and its NaN branch) lead to the missing side:

- LightGBM: the bitset holds the listed categories and goes left; NaN,
  negative values and values not in the bitset go right.
- XGBoost: the listed categories go right; NaN (through ``default_left``),
  negative values and values not listed go left.
- ONNX, float32: one ``BRANCH_EQ`` per listed category leading to the
  listed child, the last one's false branch to the missing child; float64:
  one ``BRANCH_MEMBER`` whose true branch is the listed child.

LightGBM and XGBoost read a category as ``int(x)`` (truncated toward zero),
so a fractional value such as 2.5 is category 2 there while our model sends
it to the missing side (onnxruntime may do the same in a float64 model's
large sets): the engines must be fed the integer codes that the ranker
reads. RankLib, Solr and the LTR plugin's xgboost+json have
only threshold splits and refuse a model with categorical splits.
"""

import numpy as np

from .._gbdt.common import bins_of

__all__ = ["FLOAT32_EXACT_CATEGORIES", "categorical_split_features", "categorical_split_rows",
           "check_float32_categories", "listed_categories", "refuse_categorical_splits"]

# Integer codes below this are exact float32 values, and a float64 value at
# or above it cannot round to one of them.
FLOAT32_EXACT_CATEGORIES = 2**24


def listed_categories(ensemble, row):
    """The known categories (float64, increasing) of the side of categorical
    split ``row`` (a NODE_DTYPE record) that does not take missing values:
    its right child's if ``row["missing_go_to_left"]``, else its left child's."""
    categories = ensemble.categories[row["feature_idx"]]
    left = np.zeros(categories.shape[0], dtype=bool)
    left[bins_of(row["left_categories"])] = True
    return categories[~left] if row["missing_go_to_left"] else categories[left]


def _categorical_splits(ensemble):
    return ensemble.splits & (ensemble.nodes["is_categorical"] != 0)


def categorical_split_rows(ensemble):
    """Indices in ``ensemble.nodes`` of the categorical splits."""
    return np.flatnonzero(_categorical_splits(ensemble))


def categorical_split_features(ensemble):
    """Names of the features that categorical splits test, in column order."""
    names = ensemble.names()
    columns = np.unique(ensemble.column_of(ensemble.nodes["feature_idx"][_categorical_splits(ensemble)]))
    return [names[c] for c in columns]


def refuse_categorical_splits(ensemble, format):
    """Raise if the model has categorical splits (``format`` has no set
    splits to write them with)."""
    features = categorical_split_features(ensemble)
    if features:
        raise ValueError(
            f"format {format!r} has only threshold splits and cannot express the model's "
            f"categorical splits (on the features {features}). Export to 'lightgbm', "
            "'lightgbm-json', 'xgboost' or 'onnx', which have set splits, or fit without "
            "categorical_features."
        )


def check_float32_categories(ensemble, format, fix):
    """Raise if a categorical split lists a category that a float32 engine
    cannot tell from its neighbours (2**24 or more); ``fix`` says what to do
    instead."""
    splits = categorical_split_rows(ensemble)
    large = [ensemble.names()[ensemble.column_of(ensemble.nodes["feature_idx"][k])] for k in splits
             if np.any(listed_categories(ensemble, ensemble.nodes[k]) >= FLOAT32_EXACT_CATEGORIES)]
    if large:
        raise ValueError(
            f"format {format!r} compares in float32, where integers from 2**24 = "
            f"{FLOAT32_EXACT_CATEGORIES} on are not all distinct, and categorical splits on "
            f"the features {sorted(set(large))} test such category codes. {fix}"
        )
