"""LightGBM's model text and its ``dump_model()`` JSON.

LightGBM's predictor compares as ours does: a split sends ``x`` left iff
``x <= threshold`` in float64, and with ``missing_type=NaN`` a NaN goes to
the ``default_left`` side. Thresholds and leaf values are written with 17
significant digits, so ``lightgbm.Booster(model_file=...)`` reads back the
same doubles and predicts our scores up to the order of the float64 sum.

LightGBM reads every input value ``|x| <= 1e-35`` (its ``kZeroThreshold``)
as 0. Our binning places no threshold inside that band
(:data:`~sklearn_ltr._gbdt.binning.ZERO_BAND`), so such values branch as 0
does in our models too; a threshold inside it, from a model fitted before,
is written at the band's edge, as LightGBM writes it (lleaves refuses a
threshold of 0).

What LightGBM's format cannot hold is mapped, never dropped:

- The baseline (LightGBM has no separate initial score in a model) is added
  to every leaf of the first tree, as LightGBM itself folds
  ``boost_from_average`` into its first tree.
- Leaf counts and internal counts are our training row counts, which is what
  LightGBM's ``pred_contrib`` (TreeSHAP) uses as cover, so its feature
  contributions equal :func:`sklearn_ltr.inspection.feature_contributions`.
  ``internal_value`` is the count-weighted mean of the leaves below the node.
  Leaf and internal *weights* (LightGBM's hessian sums) are not stored by our
  trees; they are left out, and LightGBM reads them as 0.
- ``objective`` is ``rank_xendcg`` for an XE-NDCG model and ``lambdarank``
  for the others: both make LightGBM return the raw score.
- ``feature_infos``: ``none`` for a feature no split uses, the categories of
  a categorical feature, and for a numeric one ``[lowest:highest]`` of the
  model's thresholds on it (six significant digits), where LightGBM writes
  its training data's range (which our models do not keep).

Categorical splits are LightGBM's own (decision type ``==``): its predictor
sends ``x`` left iff ``int(x)`` is in the split's bitset of raw category
values, and right if ``x`` is NaN (``missing_type=NaN``), negative or not in
the bitset. The bitset holds the known categories of our child that does not
take missing values, which is written as LightGBM's left child, so that
LightGBM's right child is our missing side, which takes every other value
(:mod:`~sklearn_ltr.export._categorical`). The bitset has one 32-bit word per
32 category values up to the largest one listed, so large codes make large
files, as in LightGBM; past :data:`MAX_BITSET_WORDS` words in all, the export
is refused. Feed the integer codes the ranker was fitted on (for
a pandas ``category`` column, the position of the value among the
categories it had in fit, NaN for a missing value); ``pandas_categorical``
is null, so LightGBM does not re-encode a DataFrame's category columns
consistently with ours. LightGBM truncates a fractional value to an integer,
which our model treats as missing.
"""

import json

import numpy as np

from .._gbdt.binning import out_of_the_zero_band
from .._gbdt.ensemble import subtree_means
from ._categorical import categorical_split_rows, listed_categories

__all__ = ["booster", "dump_model_json", "model_text"]

# decision_type bits (LightGBM's tree.h): 1 = categorical, 2 = default left,
# 8 = missing type NaN.
_CATEGORICAL = 1
_DEFAULT_LEFT = 2
_MISSING_NAN = 8
_FORBIDDEN_IN_NAMES = set(' \t\n\r,:"[]{}')
# LightGBM writes an infinite threshold into its JSON as this (JSON has no inf).
_JSON_INFINITY = 1e300


def _objective(ensemble):
    return "rank_xendcg" if ensemble.objective == "xendcg" else "lambdarank"


def _feature_names(ensemble):
    names = ensemble.names(default="Column_{}")
    bad = [n for n in names if not n or _FORBIDDEN_IN_NAMES & set(n)]
    if bad:
        raise ValueError(
            f"LightGBM's format separates feature names by spaces and cannot hold "
            f"whitespace or the characters , : \" [ ] {{ }} in a name; {bad[:5]} have them. "
            "Pass feature_names= with names LightGBM accepts."
        )
    return names


