"""Work whose speed depends on threads and on the size of a stand-in: one streamed
Nyström level (the row passes of the defaults' levels, on one and two threads), the
large-m Nyström machine fitted by preconditioned conjugate gradients (with the
automatic sample of rows for its preconditioner and with q = m; with float32 and float64
factors), and the per-feature
(ARD) search.

Public entry points only, so that any commit with the feature can be timed; commits
without it are skipped.
"""

import numpy as np

from ._common import LARGE, require


def _public(name):
    try:
        import kernelselect
    except ImportError:
        return None
    return getattr(kernelselect, name, None)


def _regression(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.standard_normal(n)
    return X, y


class StreamedNystroemLevel:
    """``select_kernel`` on one Nyström level of 800 landmarks over 3 γ and 5 α with the
    leave-one-out error: the first pass (Gram products PᵀP of every row block) and the
    second pass (hat-matrix diagonals), on one and two threads."""
    params = ([20_000], [1, 2])
    param_names = ["n", "workers"]
    timeout = 600

    def setup(self, n, workers):
        self.func = require(_public("select_kernel"))
        self.nystroem = require(_public("Nystroem"))
        self.X, self.y = _regression(n, 8)

    def time_level(self, n, workers):
        self.func(self.X, self.y, criterion="eloo", gammas=[0.05, 0.1, 0.2],
                  alphas=np.logspace(-3, 1, 5) * n,
                  approximation=self.nystroem(n_landmarks=800, random_state=0),
                  random_state=0, workers=workers)


class NystroemLevelSpectra(StreamedNystroemLevel):
    """``select_kernel`` on one Nyström level of 800 landmarks over 15 γ with gcv, on
    few rows: the per-γ eigendecompositions (of the landmark Gram matrix and of VᵀV),
    not the first pass, take most of the time; on two threads they run at once where
    they release the interpreter lock."""
    params = ([2000], [1, 2])

    def setup(self, n, workers):
        super().setup(n, workers)
        self.gammas = 2.0 ** np.arange(-7, 8) / 16.0

    def time_level(self, n, workers):
        self.func(self.X, self.y, criterion="gcv", gammas=self.gammas,
                  alphas=np.logspace(-3, 1, 5) * n,
                  approximation=self.nystroem(n_landmarks=800, random_state=0),
                  random_state=0, workers=workers)


class FitNystroemPCG:
    """``KernelRidgeRegressor`` with the Nyström machine of 1000 centres solved by
    preconditioned conjugate gradients (streamed row passes, m × m preconditioner)."""
    params = ([20_000], [1, 2])
    param_names = ["n", "workers"]
    timeout = 600

    def setup(self, n, workers):
        regressor = require(_public("KernelRidgeRegressor"))
        pcg = require(_public("NystroemPCG"))
        self.model = regressor(gamma=0.1, alpha=1e-3 * n, approximation=pcg(n_centres=1000),
                               random_state=0, workers=workers)
        self.X, self.y = _regression(n, 8)

    def time_fit(self, n, workers):
        self.model.fit(self.X, self.y)


class NystroemPCGSampledRows:
    """The same Nyström machine (2000 centres, α/n = 3·10⁻⁷, where the iterations
    depend most on the preconditioner) with the automatic sample of rows
    (``sample_per_centre=None``: 8m here) and with q = m, one thread: the sample's
    2qm² flops against the iterations it saves, in the same run."""
    params = ([50_000], ["auto", "1"])
    param_names = ["n", "sample_per_centre"]
    timeout = 900

    def setup(self, n, sample):
        regressor = require(_public("KernelRidgeRegressor"))
        pcg = require(_public("NystroemPCG"))
        per = None if sample == "auto" else float(sample)
        self.model = regressor(gamma=0.2, alpha=3e-7 * n, random_state=0, workers=1,
                               approximation=pcg(n_centres=2000, sample_per_centre=per))
        self.X, self.y = _regression(n, 10)

    def time_fit(self, n, sample):
        self.model.fit(self.X, self.y)


class NystroemPCGFactors:
    """The Nyström machine beyond 8192 centres (5·10⁴ rows, 10⁴ centres, d = 50, one
    thread) with float64 preconditioner factors, forced float32 ones, and
    ``precision="auto"``, which keeps float32 where K_mm's float32 factor passes its
    test, as on these 50 features (with 10 the smallest pivot sits near the test's
    margin): the float32 preconditioner against the iterations it may add, in the same
    run. Large runs only (about 100 s a fit)."""
    params = ([50_000], ["float64", "float32", "auto"])
    param_names = ["n", "precision"]
    timeout = 1800

    def setup(self, n, precision):
        if not LARGE:
            raise NotImplementedError("set KERNELSELECT_BENCH_LARGE=1 for m = 10⁴")
        regressor = require(_public("KernelRidgeRegressor"))
        pcg = require(_public("NystroemPCG"))
        try:
            recipe = pcg(n_centres=10_000, precision=precision)
        except TypeError:
            raise NotImplementedError("no NystroemPCG(precision=...) in this version") from None
        self.model = regressor(gamma=0.02, alpha=1e-6 * n, random_state=0, workers=1,
                               approximation=recipe)
        self.X, self.y = _regression(n, 50)

    def time_fit(self, n, precision):
        self.model.fit(self.X, self.y)


class SelectArd:
    """``select_kernel(X, y, kernel="ard")``: the isotropic start, the gradient search
    over d + 1 log-parameters and its guard, exact closed-form criteria."""
    params = ([500], [6])
    param_names = ["n", "d"]
    timeout = 600

    def setup(self, n, d):
        self.func = require(_public("select_kernel"))
        self.X, self.y = _regression(n, d)
        try:
            self.func(self.X[:50], self.y[:50], kernel="ard", random_state=0, workers=1)
        except (TypeError, ValueError):
            raise NotImplementedError("no kernel='ard' in this version") from None

    def time_select(self, n, d):
        self.func(self.X, self.y, kernel="ard", random_state=0, workers=1)


class DefaultSelectionLargeN:
    """``select_kernel(X, y)`` with its defaults at large n, one thread: the nested
    Nyström levels, which beyond 4·10⁴ rows score the coarse grid on a 2·10⁴-row
    subsample and only the last level on every row. The default sizes are quick;
    ``KERNELSELECT_BENCH_LARGE=1`` adds 2·10⁵ rows (minutes per call)."""
    params = ([50_000] + ([200_000] if LARGE else []),)
    param_names = ["n"]
    timeout = 3600
    number = 1
    repeat = 1

    def setup(self, n):
        self.func = require(_public("select_kernel"))
        self.X, self.y = _regression(n, 10)

    def time_select(self, n):
        self.func(self.X, self.y, kernel="gaussian", random_state=0, workers=1)


class SelectAndFitLargeN:
    """``KernelSelectionRegressor()`` fit (selection, then the automatic machine: the
    Nyström machine solved by conjugate gradients beyond 5000 rows), one thread: the
    time to a model. Only with ``KERNELSELECT_BENCH_LARGE=1`` (2·10⁵ rows: tens of
    minutes per call on two cores)."""
    params = ([200_000],)
    param_names = ["n"]
    timeout = 7200
    number = 1
    repeat = 1

    def setup(self, n):
        if not LARGE:
            raise NotImplementedError("set KERNELSELECT_BENCH_LARGE=1 for the time to a model")
        estimator = require(_public("KernelSelectionRegressor"))
        machine = require(_public("KernelRidgeRegressor"))
        self.model = estimator(machine(fit_intercept="mean", workers=1), random_state=0)
        self.X, self.y = _regression(n, 10)

    def time_fit(self, n):
        self.model.fit(self.X, self.y)
