"""``python -m sklearn_ltr``: see :mod:`sklearn_ltr.cli`."""

import sys

from .cli import main

sys.exit(main())
