"""Ranking data: svmlight/LETOR files, qid layout helpers, synthetic and bundled data,
simulated click logs."""

from ._clicks import simulate_clicks
from ._example import load_example
from ._interop import group_sizes, qid_from_group_sizes, sort_by_qid, to_frame
from ._letor import load_letor_folds
from ._svmlight import (
    dump_svmlight_ranking,
    load_svmlight_ranking,
    load_svmlight_ranking_files,
)
from ._synthetic import make_ranking

__all__ = [
    "dump_svmlight_ranking",
    "group_sizes",
    "load_example",
    "load_letor_folds",
    "load_svmlight_ranking",
    "load_svmlight_ranking_files",
    "make_ranking",
    "qid_from_group_sizes",
    "simulate_clicks",
    "sort_by_qid",
    "to_frame",
]
