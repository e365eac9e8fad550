"""Gaussian bandwidth selection by DI (random features) or KDI (Nyström landmarks)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import check_grid, check_matrix, check_positive_int, check_random_state
from ..kernels import sample_frequencies, scale_frequencies
from .objectives import (_check_rho, _check_targets, _gaussian_block, _rff_map, di_criterion,
                         encode_targets, kdi_criterion)


def select_gamma_di(X: npt.ArrayLike, y: npt.ArrayLike, gammas: npt.ArrayLike, *,
                    approximation: str = "rff", n_components: int = 100, rho: float = 1e-4,
                    task: str = "classification", random_state: Any = None) -> dict[str, Any]:
    """Choose the Gaussian γ maximising DI (random features) or KDI (Nyström).

    The random draw is shared across γ (common random numbers): RFF uses
    W = √(2γ) W₀ with W₀ ~ N(0, I) and one b ~ U[0, 2π]; Nyström uses one
    uniformly drawn landmark subset. Each γ then costs O(nJ² + J³).

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,)
    gammas : array-like of float > 0
    approximation : {"rff", "nystroem"}
        "rff": criterion DI of √(2/J) cos(XW + b); "nystroem": KDI of
        G = K(X, X_r), B = K(X_r, X_r).
    n_components : int
        J (features or landmarks; landmarks are capped at n).
    rho : float > 0
    task : {"classification", "regression"}
    random_state : None, int or numpy Generator

    Returns
    -------
    dict with "gamma" (the best), "gammas", "scores" (ndarray, the criterion per
    γ), "criterion" ("di" or "kdi").
    """
    X = check_matrix(X, "X", dtype=np.float64, min_rows=2)
    Y = encode_targets(y, task) if task == "classification" else _check_targets(y, X.shape[0], "y")
    if Y.shape[0] != X.shape[0]:
        raise ValueError(f"y has {Y.shape[0]} entries but X has {X.shape[0]} rows; they must match.")
    gammas = check_grid(gammas, "gammas")
    J = check_positive_int(n_components, "n_components")
    rho = _check_rho(rho)
    rng = check_random_state(random_state)
    scores = np.empty(gammas.shape[0])
    if approximation == "rff":
        W0, b = sample_frequencies("gaussian", X.shape[1], J, rng)
        for i, g in enumerate(gammas):
            scores[i] = di_criterion(_rff_map(X, scale_frequencies(W0, g), b), Y, rho)
        name = "di"
    elif approximation in ("nystroem", "nystrom"):
        J = min(J, X.shape[0])
        R = X[np.sort(rng.choice(X.shape[0], size=J, replace=False))]
        for i, g in enumerate(gammas):
            scores[i] = kdi_criterion(_gaussian_block(X, R, g), _gaussian_block(R, R, g), Y, rho)
        name = "kdi"
    else:
        raise ValueError(f"approximation={approximation!r} is not known; use 'rff' or 'nystroem'.")
    return {"gamma": float(gammas[int(np.argmax(scores))]), "gammas": gammas,
            "scores": scores, "criterion": name}
