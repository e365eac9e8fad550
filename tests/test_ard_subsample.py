"""The per-feature search of a real target beyond the evidence's exact range: the
evidence on a random subsample, confirmed on all rows (``objective="evidence_subsample"``,
what ``objective="auto"`` runs there)."""

import warnings

import numpy as np
import pytest

import kernelselect as ks
from kernelselect.selection import _ard_select
from kernelselect.selection._ard_select import EVIDENCE_MAX_N, EVIDENCE_SUBSAMPLE, select_ard

N = EVIDENCE_MAX_N + 300


def _data(target, seed, n=N, d=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, target(X) + 0.1 * rng.standard_normal(n)


def _select(X, y, kernel="ard"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # grid-edge notes of the isotropic start
        return ks.select_kernel(X, y, kernel=kernel, random_state=0)


def test_beyond_the_exact_range_the_subsample_evidence_finds_the_relevant_features():
    # two of five features carry the target; before, the search here was leave-one-out
    # on 200 landmarks (objective "loo")
    X, y = _data(lambda X: np.sin(2 * X[:, 0]) + X[:, 1], seed=0)
    res = _select(X, y)
    info = res.details["ard"]
    assert info["objective"] == "evidence_subsample"
    assert info["optimum"]["rows"] == EVIDENCE_SUBSAMPLE
    assert info["guard"]["rule"] == "confirm" and info["kept"]
    assert info["guard"]["optimum"] < info["guard"]["start"]
    gamma = np.asarray(res.best_gamma)
    assert gamma[0] > 10 * gamma[2:].max() and gamma[1] > 10 * gamma[2:].max()


@pytest.mark.parametrize("seed", [1, 2])
def test_the_choice_follows_the_confirmation(seed):
    # a target of every feature alike, and pure noise: whatever is kept, it is kept
    # exactly when both checks pass, and otherwise γ is the isotropic one per feature
    targets = {1: lambda X: np.sin(np.linalg.norm(X, axis=1)), 2: lambda X: 0.0 * X[:, 0]}
    X, y = _data(targets[seed], seed=seed, d=4)
    res = _select(X, y)
    info = res.details["ard"]
    g = info["guard"]
    expected = bool(g["second_opinion"]["kept"] and g["optimum"] < g["start"])
    assert info["kept"] == expected
    if not expected:
        gamma = np.asarray(res.best_gamma)
        assert np.all(gamma == gamma[0])


def test_seeded_runs_agree():
    X, y = _data(lambda X: X[:, 0] * X[:, 1], seed=3, d=3)
    a, b = _select(X, y), _select(X, y)
    np.testing.assert_array_equal(a.best_gamma, b.best_gamma)
    assert a.best_alpha == b.best_alpha


def test_bad_settings_are_named():
    X, y = _data(lambda X: X[:, 0], seed=4, d=3)
    iso = _select(X, y, kernel="gaussian")
    with pytest.raises(ValueError, match="guard='nested'"):
        select_ard(X, y, isotropic=iso, objective="evidence_subsample", guard="nested")
    with pytest.raises(ValueError, match="approximation='auto'"):
        select_ard(X, y, isotropic=iso, objective="evidence_subsample", engine="exact")
    labels = np.where(y > 0, 1, -1)
    iso_c = _select(X, labels, kernel="gaussian")
    with pytest.raises(ValueError, match="real target"):
        select_ard(X, labels, isotropic=iso_c, objective="evidence_subsample")
    with pytest.raises(ValueError, match="guard='confirm'"):
        select_ard(X, y, isotropic=iso, objective="loo", guard="confirm")
    assert "evidence_subsample" in _ard_select.OBJECTIVES


@pytest.mark.parametrize("landmarks", ["drawn", "given"])
def test_the_confirmation_is_the_press_of_the_dense_nystroem_machine(landmarks):
    """The confirmation's two numbers, written from the formula: the leave-one-out
    residuals of the LSSVM with bias on K̃ = C W⁺ Cᵀ of the per-feature kernel over the
    isotropic selection's landmarks (all the rows it names; else the search's draw),
    in closed form from the bordered system's inverse, mean squared, at the isotropic
    start and at the subsample's optimum."""
    import reference as ref

    X, y = _data(lambda X: np.sin(2 * X[:, 0]) + X[:, 1], seed=6, n=260, d=3)
    approximation = ("nystrom" if landmarks == "drawn"
                     else ks.Nystroem(landmarks=np.arange(0, 260, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        iso = ks.select_kernel(X, y, kernel="gaussian", approximation=approximation,
                               standardize=False, random_state=0)
    res = select_ard(X, y, isotropic=iso, objective="evidence_subsample", random_state=0,
                     standardize=False)
    info = res.details["ard"]
    guard = info["guard"]
    named = iso.details["approximation_params"]["landmarks"]
    assert (named is None) == (landmarks == "drawn")
    marks = np.asarray(info["landmarks"] if named is None else named)
    assert guard["n_landmarks"] == marks.size == (130 if named is None else 87)
    d = X.shape[1]
    points = {"start": (np.full(d, info["start"]["gamma"]), info["start"]["alpha"]),
              "optimum": (np.asarray(info["optimum"]["gamma"]), info["optimum"]["alpha"])}
    for name, (gamma, alpha) in points.items():
        Kt = ref.ard_nystroem_matrix(X, marks, gamma, marks.size, 1e-8)
        assert guard[name] == pytest.approx(ref.crit_eloo(Kt, y, alpha, "squared"),
                                            rel=1e-7), name
    assert info["kept"] == bool(guard["second_opinion"]["kept"]
                                and guard["optimum"] < guard["start"])
    expected = points["optimum"] if info["kept"] else points["start"]
    np.testing.assert_allclose(res.best_gamma, expected[0], rtol=1e-12)
    assert res.best_alpha == pytest.approx(expected[1], rel=1e-12)
