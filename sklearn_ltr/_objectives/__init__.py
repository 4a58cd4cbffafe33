"""Training objectives. Each one lives in its own module and is registered in
``OBJECTIVES`` below."""

from ._base import BaseObjective
from .lambdarank import LambdaRankObjective

# Objective name -> class; adding an objective is one module plus one line here.
OBJECTIVES = {
    "lambdarank": LambdaRankObjective,
}

__all__ = ["OBJECTIVES", "BaseObjective", "LambdaRankObjective"]
