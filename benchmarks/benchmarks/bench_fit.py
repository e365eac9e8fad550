"""Fitting the machines: one γ, an α path of 1 or 8 values, the LSSVM with bias.

Each strategy of the exact operator (``exact_solver``: one Cholesky per α, one
eigendecomposition, one tridiagonal reduction) and the two low-rank stand-ins
(Nyström with 200 landmarks, 200 random features), all through the operator the
approximation builds.
"""

import numpy as np

from ._common import data, private, require

EXACT_SOLVERS = ("cholesky", "eigh", "tridiagonal")


def fit_machine():
    """``fit_kernel_machine`` (``kernelselect.solvers._exact``, formerly
    ``kernelselect._solvers``), or None on commits without it."""
    solvers = private("kernelselect.solvers._exact", "kernelselect._solvers")
    return getattr(solvers, "fit_kernel_machine", None)


class FitMachine:
    params = ([2000], list(EXACT_SOLVERS) + ["nystrom", "rff"], [1, 8])
    param_names = ["n", "solver", "n_alphas"]
    timeout = 300

    def setup(self, n, solver, n_alphas):
        self.func = require(fit_machine())
        self.X, self.y = data(n, d=10)
        self.alphas = np.logspace(-6, 1, n_alphas) if n_alphas > 1 else np.array([1e-2])
        self.kwargs = ({"exact_solver": solver} if solver in EXACT_SOLVERS
                       else {"approximation": solver, "random_state": 0})

    def time_fit(self, n, solver, n_alphas):
        self.func(self.X, self.y, 0.1, self.alphas, bias=True, workers=1, **self.kwargs)
