"""Where a warning points: the user's call, past this package's frames."""

import sys

__all__ = ["stacklevel_outside"]


def stacklevel_outside(packages):
    """``stacklevel`` for a ``warnings.warn`` call in the caller of this
    function that names the first frame whose module is in none of
    ``packages`` (top-level names), however many wrappers lie between."""
    frame = sys._getframe(2)  # the frame that called our caller
    level = 2
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.split(".")[0] not in packages:
            return level
        frame = frame.f_back
        level += 1
    return 2
