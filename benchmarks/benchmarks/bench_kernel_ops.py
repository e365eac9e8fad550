"""Kernel blocks and the streaming (K never held) matvec and reductions.

``peakmem_*`` report the peak resident memory of the whole benchmark process,
setup data included; compare them with ``peakmem_reference`` (same setup, no
work) to read the memory a call adds.
"""

import numpy as np

from ._common import (COLUMN_SIZES, N_LANDMARKS, STREAM_SIZES, WORKERS, data, lowlevel,
                      require)

GAMMA = 0.05


class KernelBlock:
    params = (COLUMN_SIZES, ["gaussian", "laplacian"], WORKERS)
    param_names = ["n", "kernel", "workers"]

    def setup(self, n, kernel, workers):
        self.func = require(lowlevel("kernel_block"))
        self.X, _ = data(n)
        self.Z = self.X[:N_LANDMARKS].copy()

    def time_kernel_block(self, n, kernel, workers):
        self.func(self.X, self.Z, GAMMA, kernel=kernel, workers=workers)


class KernelMatvec:
    params = (STREAM_SIZES, [1, 8], WORKERS)
    param_names = ["n", "n_columns", "workers"]

    def setup(self, n, n_columns, workers):
        self.func = require(lowlevel("kernel_matvec"))
        self.X, y = data(n)
        rng = np.random.default_rng(2)
        self.V = y.copy() if n_columns == 1 else rng.standard_normal((n, n_columns))

    def time_kernel_matvec(self, n, n_columns, workers):
        self.func(self.X, self.V, GAMMA, workers=workers)

    def peakmem_kernel_matvec(self, n, n_columns, workers):
        self.func(self.X, self.V, GAMMA, workers=workers)

    def peakmem_reference(self, n, n_columns, workers):
        pass


class KernelSums:
    params = (STREAM_SIZES, ["none", "binary"], WORKERS)
    param_names = ["n", "labels", "workers"]

    def setup(self, n, labels, workers):
        self.func = require(lowlevel("kernel_sums"))
        self.X, y = data(n)
        self.labels = None if labels == "none" else y

    def time_kernel_sums(self, n, labels, workers):
        self.func(self.X, GAMMA, labels=self.labels, workers=workers)

    def peakmem_kernel_sums(self, n, labels, workers):
        self.func(self.X, GAMMA, labels=self.labels, workers=workers)

    def peakmem_reference(self, n, labels, workers):
        pass
