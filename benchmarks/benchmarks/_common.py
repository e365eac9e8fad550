"""Shared sizes, data and guarded imports for the asv suite.

Default parameters are modest so that ``asv run --quick`` finishes in minutes on
two cores. Set ``KERNELSELECT_BENCH_LARGE=1`` to add the large sizes:

* column builders (``song_xu_column``, ``labeled_rff_column``, ``rff_features``)
  and ``kernel_block``: n = 10⁶;
* streaming reductions and matvec (``kernel_sums``, ``kernel_matvec``):
  n = 2·10⁴ and 10⁵ (O(n²d) work: expect seconds to minutes per call);
* FFT: a (10⁶, 100) real array and a 128³ grid.
"""

import importlib
import math
import os

import numpy as np

LARGE = os.environ.get("KERNELSELECT_BENCH_LARGE", "") not in ("", "0")

COLUMN_SIZES = [10_000, 100_000] + ([1_000_000] if LARGE else [])
STREAM_SIZES = [2_000, 5_000] + ([20_000, 100_000] if LARGE else [])
WORKERS = [1, 2]

N_FEATURES = 20  # d
N_COMPONENTS = 100  # D, random features
N_LANDMARKS = 200  # Nyström landmarks for kernel_block


def lowlevel(name):
    """``kernelselect.lowlevel.<name>``, or None on commits that do not have it."""
    try:
        from kernelselect import lowlevel as mod
    except ImportError:
        return None
    return getattr(mod, name, None)


def fft_module():
    """``kernelselect.fft``, or None on commits that do not have it."""
    try:
        from kernelselect import fft
    except ImportError:
        return None
    return fft


def private(*names):
    """The first of the private modules ``names`` (newest path first) that this commit
    has, or None. The suite also times commits from before the package was laid out
    by layer, where the private modules sat at its root."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def require(func):
    """Skip (asv treats NotImplementedError in setup as "not applicable")."""
    if func is None:
        raise NotImplementedError("not available in this version of kernelselect")
    return func


def data(n, d=N_FEATURES, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0).astype(dtype)
    return X, y


def rff_weights(d=N_FEATURES, D=N_COMPONENTS, gamma=0.05, dtype=np.float64, seed=1):
    rng = np.random.default_rng(seed)
    W = rng.normal(0.0, math.sqrt(2 * gamma), size=(d, D)).astype(dtype)
    b = rng.uniform(0.0, 2 * math.pi, size=D).astype(dtype)
    return W, b


def grid(n, p):
    """Near-equal factors m_1..m_p with product close to n (exact for the sizes used)."""
    side = round(n ** (1.0 / p))
    m = [side] * (p - 1)
    m.append(max(1, round(n / side ** (p - 1))))
    return tuple(m)
