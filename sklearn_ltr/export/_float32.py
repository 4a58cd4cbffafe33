"""Float32 thresholds that reproduce our float64 ``x <= t`` rule.

Serving engines that compare in float32 receive float32 feature values. For a
float32 value ``x`` and our float64 threshold ``t``, ``x <= t`` holds exactly
when ``x <= floor32(t)``, the largest float32 not above ``t``, and exactly
when ``x < next32(floor32(t))``, the float32 right after it. So a ``<=``
engine gets ``floor32(t)`` and a ``<`` engine gets ``next32(floor32(t))``,
and every float32 input then takes the branch it takes in our model.
"""

import numpy as np

__all__ = ["floor32", "strict_threshold32"]


def floor32(t):
    """Largest float32 that is ``<= t``, elementwise (``-inf`` below the
    float32 range).

    Parameters
    ----------
    t : float or ndarray of float64

    Returns
    -------
    ndarray of float32
    """
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore"):
        nearest = t.astype(np.float32)
    # Rounding to nearest may have gone up; step back one float32 then.
    above = nearest.astype(np.float64) > t
    with np.errstate(over="ignore"):
        return np.where(above, np.nextafter(nearest, np.float32(-np.inf)), nearest)


def strict_threshold32(t):
    """Float32 ``T`` with ``x < T`` iff ``x <= t`` for every float32 ``x``.

    Parameters
    ----------
    t : float or ndarray of float64

    Returns
    -------
    ndarray of float32
        ``next32(floor32(t))``; ``+inf`` when ``floor32(t)`` is the largest
        finite float32 (then only ``x = +inf`` goes right, as in our model).
    """
    with np.errstate(over="ignore"):
        return np.nextafter(floor32(t), np.float32(np.inf))
