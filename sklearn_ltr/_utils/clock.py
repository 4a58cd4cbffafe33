"""A monotonic clock that compiled code can read.

numba's compiled functions cannot call :func:`time.perf_counter`, and a
ctypes function pointer would keep them out of numba's on-disk cache. The
intrinsic here declares the C library's own clock function by name
(``clock_gettime`` on Linux and macOS, ``QueryPerformanceCounter`` on
Windows), which the process has loaded, so the compiled code that calls it
caches like any other. A compiled loop times its phases with it, as the
Python code around it does with ``perf_counter``.
"""

import sys
import time

import numba
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["ticks", "TICKS_PER_SECOND"]

_I64 = ir.IntType(64)
_I32 = ir.IntType(32)

if sys.platform == "win32":
    import ctypes

    _frequency = ctypes.c_int64()
    ctypes.windll.kernel32.QueryPerformanceFrequency(ctypes.byref(_frequency))
    TICKS_PER_SECOND = float(_frequency.value)

    def _read(builder):
        counter = cgutils.alloca_once(builder, _I64)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(_I32, [_I64.as_pointer()]),
            "QueryPerformanceCounter")
        builder.call(fn, [counter])
        return builder.load(counter)
else:
    TICKS_PER_SECOND = 1e9
    # CLOCK_MONOTONIC: 1 on Linux, 6 on macOS.
    _CLOCK_MONOTONIC = 6 if sys.platform == "darwin" else 1

    def _read(builder):
        # struct timespec {time_t tv_sec; long tv_nsec;}: two 64-bit words
        # on the 64-bit platforms numba supports.
        spec = cgutils.alloca_once(builder, ir.ArrayType(_I64, 2))
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(_I32, [_I32, _I64.as_pointer()]), "clock_gettime")
        words = builder.bitcast(spec, _I64.as_pointer())
        builder.call(fn, [ir.Constant(_I32, _CLOCK_MONOTONIC), words])
        seconds = builder.load(words)
        nanoseconds = builder.load(builder.gep(words, [ir.Constant(_I32, 1)]))
        return builder.add(builder.mul(seconds, ir.Constant(_I64, 1_000_000_000)), nanoseconds)


@intrinsic
def _ticks(typingctx):
    def codegen(context, builder, signature, args):
        return _read(builder)

    return types.int64(), codegen


@njit(cache=True, inline="always")
def ticks():
    """The monotonic clock, in ticks (``TICKS_PER_SECOND`` a second);
    callable from compiled code only. Only differences are meaningful."""
    return _ticks()


if numba.config.DISABLE_JIT:
    # The compiled loops run as Python, which can read the clock itself.
    TICKS_PER_SECOND = 1e9
    ticks = time.perf_counter_ns  # noqa: F811
