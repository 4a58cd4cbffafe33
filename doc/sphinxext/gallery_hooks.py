"""Hooks of the example gallery, named by string in ``conf.py``.

Sphinx caches its configuration by pickling it and warns (an error under
``-W``) about functions defined in ``conf.py`` itself, so the gallery's
callables live in this importable module instead.
"""

from pathlib import Path

import sklearn

# The gallery reads like a tutorial: first steps, then model selection,
# objectives, training control, calibration, robustness and inspection.
# Examples not listed here come after these, by file name.
_READING_ORDER = [
    "plot_quick_start.py",
    "plot_grid_search.py",
    "plot_compare_objectives.py",
    "plot_early_stopping.py",
    "plot_calibration_pareto.py",
    "plot_tiered_labels.py",
    "plot_label_noise.py",
    "plot_inspect_query.py",
]


class ReadingOrder:
    """Sort key of ``within_subsection_order``: the tutorial order above."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __call__(self, filename):
        name = Path(filename).name
        if name in _READING_ORDER:
            return (0, _READING_ORDER.index(name), name)
        return (1, 0, name)


def reset_sklearn_config(gallery_conf, fname):
    """Undo ``sklearn.set_config`` calls of an example before the next one.

    The examples run in one process; one that turns metadata routing on must
    not change how the next one behaves.
    """
    sklearn.set_config(enable_metadata_routing=False)
