"""The timing loop that the prediction benchmarks share."""

import time


def fastest_alternating(runtimes, threads, repeats, progress=False):
    """Fastest seconds of each runtime at each thread count.

    Every repeat calls each runtime once per thread count, alternating
    between runtimes in an order that rotates from one repeat to the next,
    so that a slow spell of a shared machine does not fall on one runtime.

    Parameters
    ----------
    runtimes : dict
        Name -> {threads: callable}; the callables are already warmed up.
    threads : sequence of int
        Thread counts to time.
    repeats : int
        Calls of each runtime per thread count.
    progress : bool, default=False
        Print a line after each repeat.

    Returns
    -------
    best : dict
        (name, threads) -> fastest seconds.
    """
    best = {(name, t): float("inf") for name in runtimes for t in threads}
    names = list(runtimes)
    for repeat in range(repeats):
        order = names[repeat % len(names):] + names[:repeat % len(names)]
        for t in threads:
            for name in order:
                start = time.perf_counter()
                runtimes[name][t]()
                best[name, t] = min(best[name, t], time.perf_counter() - start)
        if progress:
            print(f"  repeat {repeat + 1}/{repeats} done", flush=True)
    return best
