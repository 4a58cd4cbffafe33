"""What the boosting loop needs of a training objective.

The engine fits trees to gradients and hessians; which loss they come from is
the objective's business. :class:`Objective` writes down every attribute and
method the boosting loop (:class:`~.booster.TrainingData`) uses, so that an
objective is checked against a list rather than probed for optional hooks:
each hook is a method every objective has, possibly doing nothing.

The training rows come in *groups* of contiguous rows, given by ``offsets``
(group ``g`` is rows ``offsets[g]:offsets[g + 1]``). The engine draws whole
groups when it subsamples rows and when it picks the rows it scores during
training; what a group means is left to the objective and its caller.

For tree ``m`` the loop calls, in this order::

    objective.set_iteration(m)
    objective.prepare_iteration(rng)
    objective.gradient_hessian(raw_scores, gradients, hessians)
    statistics = objective.iteration_statistics()
    if statistics is not None:
        objective.end_iteration(statistics)   # summed over workers first

and, once boosting has ended, ``objective.fitted_attributes()``.
"""

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Objective"]


@runtime_checkable
class Objective(Protocol):
    """The interface of a training objective, as the boosting loop uses it.

    ``isinstance(obj, Objective)`` checks that every member exists; their
    signatures are checked by the tests (``tests/test_interfaces.py``).

    Attributes
    ----------
    y : ndarray of shape (n_samples,), dtype float64
        Labels of the training rows, rows in group order. Passed to the
        training metric along with raw scores and group offsets.
    offsets : ndarray of shape (n_groups + 1,), dtype int64
        Group boundaries: group ``g`` is rows ``offsets[g]:offsets[g + 1]``.
    constant_hessian : float or None
        If not None, every hessian :meth:`gradient_hessian` writes equals
        this value, at every iteration. The row store then accumulates only
        gradients and counts, and takes a hessian sum to be the count times
        this value (which is exact in float64: the histograms are the same).
        None if hessians may differ between rows; nothing scans them to find
        out.
    """

    y: np.ndarray
    offsets: np.ndarray
    constant_hessian: float | None

    def set_iteration(self, iteration: int) -> None:
        """Be told the index of the tree about to be grown.

        Called first for every tree. It counts the trees a warm start kept,
        so iteration-dependent objectives continue their schedule instead of
        restarting it.

        Parameters
        ----------
        iteration : int
            0 for the first tree of the model.
        """

    def prepare_iteration(self, rng) -> None:
        """Draw whatever randomness the next :meth:`gradient_hessian` needs.

        Kernels never draw random numbers themselves, so that results do not
        depend on threads.

        Parameters
        ----------
        rng : numpy.random.Generator
            The generator of this iteration (seeded by the fit's seed and the
            iteration). A data-parallel fit passes an object whose
            ``random(size=None, out=None)`` gives this worker's rows their
            share of the draws of all rows; objectives use only that method.
        """

    def gradient_hessian(self, raw_scores: np.ndarray, grad_out: np.ndarray,
                         hess_out: np.ndarray) -> None:
        """Fill the gradient and hessian of every row.

        Parameters
        ----------
        raw_scores : ndarray of shape (n_samples,), dtype float64
            Current raw scores, rows in group order.
        grad_out : ndarray of shape (n_samples,), dtype float32
            Output: derivative of the loss with respect to each score.
        hess_out : ndarray of shape (n_samples,), dtype float32
            Output: (approximate) second derivative, non-negative. The leaf
            value of the grower is ``-sum(gradients) / (sum(hessians) + l2)``.
        """

    def iteration_statistics(self) -> np.ndarray | None:
        """Sums over this iteration's rows that the objective's own estimates
        depend on, or None if it estimates nothing besides the trees.

        Called after :meth:`gradient_hessian`. A data-parallel fit adds them
        over the workers before :meth:`end_iteration`.

        Returns
        -------
        statistics : ndarray or None
        """

    def end_iteration(self, statistics: np.ndarray) -> None:
        """Update the objective's estimates from :meth:`iteration_statistics`
        summed over all training rows.

        Parameters
        ----------
        statistics : ndarray
        """

    def fitted_attributes(self) -> dict:
        """Attributes learned by the objective, for the estimator.

        Returns
        -------
        attributes : dict
            Name -> value; empty if it learns nothing.
        """
