"""The selection driver end to end: ``select_kernel`` over 15 γ.

Exact criteria on the dense kernel matrix (Cholesky factors of K + αI against one
eigendecomposition per γ) and the approximations at a size where they are the only
practical choice. One α unless the parameter says otherwise.
"""

import numpy as np

from ._common import LARGE, data, private, require

N_GAMMAS = 15


def select_kernel():
    try:
        from kernelselect import select_kernel as func
    except ImportError:
        return None
    return func


def exact(dense_solver):
    """``Exact(method="dense", dense_solver=...)``, or None where the option is missing."""
    try:
        from kernelselect import Exact
    except ImportError:
        return None
    try:
        from kernelselect.operators.dense import DENSE_SOLVERS
    except ImportError:               # before the strategies: "auto" and "eigh" only
        DENSE_SOLVERS = ("auto", "eigh")
    if dense_solver not in DENSE_SOLVERS:
        return None
    try:
        return Exact(method="dense", dense_solver=dense_solver)
    except TypeError:
        return None


def gammas(d):
    return 2.0 ** np.arange(-7, 8) / d


class SelectExact:
    params = ([1000, 2000] + ([4000] if LARGE else []), ["auto", "eigh", "tridiagonal"],
              ["ree", "ree,eloo,gcv,kta,mmd"], [1, 8])
    param_names = ["n", "dense_solver", "criteria", "n_alphas"]
    timeout = 600

    def setup(self, n, dense_solver, criteria, n_alphas):
        self.func = require(select_kernel())
        self.approx = require(exact(dense_solver))
        self.X, self.y = data(n, d=10)
        self.alphas = np.logspace(-3, 1, n_alphas) * n * 1e-3 if n_alphas > 1 else (n * 1e-3,)

    def time_select(self, n, dense_solver, criteria, n_alphas):
        self.func(self.X, self.y, gammas=gammas(10), alphas=self.alphas, criterion=criteria.split(","),
                  approximation=self.approx, random_state=0, workers=1)


class SelectApproximate:
    params = ([10_000] + ([100_000] if LARGE else []), ["nystrom", "rff", "mcm", "random_mcm"])
    param_names = ["n", "approximation"]
    timeout = 600

    def setup(self, n, approximation):
        self.func = require(select_kernel())
        self.X, self.y = data(n, d=10)
        self.criterion = "random_kta" if approximation == "random_mcm" else "ree"

    def time_select(self, n, approximation):
        self.func(self.X, self.y, gammas=gammas(10), alphas=(n * 1e-3,),
                  criterion=self.criterion, approximation=approximation, random_state=0,
                  workers=1)


class SelectDefaults:
    """``select_kernel(X, y)`` with every default (criterion, grid, the Nyström levels)
    on one thread and on the default threads: the front door's time, level by level
    the cost studied in studies/speed_profile.py."""
    params = ([1_000, 3_000, 10_000], [1, None])
    param_names = ["n", "workers"]
    timeout = 600

    def setup(self, n, workers):
        self.func = require(select_kernel())
        self.X, self.y = data(n, d=8)

    def time_select(self, n, workers):
        self.func(self.X, self.y, random_state=0, workers=workers)


class DefaultThreads(SelectDefaults):
    """``select_kernel(X, y)`` with every default, on one thread and on the default
    threads, at the sizes where the default thread count is decided: n = 200 and 2000
    (one thread by rule), 2·10⁴ (both cores where they are free; the in-memory passes
    in at least 8 row blocks). The ratio of the two is the default threads' gain, or
    loss beside a busy process."""
    params = ([200, 2_000, 20_000], [1, None])
    timeout = 900


class SelectExactWindow:
    """``select_kernel(X, y)`` on a smooth, low-noise regression whose Nyström levels do
    not settle below n/2 landmarks, so the defaults end in the exact window; ``"half"``
    runs a last Nyström level of min(n/2, 800) landmarks there instead
    (studies/speed_exact_region.py weighs the two)."""
    params = ([1_000, 2_000], ["exact", "half"])
    param_names = ["n", "last_level"]
    timeout = 600

    def setup(self, n, last_level):
        self.func = require(select_kernel())
        _policy = private("kernelselect._policy", "kernelselect.selection._policy")
        if _policy is None:
            raise NotImplementedError("no _policy module in this version")
        if not hasattr(_policy, "LAST_LEVEL"):
            raise NotImplementedError("no LAST_LEVEL rule in this version")
        self.policy = _policy
        rng = np.random.default_rng(0)
        self.X = rng.standard_normal((n, 4))
        self.y = (np.sin(3 * self.X[:, 0]) * self.X[:, 1] + np.cos(2 * self.X[:, 2])
                  + 0.1 * rng.standard_normal(n))

    def time_select(self, n, last_level):
        self.policy.LAST_LEVEL = last_level
        try:
            self.func(self.X, self.y, random_state=0, workers=1)
        finally:
            self.policy.LAST_LEVEL = "exact"
