"""Small data sets and prepared approximations shared by the operator tests."""

import numpy as np


def binary_data(n, d, seed=0, tilt=0.0):
    """(X, y): n standard normal rows in d features, y = sign(x₀ + tilt·x₁) as ±1."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + tilt * X[:, 1] > 0, 1.0, -1.0)
    return X, y


def prepare(approx, X, y, kernel="gaussian", seed=0):
    """``approx.prepare`` with a generator seeded by ``seed`` and the default threads."""
    return approx.prepare(X, y, kernel=kernel, random_state=np.random.default_rng(seed),
                          workers=None)
