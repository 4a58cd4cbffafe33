"""The YetiRank ranker; its objective is in
:mod:`sklearn_ltr._objectives.yetirank`."""

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval

from .base import BaseGBRanker
from .docs import _ranker_doc
from .registry import register_model_class

__all__ = ["YetiRankRanker"]


@register_model_class
class YetiRankRanker(BaseGBRanker):
    __doc__ = _ranker_doc(
        """Gradient-boosted trees trained with YetiRank, CatBoost's ranking loss.

    At every iteration each query's documents are ranked ``permutations``
    times by their score plus logistic noise ``log(u / (1 - u))``, ``u``
    uniform (drawn from ``random_state``, so the model does not depend on the
    number of threads). In each noisy ranking the neighbours at positions
    ``j`` and ``j + 1`` form a pair of weight ``0.15 * decay**j`` times their
    label difference; the pairs' weights are averaged over the rankings and
    the trees fit a pairwise logistic loss on them, with Newton leaf values.
    Gulin, Kuralenok and Pavlov, "Winning The Transfer Learning Track of
    Yahoo!'s Learning To Rank Challenge with YetiRank" (JMLR W&CP 14, 2011),
    as CatBoost's ``loss_function="YetiRank"`` implements it (its default
    "Classic" weights and noise); the formulas and the CatBoost sources they
    were read from are in the docstring of the (private) objective
    ``sklearn_ltr._objectives.yetirank.YetiRankObjective``. Queries with
    one document or all labels equal contribute nothing.

    The trees are symmetric, of depth 6, as CatBoost's, by default
    (``grow_policy='auto'``): on the benchmark data they rank better than
    leaf-wise trees with this loss, and fit faster. With monotonic or
    interaction constraints, which symmetric trees do not take, or a
    ``max_leaf_nodes`` other than 31, ``'auto'`` grows leaf-wise trees; so
    it does with categorical features, unless
    ``target_statistics='combinations'`` (with which symmetric trees rank
    best on the benchmark's categorical data); ``grow_policy_`` says which
    shape was grown.

    ``l2_regularization`` is 1 by default, where the other rankers and
    CatBoost's YetiRank (``l2_leaf_reg=1e-20`` for this loss) have no
    penalty: on the benchmark data it keeps symmetric trees from
    overfitting when many are grown, and changes early-stopped models
    little. ``grow_policy='lossguide', l2_regularization=0`` gives the
    models of earlier releases.""",
        """
    permutations : int, default=10
        Number of noisy rankings drawn per query and iteration (CatBoost's
        ``YetiRank:permutations``). More permutations average the pair
        weights better at a proportional cost.
    decay : float in [0, 1], default=0.85
        Factor by which a neighbouring pair's weight shrinks per position
        down the noisy ranking (CatBoost's ``YetiRank:decay``): 0 keeps only
        the top pair, 1 weighs all positions alike.""",
        "YetiRankRanker",
        grow_policy="auto",
        l2_regularization=1.0,
    )

    _objective_name = "yetirank"

    _parameter_constraints = {
        **BaseGBRanker._parameter_constraints,
        "permutations": [Interval(Integral, 1, None, closed="left")],
        "decay": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(
        self,
        *,
        permutations=10,
        decay=0.85,
        n_estimators=100,
        learning_rate=0.1,
        max_leaf_nodes=31,
        max_depth=None,
        grow_policy="auto",
        min_samples_leaf=20,
        min_hessian_to_split=1e-3,
        l2_regularization=1.0,
        max_bins=255,
        categorical_features="from_dtype",
        target_statistics=None,
        max_features=1.0,
        subsample=1.0,
        monotonic_cst=None,
        interaction_cst=None,
        early_stopping="auto",
        validation_fraction=0.1,
        validation_ndcg_k=10,
        scoring=None,
        n_iter_no_change=10,
        tol=1e-7,
        warm_start=False,
        importance_type="gain",
        verbose=0,
        random_state=None,
        n_jobs=None,
    ):
        super().__init__(
            n_estimators=n_estimators,
            learning_rate=learning_rate,
            max_leaf_nodes=max_leaf_nodes,
            max_depth=max_depth,
            grow_policy=grow_policy,
            min_samples_leaf=min_samples_leaf,
            min_hessian_to_split=min_hessian_to_split,
            l2_regularization=l2_regularization,
            max_bins=max_bins,
            categorical_features=categorical_features,
            target_statistics=target_statistics,
            max_features=max_features,
            subsample=subsample,
            monotonic_cst=monotonic_cst,
            interaction_cst=interaction_cst,
            early_stopping=early_stopping,
            validation_fraction=validation_fraction,
            validation_ndcg_k=validation_ndcg_k,
            scoring=scoring,
            n_iter_no_change=n_iter_no_change,
            tol=tol,
            warm_start=warm_start,
            importance_type=importance_type,
            verbose=verbose,
            random_state=random_state,
            n_jobs=n_jobs,
        )
        self.permutations = permutations
        self.decay = decay

    def _objective_params(self):
        return dict(permutations=self.permutations, decay=self.decay)
