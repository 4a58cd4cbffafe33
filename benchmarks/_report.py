"""Helpers the replication reports share: p-value formatting, paired t-tests
over pooled per-query values, Markdown tables of metrics at several cutoffs
with their significance, and the code version a report was made at."""

import os
import subprocess
import time

import numpy as np
from scipy.stats import ttest_rel

# The modules a fit runs through: uncommitted changes elsewhere (e.g. the CLI)
# cannot change a report's numbers.
_FIT_MODULES = ("_gbdt", "_objectives", "_rankers", "_utils", "metrics", "datasets")


def fmt_p(p):
    """A p-value with 4 decimals, or in scientific notation below 1e-3."""
    return f"{p:.2e}" if p < 1e-3 else f"{p:.4f}"


def paired(a, b):
    """Mean difference ``a - b`` and paired t-test p-value per row.

    Parameters
    ----------
    a, b : ndarray of shape (n_cutoffs, n_queries)
        Per-query values of two models on the same queries; NaN in ``a``
        (a query the metric skips) drops the query from that row.

    Returns
    -------
    tests : list of (float, float)
        ``(mean difference, p)`` per row; p is 1 when the two rows are equal.
    """
    out = []
    for row_a, row_b in zip(a, b):
        ok = ~np.isnan(row_a)
        diff = row_a[ok] - row_b[ok]
        p = ttest_rel(row_a[ok], row_b[ok]).pvalue if np.any(diff != 0) else 1.0
        out.append((float(diff.mean()), float(p)))
    return out


def fmt_percent(mean, p=None):
    """Mean in percent, bold if p < 0.05 and italic if p < 0.10."""
    text = f"{100 * mean:.2f}"
    if p is not None and p < 0.05:
        return f"**{text}**"
    if p is not None and p < 0.10:
        return f"*{text}*"
    return text


def table_header(first, cutoffs):
    """Header and separator of a table with one column per cutoff ``@k``."""
    return (f"| {first} | " + " | ".join(f"@{k}" for k in cutoffs) + " |\n|---|"
            + "---|" * len(cutoffs))


def table_row(name, values, tests=None):
    """Values in percent, marked by the p-values of ``tests`` (see :func:`paired`)."""
    cells = [fmt_percent(v, None if tests is None else tests[i][1]) for i, v in enumerate(values)]
    return f"| {name} | " + " | ".join(cells) + " |"


def p_row(name, tests):
    """Differences in points with their p-values, one cell per cutoff."""
    return f"| {name} | " + " | ".join(f"{d * 100:+.2f} (p={p:.3f})" for d, p in tests) + " |"


def count_sig(tests, sign=1, alpha=0.05):
    """Cutoffs whose difference has sign ``sign`` and p < ``alpha``."""
    return sum(1 for d, p in tests if p < alpha and sign * d > 0)


def mean_diff(tests):
    """Mean difference over the cutoffs, in points."""
    return 100 * np.mean([d for d, _ in tests])


def compare(tests, paper, paper_sign=+1):
    """One sentence: significance counts, mean difference, and the paper's
    finding, whose difference had sign ``paper_sign``."""
    up, down = count_sig(tests, +1), count_sig(tests, -1)
    text = (f"significantly better at {up} and worse at {down} of {len(tests)} cutoffs (mean "
            f"difference {mean_diff(tests):+.2f} points)")
    same = "the same sign as" if paper_sign * mean_diff(tests) > 0 else "the opposite sign to"
    if up == 0 and down == 0:
        text += f": {same} the paper ({paper}), but within noise here"
    else:
        text += f": {same} the paper ({paper})"
    return text


def minutes_logger(start):
    """A ``log(msg)`` that prints ``msg`` after the minutes since ``start``
    (a ``time.perf_counter()`` value), flushed, for a long run's progress."""
    def log(msg):
        print(f"[{(time.perf_counter() - start) / 60:5.1f} min] {msg}", flush=True)
    return log


def code_version():
    """Commit of the checkout when the benchmark started (this module's
    import), and whether the modules a fit runs through had uncommitted
    changes then: a long run's report names the code its fits ran, even if
    the checkout moves on before it is written."""
    return _VERSION_AT_START


def _code_version_now():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        commit = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", here, "status", "--porcelain", "--",
             *(f"../sklearn_ltr/{m}" for m in _FIT_MODULES)],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "an unknown commit"
    return f"commit {commit}" + (" with uncommitted library changes" if dirty else "")


_VERSION_AT_START = _code_version_now()
