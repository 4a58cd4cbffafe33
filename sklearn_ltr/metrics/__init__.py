"""Query-aware ranking and calibration metrics."""

from ._calibration import (
    query_ece,
    query_ece_per_query,
    query_log_loss,
    query_log_loss_per_query,
)
from ._dcg import (
    cndcg_score,
    cndcg_score_per_query,
    dcg_score,
    dcg_score_per_query,
    ndcg_score,
    ndcg_score_per_query,
)
from ._ranking import (
    err_score,
    err_score_per_query,
    map_score,
    map_score_per_query,
    mrr_score,
    mrr_score_per_query,
    precision_at_k,
    precision_at_k_per_query,
)
from ._scorer import (
    RankingScorer,
    make_ranking_scorer,
    map_scorer,
    mrr_scorer,
    ndcg_scorer,
)

__all__ = [
    "RankingScorer",
    "make_ranking_scorer",
    "map_scorer",
    "mrr_scorer",
    "ndcg_scorer",
    "cndcg_score",
    "cndcg_score_per_query",
    "dcg_score",
    "dcg_score_per_query",
    "err_score",
    "err_score_per_query",
    "map_score",
    "map_score_per_query",
    "mrr_score",
    "mrr_score_per_query",
    "ndcg_score",
    "ndcg_score_per_query",
    "precision_at_k",
    "precision_at_k_per_query",
    "query_ece",
    "query_ece_per_query",
    "query_log_loss",
    "query_log_loss_per_query",
]
