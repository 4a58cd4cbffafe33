"""Ranking data: svmlight/LETOR files, qid layout helpers, synthetic and bundled data."""

from ._interop import group_sizes, qid_from_group_sizes, sort_by_qid, to_frame
from ._svmlight import (
    dump_svmlight_ranking,
    load_svmlight_ranking,
    load_svmlight_ranking_files,
)

__all__ = [
    "dump_svmlight_ranking",
    "group_sizes",
    "load_svmlight_ranking",
    "load_svmlight_ranking_files",
    "qid_from_group_sizes",
    "sort_by_qid",
    "to_frame",
]
