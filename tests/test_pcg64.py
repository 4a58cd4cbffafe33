"""random_into draws NumPy's PCG64 stream in compiled code: the same doubles
as ``Generator.random`` and the generator left where that call leaves it, on
the serial and the parallel kernel, on 1 and 2 threads."""

import numpy as np
import pytest

from sklearn_ltr._utils.parallel import parallel_kernels_only
from sklearn_ltr._utils.pcg64 import random_into
from sklearn_ltr._utils.threads import numba_threads


def _both(seed):
    return np.random.default_rng(seed), np.random.default_rng(seed)


# Sizes below and above the parallel threshold, not multiples of the pieces.
@pytest.mark.parametrize("shape", [(0,), (1,), (17,), (3, 7), (10, 9_630), (40_001,)])
@pytest.mark.parametrize("seed", [0, [7, 5, 499], 2**100 + 12345])
def test_same_doubles_and_next_draws_as_numpy(shape, seed):
    ours, numpy_rng = _both(seed)
    numpy_rng.random(5)
    ours.random(5)  # both streams started elsewhere than at the seed
    out = np.empty(shape)
    expected = numpy_rng.random(shape)
    random_into(ours, out)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(ours.random(3), numpy_rng.random(3))
    assert ours.bit_generator.state == numpy_rng.bit_generator.state


@pytest.mark.parametrize("threads", [1, 2])
def test_parallel_kernel_draws_the_stream_on_any_number_of_threads(threads):
    ours, numpy_rng = _both(3)
    out = np.empty(1_000)
    with numba_threads(threads), parallel_kernels_only() as picked:
        random_into(ours, out)
    assert picked["_draw_doubles", threads] == 1
    np.testing.assert_array_equal(out, numpy_rng.random(1_000))


def test_other_generators_and_buffered_halves_fall_back_to_numpy():
    # A bit generator other than PCG64, and a PCG64 holding the second half
    # of a 32-bit draw: NumPy itself draws, so the stream stays NumPy's.
    for make in (lambda: np.random.Generator(np.random.Philox(4)),
                 lambda: np.random.Generator(np.random.MT19937(4))):
        ours, numpy_rng = make(), make()
        out = np.empty(50)
        random_into(ours, out)
        np.testing.assert_array_equal(out, numpy_rng.random(50))
    ours, numpy_rng = _both(9)
    ours.integers(0, 10, dtype=np.uint32)
    numpy_rng.integers(0, 10, dtype=np.uint32)
    assert ours.bit_generator.state["has_uint32"]
    out = np.empty(50)
    random_into(ours, out)
    np.testing.assert_array_equal(out, numpy_rng.random(50))
    assert ours.bit_generator.state == numpy_rng.bit_generator.state
