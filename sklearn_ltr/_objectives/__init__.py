"""Training objectives. Each one lives in its own module and is registered in
``OBJECTIVES`` below.

An objective's module is imported the first time the objective (or its class)
is looked up, not when this package is: a LambdaMART fit then never imports
the modules of XE-NDCG, ListNet or the calibrated objectives.
"""

import importlib
from collections.abc import Mapping

from ._base import BaseObjective, TrainingObjective

# Objective name -> (module, class); adding an objective is one module plus
# one line here.
_REGISTRY = {
    "lambdarank": ("lambdarank", "LambdaRankObjective"),
    "lambdarank_multi": ("multi_objective", "LambdaRankMultiObjective"),
    "lambdarank_pairwise": ("pairwise", "PairwiseLambdaRankObjective"),
    "lambdarank_unbiased": ("unbiased_lambdarank", "UnbiasedLambdaRankObjective"),
    "lambdarank_ipw": ("unbiased_lambdarank", "IPWLambdaRankObjective"),
    "lambdarank_additive": ("additive_position", "AdditivePositionLambdaRankObjective"),
    "xendcg": ("xendcg", "XENDCGObjective"),
    "listnet": ("listnet", "ListNetObjective"),
    "sigmoid": ("rcr", "SigmoidCEObjective"),
    "softmax": ("rcr", "SoftmaxCEObjective"),
    "sigmoid+softmax": ("rcr", "SigmoidSoftmaxCEObjective"),
    "rcr": ("rcr", "RCRObjective"),
    "yetirank": ("yetirank", "YetiRankObjective"),
}
_MODULE_OF_CLASS = {cls: module for module, cls in _REGISTRY.values()}


def _load(module, cls):
    return getattr(importlib.import_module(f".{module}", __name__), cls)


class _Objectives(Mapping):
    """Objective name -> class, importing each module on first lookup."""

    def __getitem__(self, name):
        return _load(*_REGISTRY[name])

    def __iter__(self):
        return iter(_REGISTRY)

    def __len__(self):
        return len(_REGISTRY)

    def __repr__(self):
        return f"OBJECTIVES({sorted(_REGISTRY)})"


OBJECTIVES = _Objectives()


def __getattr__(name):
    # The objective classes, imported on first access (PEP 562).
    if name in _MODULE_OF_CLASS:
        return _load(_MODULE_OF_CLASS[name], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "OBJECTIVES",
    "AdditivePositionLambdaRankObjective",
    "BaseObjective",
    "IPWLambdaRankObjective",
    "LambdaRankMultiObjective",
    "LambdaRankObjective",
    "ListNetObjective",
    "PairwiseLambdaRankObjective",
    "RCRObjective",
    "SigmoidCEObjective",
    "SigmoidSoftmaxCEObjective",
    "SoftmaxCEObjective",
    "TrainingObjective",
    "UnbiasedLambdaRankObjective",
    "XENDCGObjective",
    "YetiRankObjective",
]
