"""Resident memory of the benchmark's own process, read from ``/proc``
(Linux): its current size, its peak, and a reset of the peak."""

import os


def rss_bytes():
    """Current resident set size."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes():
    """Peak resident set size of this process's own address space (VmHWM).

    Not ``getrusage().ru_maxrss``: Linux carries the parent's peak over fork
    and exec into the child's ``ru_maxrss``, so a child started by a parent
    that holds X would report at least the parent's size.
    """
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def reset_peak_rss():
    """Make the peak (VmHWM) start again from the current size, so that a
    peak read later is that of the work in between."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
