"""The listwise cross-entropy rankers, :class:`XENDCGRanker` and
:class:`ListNetRanker`. Each only picks an objective and its parameters; the
rest is in :class:`~sklearn_ltr._rankers.base.BaseGBRanker`."""

from numbers import Integral

from sklearn.utils._param_validation import Interval, StrOptions

from .base import BaseGBRanker
from .docs import _ranker_doc
from .registry import register_model_class

__all__ = ["ListNetRanker", "XENDCGRanker"]


@register_model_class
class XENDCGRanker(BaseGBRanker):
    __doc__ = _ranker_doc(
        """Gradient-boosted trees trained with the XE-NDCG cross entropy loss.

    The scores of each query go through a softmax and are fitted, by cross
    entropy, to the target distribution
    ``phi_i = (2**y_i - gamma_i) / sum_j (2**y_j - gamma_j)`` with
    ``gamma_i ~ U[0, 1]`` drawn afresh every iteration (from ``random_state``,
    so the model does not depend on the number of threads). Bruch, "An
    Alternative Cross Entropy Loss for Learning-to-Rank", WWW 2020: the loss is
    a convex bound on mean NDCG, and its leaf values are Newton steps with the
    paper's truncated Neumann series for the inverse Hessian (section 4.4),
    the same steps as LightGBM's ``rank_xendcg``. Queries with one document or
    with all labels equal contribute nothing.""",
        """
    hessian_terms : int, default=2
        Terms of the Neumann series ``(I - S)^-1 ~ I + S + ... + S^K`` used for
        the Newton step: 0 is a plain diagonal Newton step, 2 is the paper's
        (and LightGBM's) choice; more terms approach the exact Newton step
        at O(n) extra cost per query each.""",
        "XENDCGRanker",
    )

    _objective_name = "xendcg"

    _parameter_constraints = {
        **BaseGBRanker._parameter_constraints,
        "hessian_terms": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        hessian_terms=2,
        n_estimators=100,
        learning_rate=0.1,
        max_leaf_nodes=31,
        max_depth=None,
        grow_policy="lossguide",
        min_samples_leaf=20,
        min_hessian_to_split=1e-3,
        l2_regularization=0.0,
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
        self.hessian_terms = hessian_terms

    def _objective_params(self):
        return dict(hessian_terms=self.hessian_terms)


@register_model_class
class ListNetRanker(BaseGBRanker):
    __doc__ = _ranker_doc(
        """Gradient-boosted trees trained with the ListNet softmax cross entropy.

    The scores of each query go through a softmax and are fitted, by cross
    entropy, to a target distribution built from the labels. With
    ``label_distribution="linear"`` the target is ``y / sum(y)``, the form
    Bruch, Wang, Bendersky and Najork analyse in "An Analysis of the Softmax
    Cross Entropy Loss for Learning-to-Rank with Binary Relevance" (ICTIR 2019),
    who show it bounds MRR and NDCG; ``"exponential"`` is the original
    ListNet target ``softmax(y)`` (Cao et al., ICML 2007; eq. 3 of Bruch,
    "An Alternative Cross Entropy Loss for Learning-to-Rank", WWW 2020, whose
    ListNet baseline uses it). Leaf values are Newton steps with the diagonal
    hessian ``rho * (1 - rho)``, or, with ``hessian_terms > 0``, with the
    truncated Neumann series of the inverse Hessian that Bruch (WWW 2020,
    section 4.4) derives for ListNet and XE-NDCG alike (the same steps as
    :class:`XENDCGRanker`'s). Queries with one document, or whose labels sum
    to zero under the linear target, contribute nothing.""",
        """
    label_distribution : {"linear", "exponential"}, default="linear"
        How labels become the target distribution of a query: ``"linear"``
        is ``y_i / sum_j y_j`` (Bruch et al., ICTIR 2019, eq. 6),
        ``"exponential"`` is ``exp(y_i) / sum_j exp(y_j)`` (Bruch, WWW 2020,
        eq. 3).

    hessian_terms : int, default=0
        Terms of the Neumann series ``(I - S)^-1 ~ I + S + ... + S^K`` used for
        the Newton step, as in :class:`XENDCGRanker`: 0, the default, is the
        plain diagonal Newton step of ListNet; 2 is the paper's choice.""",
        "ListNetRanker",
    )

    _objective_name = "listnet"

    _parameter_constraints = {
        **BaseGBRanker._parameter_constraints,
        "label_distribution": [StrOptions({"linear", "exponential"})],
        "hessian_terms": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        label_distribution="linear",
        hessian_terms=0,
        n_estimators=100,
        learning_rate=0.1,
        max_leaf_nodes=31,
        max_depth=None,
        grow_policy="lossguide",
        min_samples_leaf=20,
        min_hessian_to_split=1e-3,
        l2_regularization=0.0,
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
        self.label_distribution = label_distribution
        self.hessian_terms = hessian_terms

    def _objective_params(self):
        return dict(
            label_distribution=self.label_distribution,
            hessian_terms=self.hessian_terms,
        )
