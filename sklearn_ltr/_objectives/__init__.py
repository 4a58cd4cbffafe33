"""Training objectives. Each one lives in its own module and is registered in
``OBJECTIVES`` below."""

from ._base import BaseObjective
from .lambdarank import LambdaRankObjective
from .listnet import ListNetObjective
from .multi_objective import LambdaRankMultiObjective
from .rcr import RCRObjective, SigmoidCEObjective, SigmoidSoftmaxCEObjective, SoftmaxCEObjective
from .xendcg import XENDCGObjective

# Objective name -> class; adding an objective is one module plus one line here.
OBJECTIVES = {
    "lambdarank": LambdaRankObjective,
    "lambdarank_multi": LambdaRankMultiObjective,
    "xendcg": XENDCGObjective,
    "listnet": ListNetObjective,
    "sigmoid": SigmoidCEObjective,
    "softmax": SoftmaxCEObjective,
    "sigmoid+softmax": SigmoidSoftmaxCEObjective,
    "rcr": RCRObjective,
}

__all__ = [
    "OBJECTIVES",
    "BaseObjective",
    "LambdaRankMultiObjective",
    "LambdaRankObjective",
    "ListNetObjective",
    "RCRObjective",
    "SigmoidCEObjective",
    "SigmoidSoftmaxCEObjective",
    "SoftmaxCEObjective",
    "XENDCGObjective",
]
