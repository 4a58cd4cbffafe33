"""Utilities below the engine: query ids and query-aware splits, sorting
kernels, numba thread control and serial/parallel kernel twins.

Nothing here imports another part of the package but
:mod:`sklearn_ltr.exceptions`.
"""
