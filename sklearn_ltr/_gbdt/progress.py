"""Progress of a fit, printed when ``verbose`` is on.

On a terminal, ``verbose=1`` keeps one line up to date (carriage return, no
newline until the fit ends), so a 5,000-tree fit does not scroll away the
user's screen; in a log file or a notebook cell that is not a terminal, and
with ``verbose >= 2``, every update is a line of its own.
"""

import sys


class ProgressLine:
    """Print status lines, overwriting the previous one on a terminal.

    Parameters
    ----------
    verbose : int
        1: a single updating line on a terminal, plain lines elsewhere;
        2 or more: always plain lines.
    stream : file-like, default=None
        Where to write; ``sys.stdout`` at construction time if None.
    """

    def __init__(self, verbose, stream=None):
        self.stream = sys.stdout if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.overwrite = verbose == 1 and isatty is not None and isatty()
        self._width = 0

    def update(self, text):
        """Show ``text`` as the current status."""
        if self.overwrite:
            # Pad with spaces so that a shorter line hides the longer one.
            self.stream.write("\r" + text.ljust(self._width))
            self._width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self, text=None):
        """End the updating line, then print ``text`` (if any) on its own."""
        if self.overwrite and self._width:
            self.stream.write("\n")
            self._width = 0
        if text is not None:
            self.stream.write(text + "\n")
        self.stream.flush()
