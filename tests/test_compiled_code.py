"""The compiled kernels compute the same bits however numba got them.

numba compiles a kernel on its first call or loads it from its on-disk cache.
A fit must not depend on which: the same data and ``random_state`` give the
same model in a fresh process, a warm one and a worker of a search. Kernels
compiled with fastmath broke that (LLVM may round a sum or fuse a multiply-add
differently in each case), so none is, and the softmax and LambdaMART kernels
that were are checked here against themselves loaded from the cache.
"""

import importlib
import os
import subprocess
import sys
import textwrap

import pytest
from _package_modules import package_modules
from numba.core.registry import CPUDispatcher


def _kernels():
    """{qualified name: dispatcher} of every numba kernel of the package whose
    module imports here (optional extras may be missing)."""
    found = {}
    for module_name in sorted(package_modules()):
        if module_name.endswith(".__main__"):  # importing it runs the command line
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher):
                found[f"{module_name}.{name}"] = value
    return found


def test_no_kernel_is_compiled_with_fastmath():
    kernels = _kernels()
    # The kernels that used fastmath are among those read, so this can fail.
    for name in ("sklearn_ltr._objectives.lambdarank._pairs_of_rank",
                 "sklearn_ltr._objectives.listnet._softmax",
                 "sklearn_ltr._objectives.xendcg._xendcg_one_query",
                 "sklearn_ltr._gbdt.histogram_rows._hist_rows"):
        assert name in kernels
    with_fastmath = sorted(name for name, kernel in kernels.items()
                           if kernel.targetoptions.get("fastmath"))
    assert with_fastmath == []


# Gradients of the objectives whose kernels used fastmath, serial and parallel
# kernels, on scores spread from 1 to 1e6 (a large learning rate gives such
# scores; the softmax's near-cancelling terms are where fastmath changed the
# bits). Prints a digest of the bits and the kernels' cache hits and misses.
_GRADIENTS = textwrap.dedent("""
    import hashlib
    import numba
    import numpy as np
    from sklearn_ltr._objectives import lambdarank, listnet, xendcg
    from sklearn_ltr._utils.parallel import parallel_kernels_only

    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 200, size=30)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n = int(offsets[-1])
    y = rng.integers(0, 5, size=n).astype(np.float64)
    objectives = [lambdarank.LambdaRankObjective(y, offsets),
                  xendcg.XENDCGObjective(y, offsets),
                  listnet.ListNetObjective(y, offsets, hessian_terms=2)]
    digest = hashlib.sha256()
    for scale in (1.0, 30.0, 1e3, 1e6):
        scores = rng.standard_normal(n) * scale
        tied = rng.random(n) < 0.2
        scores[tied] = np.round(scores[tied] / scale) * scale
        for objective in objectives:
            for parallel in (False, True):
                objective.prepare_iteration(np.random.default_rng(1))
                grad = np.empty(n, dtype=np.float32)
                hess = np.empty(n, dtype=np.float32)
                if parallel:
                    with parallel_kernels_only():
                        objective.gradient_hessian(scores, grad, hess)
                else:
                    numba.set_num_threads(1)  # the serial twins
                    objective.gradient_hessian(scores, grad, hess)
                    numba.set_num_threads(2)
                digest.update(grad.tobytes())
                digest.update(hess.tobytes())
    kernels = [lambdarank._lambdarank_gradient_hessian,
               lambdarank._lambdarank_gradient_hessian_serial,
               xendcg._xendcg_gradient_hessian, xendcg._xendcg_gradient_hessian_serial,
               listnet._listnet_gradient_hessian, listnet._listnet_gradient_hessian_serial]
    hits = sum(sum(k.stats.cache_hits.values()) for k in kernels)
    misses = sum(sum(k.stats.cache_misses.values()) for k in kernels)
    print(digest.hexdigest(), hits, misses)
""")


def _gradients_in_a_new_process(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), NUMBA_NUM_THREADS="2")
    env.pop("NUMBA_DISABLE_JIT", None)
    done = subprocess.run([sys.executable, "-c", _GRADIENTS], env=env, capture_output=True,
                          text=True, check=True)
    digest, hits, misses = done.stdout.split()
    return digest, int(hits), int(misses)


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="needs the JIT")
def test_kernels_compiled_here_and_loaded_from_the_cache_agree(tmp_path):
    compiled, hits, misses = _gradients_in_a_new_process(tmp_path)
    assert (hits, misses) == (0, 6)  # an empty cache: all six compiled
    loaded, hits, misses = _gradients_in_a_new_process(tmp_path)
    assert (hits, misses) == (6, 0)  # all six loaded
    assert loaded == compiled