class _LightGBMTree:
    """One of our trees in LightGBM's numbering: split nodes and leaves are
    numbered separately, each in our node order (so the root is split 0), and
    a child that is a leaf is written as ``~leaf``. A categorical split whose
    missing values go left has its children swapped (see the module
    docstring); its threshold is the index of its bitset in ``cat_boundaries``."""

    def __init__(self, nodes, ensemble, add_to_leaves=0.0):
        is_leaf = nodes["is_leaf"] != 0
        self.n_leaves = int(is_leaf.sum())
        # Our node index -> LightGBM index (split k or leaf k).
        number = np.where(is_leaf, np.cumsum(is_leaf) - 1, np.cumsum(~is_leaf) - 1)
        code = np.where(is_leaf, ~number, number)
        splits = nodes[~is_leaf]
        leaves = nodes[is_leaf]
        self.split_feature = ensemble.column_of(splits["feature_idx"])
        self.split_gain = splits["gain"].astype(np.float32).astype(np.float64)
        self.is_categorical = splits["is_categorical"] != 0
        # LightGBM reads |x| <= 1e-35 as 0 and never writes a threshold
        # closer to 0 (lleaves refuses a threshold of 0); our binning
        # places none there either, but models fitted before it did may hold
        # one. Moved to the band's edge, it routes every value as LightGBM
        # routes it at the threshold written.
        self.threshold = np.where(self.is_categorical, 0.0,
                                  out_of_the_zero_band(splits["num_threshold"]))
        self.default_left = (splits["missing_go_to_left"] != 0) & ~self.is_categorical
        self.decision_type = (_MISSING_NAN + _DEFAULT_LEFT * self.default_left.astype(int)
                              + _CATEGORICAL * self.is_categorical.astype(int))
        swap = self.is_categorical & (splits["missing_go_to_left"] != 0)
        self.left_child = code[np.where(swap, splits["right"], splits["left"])]
        self.right_child = code[np.where(swap, splits["left"], splits["right"])]
        # Per categorical split, in split order: the listed categories and
        # their bitset's words, concatenated; cat_boundaries delimit them.
        self.categories = []
        words = []
        self.cat_boundaries = [0]
        for k in np.flatnonzero(self.is_categorical):
            self.threshold[k] = len(self.categories)
            listed = listed_categories(ensemble, splits[k]).astype(np.int64)
            bitset = np.zeros(int(listed.max()) // 32 + 1 if listed.size else 1, dtype=np.uint64)
            np.bitwise_or.at(bitset, listed // 32, np.uint64(1) << (listed % 32).astype(np.uint64))
            self.categories.append(listed)
            words.extend(int(w) for w in bitset)
            self.cat_boundaries.append(len(words))
        self.cat_threshold = words
        self.leaf_value = leaves["value"] + add_to_leaves
        self.leaf_count = leaves["count"].astype(np.int64)
        self.internal_count = splits["count"].astype(np.int64)
        self.internal_value = subtree_means(nodes, self.leaf_value)[~is_leaf]

    @property
    def num_cat(self):
        return len(self.categories)


def _feature_infos(ensemble):
    """LightGBM's ``feature_infos`` entry of every feature: ``none`` for a
    feature no split uses (as LightGBM writes for unused features), the
    colon-separated categories of a categorical feature (as LightGBM), and
    ``[lowest:highest]`` for a numeric one, where LightGBM writes the range
    of its training values. Our models do not keep that range; the range of
    the model's thresholds on the feature is written instead, to six
    significant digits. LightGBM reads these entries for continued training
    only, never to predict, but other readers tell numeric from categorical
    features by them (lleaves compiles a feature whose entry does not start
    with ``[`` as categorical)."""
    nodes = ensemble.nodes
    splits = nodes[nodes["is_leaf"] == 0]
    infos = []
    split_columns = ensemble.column_of(splits["feature_idx"])
    for f in range(ensemble.n_features):
        categories = ensemble.column_categories(f)
        used = splits[split_columns == f]
        if categories is not None and categories.size:
            infos.append(":".join(str(int(c)) for c in categories))
        elif used.size:
            # Clipped as in the JSON dump: a split sending only NaN right
            # has threshold +inf.
            thresholds = np.clip(out_of_the_zero_band(used["num_threshold"]),
                                 -_JSON_INFINITY, _JSON_INFINITY)
            # Six significant digits: the entry is informative, and
            # LightGBM's own text-to-double parser reads short numbers
            # exactly (longer ones may come back one unit off in its dump).
            infos.append(f"[{thresholds.min():.6g}:{thresholds.max():.6g}]")
        else:
            infos.append("none")
    return infos


def _feature_infos_json(ensemble, names):
    """``feature_infos`` of LightGBM's ``dump_model()``, built from the text
    entries as LightGBM builds it: unused features left out."""
    out = {}
    for name, info in zip(names, _feature_infos(ensemble)):
        if info == "none":
            continue
        if info.startswith("["):
            low, high = (float(v) for v in info[1:-1].split(":"))
            out[name] = {"min_value": low, "max_value": high, "values": []}
        else:
            values = [int(v) for v in info.split(":")]
            out[name] = {"min_value": min(values), "max_value": max(values), "values": values}
    return out


# LightGBM writes a categorical split as a bitset with one bit per category
# value from 0 to the largest it lists. Past this many 32-bit words in all
# (about 70 MB of text, most of the words 0) the export is refused rather
# than left to write gigabytes: codes near 2**31, such as hashed ids, take 67
# million words a split. (40 categories coded up to 4e7 took 19 million
# words in 5 trees: a 38 MB file that LightGBM reads.)
MAX_BITSET_WORDS = 2**25


def _check_bitset_words(ensemble):
    """Raise if the model's categorical splits would take more than
    :data:`MAX_BITSET_WORDS` bitset words in LightGBM's format."""
    words, largest = 0, {}
    names = ensemble.names()
    for k in categorical_split_rows(ensemble):
        listed = listed_categories(ensemble, ensemble.nodes[k])
        if listed.size:
            top = int(listed.max())
            words += top // 32 + 1
            name = names[ensemble.column_of(ensemble.nodes["feature_idx"][k])]
            largest[name] = max(largest.get(name, 0), top)
    if words > MAX_BITSET_WORDS:
        codes = ", ".join(f"{name!r} up to {top:,}" for name, top in sorted(largest.items()))
        raise ValueError(
            f"LightGBM's format writes a categorical split as one bit per category value "
            f"from 0 to the largest it lists, and this model's categorical splits list codes "
            f"({codes}) that would take {words:,} 32-bit words, more than {MAX_BITSET_WORDS:,}. "
            "Fit on codes 0 .. n_categories - 1 instead (a pandas 'category' column, or "
            "sklearn.preprocessing.OrdinalEncoder) to export to LightGBM, or export to 'onnx'."
        )


def _lightgbm_trees(ensemble):
    _check_bitset_words(ensemble)
    return [
        _LightGBMTree(nodes, ensemble, ensemble.baseline if t == 0 else 0.0)
        for t, nodes in enumerate(ensemble.trees())
    ]


def _numbers(values):
    # repr gives the shortest text that reads back as the same double.
    return " ".join(repr(float(v)) if isinstance(v, (float, np.floating)) else str(int(v))
                    for v in values)


def _tree_block(index, tree):
    # LightGBM writes a categorical split's bitset index as an integer.
    thresholds = [str(int(t)) if c else repr(float(t))
                  for t, c in zip(tree.threshold, tree.is_categorical)]
    lines = [
        f"Tree={index}",
        f"num_leaves={tree.n_leaves}",
        f"num_cat={tree.num_cat}",
        f"split_feature={_numbers(tree.split_feature)}",
        f"split_gain={_numbers(tree.split_gain)}",
        f"threshold={' '.join(thresholds)}",
        f"decision_type={_numbers(tree.decision_type)}",
        f"left_child={_numbers(tree.left_child)}",
        f"right_child={_numbers(tree.right_child)}",
        f"leaf_value={_numbers(tree.leaf_value)}",
        f"leaf_count={_numbers(tree.leaf_count)}",
        f"internal_value={_numbers(tree.internal_value)}",
        f"internal_count={_numbers(tree.internal_count)}",
    ]
    if tree.num_cat:
        lines += [f"cat_boundaries={_numbers(tree.cat_boundaries)}",
                  f"cat_threshold={_numbers(tree.cat_threshold)}"]
    lines += ["is_linear=0", "shrinkage=1"]
    # LightGBM ends a tree with two blank lines and counts them in tree_sizes.
    return "\n".join(lines) + "\n\n\n"


def model_text(ensemble):
    """The model as LightGBM's ``Booster.save_model`` writes it.

    Parameters
    ----------
    ensemble : TreeEnsemble

    Returns
    -------
    str
    """
    names = _feature_names(ensemble)
    blocks = [_tree_block(t, tree) for t, tree in enumerate(_lightgbm_trees(ensemble))]
    header = [
        "tree",
        "version=v4",
        "num_class=1",
        "num_tree_per_iteration=1",
        "label_index=0",
        f"max_feature_idx={ensemble.n_features - 1}",
        f"objective={_objective(ensemble)}",
        "feature_names=" + " ".join(names),
        "feature_infos=" + " ".join(_feature_infos(ensemble)),
        "tree_sizes=" + " ".join(str(len(b.encode("utf-8"))) for b in blocks),
    ]
    return ("\n".join(header) + "\n\n" + "".join(blocks)
            + "end of trees\n\npandas_categorical:null\n")


def _node_json(tree, code, counted_features, thresholds):
    if code < 0:
        leaf = ~code
        return {
            "leaf_index": int(leaf),
            "leaf_value": float(tree.leaf_value[leaf]),
            "leaf_weight": 0,
            "leaf_count": int(tree.leaf_count[leaf]),
        }
    # LightGBM's split-count importance counts only splits of positive
    # gain; a node of a symmetric tree with an L2 penalty may have a
    # negative gain of its own (its level's split is chosen by summed gain).
    if tree.split_gain[code] > 0:
        counted_features.append(int(tree.split_feature[code]))
    if tree.is_categorical[code]:
        # LightGBM's dump: the bitset's values, "||"-separated, in a string.
        categories = tree.categories[int(tree.threshold[code])]
        threshold, decision = "||".join(str(int(c)) for c in categories), "=="
    else:
        threshold, decision = float(thresholds[code]), "<="
    return {
        "split_index": int(code),
        "split_feature": int(tree.split_feature[code]),
        "split_gain": float(tree.split_gain[code]),
        "threshold": threshold,
        "decision_type": decision,
        "default_left": bool(tree.default_left[code]),
        "missing_type": "NaN",
        "internal_value": float(tree.internal_value[code]),
        "internal_weight": 0,
        "internal_count": int(tree.internal_count[code]),
        "left_child": _node_json(tree, int(tree.left_child[code]), counted_features, thresholds),
        "right_child": _node_json(tree, int(tree.right_child[code]), counted_features, thresholds),
    }


def dump_model(ensemble, comparison="<="):
    """The model as LightGBM's ``Booster.dump_model()`` returns it (a dict).

    With ``comparison="<"`` every threshold is the next double above ours,
    so that an engine testing ``x < threshold`` sends every double where we
    send it (see :func:`dump_model_json`).
    """
    if comparison not in ("<", "<="):
        raise ValueError(
            f"comparison must be '<' (Vespa's rule) or '<=' (LightGBM's); got {comparison!r}."
        )
    names = _feature_names(ensemble)
    counted = []
    tree_info = []
    for t, tree in enumerate(_lightgbm_trees(ensemble)):
        thresholds = tree.threshold
        if comparison == "<":
            thresholds = np.nextafter(thresholds, np.inf)
        thresholds = np.clip(thresholds, -_JSON_INFINITY, _JSON_INFINITY)
        if tree.n_leaves == 1:
            structure = {"leaf_value": float(tree.leaf_value[0])}
        else:
            structure = _node_json(tree, 0, counted, thresholds)
        tree_info.append({
            "tree_index": t,
            "num_leaves": tree.n_leaves,
            "num_cat": tree.num_cat,
            "shrinkage": 1,
            "tree_structure": structure,
        })
    split_counts = np.bincount(np.asarray(counted, dtype=np.int64), minlength=ensemble.n_features)
    order = np.argsort(-split_counts, kind="stable")
    return {
        "name": "tree",
        "version": "v4",
        "num_class": 1,
        "num_tree_per_iteration": 1,
        "label_index": 0,
        "max_feature_idx": ensemble.n_features - 1,
        "objective": _objective(ensemble),
        "average_output": False,
        "feature_names": names,
        "monotone_constraints": [],
        "feature_infos": _feature_infos_json(ensemble, names),
        "tree_info": tree_info,
        "feature_importances": {
            names[f]: int(split_counts[f]) for f in order if split_counts[f] > 0
        },
        "pandas_categorical": None,
    }


def dump_model_json(ensemble, *, comparison="<"):
    """The model as LightGBM's ``dump_model()`` JSON text, which Vespa imports.

    Parameters
    ----------
    ensemble : TreeEnsemble
    comparison : {"<", "<="}, default="<"
        The rule of the engine that reads the file. Vespa's importer turns a
        split into ``x < threshold`` (``!(x >= threshold)`` when
        ``default_left``; LightGBMParser.nodeToRankingExpression in
        vespa-engine/vespa, model-integration), not LightGBM's ``<=``, so by
        default every threshold is written as the next double above ours and
        Vespa sends every double where our model does. ``"<="`` writes our
        thresholds as they are: the JSON LightGBM's own ``dump_model()``
        gives for the ``"lightgbm"`` export.

    Returns
    -------
    str

    Notes
    -----
    JSON has no infinity: a split that sends every value left and only NaN
    right has threshold ``+inf``, written as ``1e300`` as LightGBM writes it,
    so an input above ``1e300`` (``+inf`` included) goes right there in an
    engine reading the file.
    """
    return json.dumps(dump_model(ensemble, comparison=comparison), indent=1)


def booster(ensemble):
    """A ``lightgbm.Booster`` of the model (LightGBM must be installed)."""
    try:
        import lightgbm
    except ImportError:
        raise ImportError(
            "to_lightgbm needs LightGBM: pip install lightgbm (export_model(..., "
            "format='lightgbm') writes the same model without it)."
        ) from None
    return lightgbm.Booster(model_str=model_text(ensemble))
