"""LambdaMART on clicks with an additive score offset learned per displayed
position, as LightGBM 4.1+ does when its ``Dataset`` is given ``position``;
see :class:`AdditivePositionLambdaRankObjective`.
"""

import numpy as np

from ._base import _check_non_negative_float
from .lambdarank import LambdaRankObjective
from .unbiased_lambdarank import check_positions

# Added to |second derivative| in the Newton step of an offset, so that a
# position with no pair (both derivatives 0) keeps its offset (LightGBM's
# constant).
_NEWTON_DAMPING = 0.001


class AdditivePositionLambdaRankObjective(LambdaRankObjective):
    """LambdaMART on clicks with a learned additive offset per position.

    The clicks are explained by the model's score plus an offset ``b[r]``
    for the position ``r`` at which the document was shown: the lambdas and
    hessians of every row are LambdaMART's
    (:class:`~sklearn_ltr._objectives.lambdarank.LambdaRankObjective`) at the
    scores ``s + b[position]``. The trees learn from these lambdas, so what
    the offsets explain (more clicks at the top because the top is seen) is
    not learned by the trees; predictions are the trees' scores alone.

    After each iteration's gradients, each offset takes one damped Newton
    step on the loss, of length ``learning_rate``:

        D1[r] = -sum of lambdas at r - lambda_b * b[r] * n[r]
        D2[r] = -sum of hessians at r - lambda_b * n[r]
        b[r] <- b[r] + learning_rate * D1[r] / (|D2[r]| + 0.001)

    with ``n[r]`` the number of rows shown at ``r`` and ``lambda_b =
    position_bias_regularization``, an L2 penalty pulling the offsets
    towards 0. This is LightGBM's (``UpdatePositionBiasFactors`` in its
    ``rank_objective.hpp``, LightGBM 4.1+), including the float32 storage
    of the offsets, so that a fit equals LightGBM's ``lambdarank`` with
    ``Dataset(position=...)`` tree for tree. Sample weights multiply the
    lambdas and hessians before they are summed (``n[r]`` counts rows).

    The first iteration uses ``b = 0``: its tree is plain LambdaMART's.

    Parameters
    ----------
    y, offsets, sample_weight, sigma, truncation_level, normalize_lambdas, label_gain
        As :class:`~sklearn_ltr._objectives.lambdarank.LambdaRankObjective`.
    position : array-like of shape (n_samples,)
        1-based displayed rank of each row, rows in query order.
    learning_rate : float
        Step of the offsets' Newton updates: LightGBM takes the boosting's
        learning rate.
    position_bias_regularization : float, default=0.0
        ``lambda_b`` above (LightGBM's
        ``lambdarank_position_bias_regularization``).
    initial_position_offset : ndarray or None, default=None
        Offsets to start from (a warm start continues them); positions
        beyond its length start at 0.

    Attributes
    ----------
    position_offset : ndarray of shape (n_positions,), dtype float32
        The offsets the next gradients use, ``position_offset[r - 1]`` for
        position ``r``; ``n_positions`` is the largest position (or the
        length of ``initial_position_offset``).

    References
    ----------
    LightGBM 4.1.0 release notes, "position bias in learning to rank"
    (microsoft/LightGBM pull request 5929, after Joachims et al., WSDM 2017,
    who model clicks as examination times relevance; here the bias is
    additive on the score scale).
    """

    name = "lambdarank_additive"

    def __init__(
        self,
        y,
        offsets,
        sample_weight=None,
        *,
        position,
        learning_rate,
        position_bias_regularization=0.0,
        initial_position_offset=None,
        **params,
    ):
        super().__init__(y, offsets, sample_weight, **params)
        position = check_positions(position, self.y.shape[0])
        self.learning_rate = _check_non_negative_float(learning_rate, "learning_rate")
        self.position_bias_regularization = _check_non_negative_float(
            position_bias_regularization, "position_bias_regularization")
        self._position_index = position - 1
        start = (np.zeros(0, dtype=np.float32) if initial_position_offset is None
                 else np.asarray(initial_position_offset, dtype=np.float32))
        n_positions = max(int(position.max(initial=1)), start.shape[0])
        self.position_offset = np.zeros(n_positions, dtype=np.float32)
        self.position_offset[:start.shape[0]] = start
        self._shifted_scores = np.empty(self.y.shape[0])
        self._grad = None
        self._hess = None

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        """Fill LambdaMART's lambdas at the scores plus each row's position
        offset; the buffers are kept for :meth:`iteration_statistics`.
        Parameters as :meth:`LambdaRankObjective.gradient_hessian`."""
        self._check_buffers(raw_scores, grad_out, hess_out)
        np.add(raw_scores, self.position_offset[self._position_index], out=self._shifted_scores)
        super().gradient_hessian(self._shifted_scores, grad_out, hess_out)
        self._grad = grad_out
        self._hess = hess_out

    def iteration_statistics(self):
        """The sums the offsets' update reads, by position: lambdas (row
        0), hessians (row 1) and rows (row 2) of the last
        :meth:`gradient_hessian`. A distributed fit adds them over the
        workers and passes the total to :meth:`end_iteration`.

        Returns
        -------
        sums : ndarray of shape (3, n_positions)
        """
        n_positions = self.position_offset.shape[0]
        index = self._position_index
        return np.stack([
            np.bincount(index, weights=self._grad.astype(np.float64), minlength=n_positions),
            np.bincount(index, weights=self._hess.astype(np.float64), minlength=n_positions),
            np.bincount(index, minlength=n_positions).astype(np.float64),
        ])

    def end_iteration(self, statistics):
        """One damped Newton step of every offset (see the class docstring)
        from :meth:`iteration_statistics` summed over all rows."""
        grad_sum, hess_sum, count = statistics
        offset = self.position_offset.astype(np.float64)
        # In LightGBM's order of operations, so that the float32 offsets
        # round as its do.
        first = -grad_sum - offset * self.position_bias_regularization * count
        second = -hess_sum - self.position_bias_regularization * count
        self.position_offset[:] = offset + self.learning_rate * first / (
            np.abs(second) + _NEWTON_DAMPING)

    def fitted_attributes(self):
        """The estimator attribute this objective learns: the offsets."""
        return {"position_offset_": self.position_offset.astype(np.float64)}
