"""Tree shape and constraints of a fit, resolved from a ranker's parameters.

What the grower is given (:func:`tree_params`): ``monotonic_cst`` and
``interaction_cst`` checked against the features of the data,
``grow_policy="auto"`` resolved, and the depth of symmetric trees; and what a
warm start must keep (:func:`check_warm_start_constraints`). The rankers, the
Dask rankers and the model files use these functions.
"""

import numpy as np

from .._gbdt.constraints import check_interaction_cst, check_monotonic_cst

__all__ = ["LEAF_WISE_LEAVES", "SYMMETRIC_DEPTH", "check_warm_start_constraints",
           "constraint_record", "tree_constraints", "tree_params"]

# Levels of a symmetric tree when max_depth is None: CatBoost's default depth.
SYMMETRIC_DEPTH = 6
# The default max_leaf_nodes, LightGBM's num_leaves; symmetric trees refuse
# any other value, which they could not honour.
LEAF_WISE_LEAVES = 31


def constraint_record(monotonic_cst, interaction_cst):
    """The constraints of a fit, in a form that compares with ``==``."""
    # Plain lists of ints, which pickle and skops store as they are.
    return (None if monotonic_cst is None else [int(v) for v in monotonic_cst],
            None if interaction_cst is None else [sorted(int(j) for j in group)
                                                  for group in interaction_cst])


def check_warm_start_constraints(estimator, warm, tree_params):
    """Refuse a warm start under constraints other than those the
    model's trees were grown with: the model would promise what its
    earlier trees do not keep. Remember this fit's constraints."""
    grown = constraint_record(tree_params["monotonic_cst"], tree_params["interaction_cst"])
    before = getattr(estimator, "_grown_constraints", None) if warm else None
    if before is not None and before != grown:
        changed = [name for name, old, new in zip(
            ("monotonic_cst", "interaction_cst"), before, grown) if old != new]
        raise ValueError(
            f"warm_start=True adds trees to a model grown with other {' and '.join(changed)}"
            ": its earlier trees do not follow the new ones, so the model would not either. "
            "Fit from scratch (warm_start=False), or set them back to those of the fitted "
            "model."
        )
    estimator._grown_constraints = grown


def tree_params(estimator):
    """The grower's tree parameters of ``estimator``: its constraints checked
    against the data, ``grow_policy`` with ``'auto'`` resolved, and the depth
    of symmetric trees; what symmetric trees cannot grow is refused."""
    monotonic_cst, interaction_cst = tree_constraints(estimator)
    grow_policy = _grow_policy_used(estimator, monotonic_cst, interaction_cst)
    max_depth = estimator.max_depth
    if grow_policy == "symmetric":
        _check_symmetric(estimator, monotonic_cst, interaction_cst)
        if max_depth is None:
            max_depth = SYMMETRIC_DEPTH
    return dict(
        grow_policy=grow_policy,
        max_leaf_nodes=estimator.max_leaf_nodes,
        max_depth=max_depth,
        min_samples_leaf=estimator.min_samples_leaf,
        min_hessian_to_split=estimator.min_hessian_to_split,
        l2_regularization=estimator.l2_regularization,
        monotonic_cst=monotonic_cst,
        interaction_cst=interaction_cst,
    )


def _grow_policy_used(estimator, monotonic_cst, interaction_cst):
    """``grow_policy`` with ``'auto'`` resolved: symmetric trees unless
    the data has categorical features without
    ``target_statistics="combinations"``, the trees have constraints (which
    one split per level cannot honour) or ``max_leaf_nodes`` asks for
    another leaf count; leaf-wise trees then.

    Categorical features alone: a category's effect that depends on other
    features needs splits of its own in each branch, which a level's shared
    split does not give. The combinations' statistics carry those effects,
    and with them symmetric trees rank better again."""
    if estimator.grow_policy != "auto":
        return estimator.grow_policy
    categories_alone = (np.any(estimator.is_categorical_)
                        and estimator.target_statistics != "combinations")
    if (categories_alone or monotonic_cst is not None
            or interaction_cst is not None or estimator.max_leaf_nodes != LEAF_WISE_LEAVES):
        return "lossguide"
    return "symmetric"


def _check_symmetric(estimator, monotonic_cst, interaction_cst):
    """What symmetric trees cannot do, refused with the parameter to change."""
    if estimator.max_leaf_nodes != LEAF_WISE_LEAVES:
        # A leaf count asked for and silently not grown is a wrong model.
        raise ValueError(
            f"max_leaf_nodes={estimator.max_leaf_nodes}, but symmetric trees take their size "
            f"from max_depth alone (2**max_depth leaves) and accept only the default "
            f"max_leaf_nodes={LEAF_WISE_LEAVES}. Set max_depth and leave max_leaf_nodes at "
            f"{LEAF_WISE_LEAVES}, or use grow_policy='lossguide' (or 'auto', 'depthwise') "
            "to grow trees of max_leaf_nodes leaves."
        )
    fixes = {
        "monotonic_cst": (monotonic_cst is not None, "set monotonic_cst=None"),
        "interaction_cst": (interaction_cst is not None, "set interaction_cst=None"),
    }
    refused = {name: fix for name, (given, fix) in fixes.items() if given}
    if refused:
        raise ValueError(
            f"grow_policy='symmetric' does not support {' or '.join(refused)}: one split "
            "shared by a whole level cannot honour them. Use grow_policy='auto' (which "
            "grows leaf-wise trees then), 'lossguide' or 'depthwise'; or "
            + "; ".join(refused.values()) + "."
        )


def tree_constraints(estimator):
    """``monotonic_cst`` and ``interaction_cst`` checked against the
    features of X and as the grower takes them (None for none)."""
    names = getattr(estimator, "feature_names_in_", None)
    monotonic_cst = check_monotonic_cst(estimator.monotonic_cst, estimator.n_features_in_, names)
    categorical = getattr(estimator, "is_categorical_", None)
    if monotonic_cst is not None and categorical is not None:
        both = np.flatnonzero((np.asarray(monotonic_cst) != 0) & categorical)
        if both.size:
            name = names[both[0]] if names is not None else int(both[0])
            raise ValueError(
                f"monotonic_cst constrains feature {name!r}, which is categorical: "
                "categories have no order to be monotonic in (as in scikit-learn's "
                "HistGradientBoosting). Drop its constraint, or leave it out of "
                "categorical_features."
            )
    return (
        monotonic_cst,
        check_interaction_cst(estimator.interaction_cst, estimator.n_features_in_, names),
    )
