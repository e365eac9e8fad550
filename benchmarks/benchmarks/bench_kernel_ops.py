"""Kernel blocks and the streaming (K never held) matvec and reductions.

``peakmem_*`` report the peak resident memory of the whole benchmark process,
setup data included; compare them with ``peakmem_reference`` (same setup, no
work) to read the memory a call adds.
"""

import numpy as np

from ._common import (COLUMN_SIZES, LARGE, N_LANDMARKS, STREAM_SIZES, WORKERS, data, lowlevel,
                      private, require)

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


def _landmark_gram(c, gamma=0.05, seed=3):
    """A Gaussian landmark Gram matrix W (c, c), positive definite, as a Nyström level
    builds it."""
    X, _ = data(c, seed=seed)
    sq = np.sum(X * X, axis=1)
    D = np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)
    return np.exp(-gamma * D) + 1e-8 * np.eye(c)


class DenseFactorisations:
    """The per-γ factorisations of a Nyström level's landmark Gram matrix: the compiled
    ``symmetric_eigh`` (?syevd) and ``cholesky_inverse`` (?potrf then ?trtri), which
    release the interpreter lock, against the scipy calls a user would write and whose
    bits they match (``scipy.linalg.eigh(driver="evd")``; ``dpotrf`` then ``dtrtri``)."""
    params = ([200, 400, 800], ["compiled", "scipy"])
    param_names = ["c", "implementation"]

    def setup(self, c, implementation):
        ops = private("kernelselect.primitives._kernel_ops")
        if implementation == "compiled":
            if ops is None or not hasattr(ops, "cholesky_inverse_unchecked"):
                raise NotImplementedError("no compiled factorisations in this version")
            self.eigh = ops.symmetric_eigh_unchecked
            self.cholesky_inverse = ops.cholesky_inverse_unchecked
        else:
            import scipy.linalg as sla
            from scipy.linalg import lapack

            def cholesky_inverse(W):
                L, _ = lapack.dpotrf(W, lower=1, clean=1)
                return lapack.dtrtri(L, lower=1)[0].T

            self.eigh = lambda A: sla.eigh(A, driver="evd")
            self.cholesky_inverse = cholesky_inverse
        self.W = _landmark_gram(c)

    def time_symmetric_eigh(self, c, implementation):
        self.eigh(self.W)

    def time_cholesky_inverse(self, c, implementation):
        self.cholesky_inverse(self.W)


class LargeCholesky:
    """The Cholesky factorisation of a kernel matrix of order n on the default threads:
    kernelselect's (blocks of 4096 beyond order 8192, ``utils._lapack``) against
    scipy's ``dpotrf`` (one call), which the threaded OpenBLAS of the scipy 1.17 and
    numpy 2.3 wheels ends with a segmentation fault beyond about 7600 rows per thread;
    scipy is timed only below 15 000 (two threads). Large runs add n = 20 000."""
    params = ([12_000] + ([20_000] if LARGE else []), ["kernelselect", "scipy"])
    param_names = ["n", "routine"]
    timeout = 600

    def setup(self, n, routine):
        module = require(private("kernelselect.utils._lapack"))
        if routine == "scipy":
            if n >= 15_000:
                raise NotImplementedError("scipy's threaded dpotrf faults at this order")
            from scipy.linalg import lapack

            def factor(A):
                return lapack.dpotrf(A, lower=1, clean=0, overwrite_a=1)[1]
            self.factor = factor
        else:
            self.factor = lambda A: module.cholesky_in_place(A, True)
        X, _ = data(n, d=5)
        self.K = np.asfortranarray(require(lowlevel("kernel_block"))(X, X, GAMMA))
        self.K[np.diag_indices(n)] += 1e-3

    def time_cholesky(self, n, routine):
        A = self.K.copy(order="F")
        assert self.factor(A) == 0
