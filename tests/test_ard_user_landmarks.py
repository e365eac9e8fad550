"""The per-feature search on a Nyström stand-in takes the user's landmarks
(``Nystroem(landmarks=...)``, row indices or points) as the isotropic search does: its
objective is evaluated on exactly those, none swapped or dropped."""

import numpy as np
import pytest

from kernelselect import Nystroem, select_kernel
from kernelselect.ard import _search as _ard_search


def problem(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0, d) + rng.standard_normal(d)
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(n)
    return X, y


@pytest.fixture
def seen(monkeypatch):
    """The landmark points Z and the (centred) rows X of every Nyström evaluation."""
    calls = []
    original = _ard_search.ArdProblem.evaluate

    def spy(self, theta, grad=True, out=None):
        if self.landmarks is not None:
            Z = self.Z if self.Z is not None else self.X[self.landmarks]
            calls.append((np.array(Z), np.array(self.X)))
        return original(self, theta, grad=grad, out=out)

    monkeypatch.setattr(_ard_search.ArdProblem, "evaluate", spy)
    return calls


@pytest.mark.parametrize("seed, n, d, step", [(0, 600, 3, 12), (1, 700, 4, 7)])
def test_user_landmark_points_are_the_objectives(seen, seed, n, d, step):
    """Points (c, d): the objective's Z is those points mapped as X is (c = 50 or 100;
    before, 200 random rows of X replaced them). The points are rows of X moved by δ,
    so Z − X̃[rows] must be δ in the search's coordinates, the same for every point."""
    X, y = problem(seed, n, d)
    rows = np.arange(0, n, step)
    delta = np.linspace(0.1, 0.4, d)
    res = select_kernel(X, y, kernel="ard", approximation=Nystroem(landmarks=X[rows] + delta),
                        random_state=0)
    assert res.details["ard"]["engine"] == "nystrom"
    assert res.details["ard"]["n_landmarks"] == rows.size
    Z, Xc = seen[0]                            # the start's value, on all rows
    assert Z.shape == (rows.size, d)
    scale = (Xc[1] - Xc[0]) / (X[1] - X[0])    # the search's map of X, column by column
    np.testing.assert_allclose(Z - Xc[rows], np.broadcast_to(delta * scale, Z.shape),
                               rtol=1e-9, atol=1e-12)


def test_user_landmark_points_equal_to_rows(seen):
    """Points that are rows of X give the same objective as those rows' indices."""
    X, y = problem(4, 600, 3)
    rows = np.arange(5, 600, 10)
    by_points = select_kernel(X, y, kernel="ard", approximation=Nystroem(landmarks=X[rows]),
                              random_state=0)
    Z, Xc = seen[0]
    np.testing.assert_allclose(Z, Xc[rows], atol=1e-12)
    by_rows = select_kernel(X, y, kernel="ard", approximation=Nystroem(landmarks=rows),
                            random_state=0)
    assert by_points.details["ard"]["start"]["value"] == pytest.approx(
        by_rows.details["ard"]["start"]["value"], rel=1e-9)


@pytest.mark.parametrize("seed, c", [(2, 300), (3, 250)])
def test_user_landmark_rows_are_all_kept(seen, seed, c):
    """Row indices beyond the search's own cap of 200: all c of them (before, a random
    200 of them)."""
    X, y = problem(seed, 600, 3)
    idx = np.sort(np.random.default_rng(seed).choice(600, size=c, replace=False))
    res = select_kernel(X, y, kernel="ard", approximation=Nystroem(landmarks=idx),
                        random_state=0)
    assert res.details["ard"]["landmarks"] == idx.tolist()
    Z, Xc = seen[0]
    np.testing.assert_array_equal(Z, Xc[idx])


def test_user_landmark_points_on_dask(seen):
    """A row-chunked Dask X: the streamed objective's landmarks are the user's points,
    mapped by the one per-column affine map of the lazy standardisation."""
    da = pytest.importorskip("dask.array")
    X, y = problem(5, 600, 3)
    P = X[::12] + 0.1
    res = select_kernel(da.from_array(X, chunks=(200, 3)), da.from_array(y, chunks=200),
                        kernel="ard", approximation=Nystroem(landmarks=P), random_state=0)
    assert res.details["ard"]["dask"] and res.details["ard"]["n_landmarks"] == P.shape[0]
    Z = seen[0][0]
    assert Z.shape == P.shape
    ratio = (Z[1:] - Z[0]) / (P[1:] - P[0])              # the map's scale, column by column
    np.testing.assert_allclose(ratio, np.broadcast_to(ratio[0], ratio.shape), rtol=1e-8)
