"""Song–Xu MCM on real data: grid choice, ordering, spacing fit and the FFT operator."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelselect.primitives._grid import (_principal_directions, choose_grid, fit_spacing,
                                           grid_index_differences, grid_order)
from kernelselect.operators.mcm import MCM


import reference as ref
FAST = settings(deadline=None, max_examples=30)


# -- grid shape ----------------------------------------------------------------


def _brute_best(n, p, r=2.0):
    """Largest product of p factors in [a, r·a] (a ≥ 2) not above n, by enumeration."""
    best = 0

    def walk(prefix, prod):
        nonlocal best
        if len(prefix) == p:
            if max(prefix) <= r * min(prefix):
                best = max(best, prod)
            return
        lo = prefix[-1] if prefix else 2
        for f in range(lo, n // prod + 1):
            walk(prefix + [f], prod * f)

    walk([], 1)
    return best


@FAST
@given(n=st.integers(4, 150), p=st.integers(1, 3))
def test_choose_grid_is_largest_well_factorable(n, p):
    if n < 2 ** p:
        with pytest.raises(ValueError, match="levels"):
            choose_grid(n, p)
        return
    m, n_used = choose_grid(n, p)
    assert len(m) == p and int(np.prod(m)) == n_used <= n
    assert min(m) >= 2 and max(m) <= 2 * min(m)
    assert list(m) == sorted(m, reverse=True)
    assert n_used == (n if p == 1 else _brute_best(n, p))


def test_choose_grid_examples():
    assert choose_grid(1000, 3) == ((10, 10, 10), 1000)
    assert choose_grid(683, 2) == ((31, 22), 682)
    assert choose_grid(10000, 2) == ((100, 100), 10000)


@pytest.mark.parametrize("bad", [0, -1])
def test_choose_grid_rejects_levels(bad):
    with pytest.raises(ValueError, match="levels"):
        choose_grid(100, bad)


def test_choose_grid_rejects_ratio():
    with pytest.raises(ValueError, match="max_ratio"):
        choose_grid(100, 2, max_ratio=0.5)


# -- grid order ------------------------------------------------------------------


@FAST
@given(seed=st.integers(0, 2 ** 31), m=st.lists(st.integers(1, 5), min_size=1, max_size=3))
def test_grid_order_is_a_permutation(seed, m):
    rng = np.random.default_rng(seed)
    n = int(np.prod(m))
    X = rng.normal(size=(n, len(m) + 1))
    order = grid_order(X, m)
    assert np.array_equal(np.sort(order), np.arange(n))


def test_grid_order_slabs_follow_first_principal_direction():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)) * np.array([10.0, 3.0, 1.0])
    order = grid_order(X, (6, 10))
    proj = (X - X.mean(0)) @ _principal_directions(X, 2)
    x0 = proj[order, 0].reshape(6, 10)
    assert np.all(x0.max(axis=1)[:-1] <= x0.min(axis=1)[1:]) or np.all(
        x0.min(axis=1)[:-1] >= x0.max(axis=1)[1:]
    )
    x1 = proj[order, 1].reshape(6, 10)
    d = np.diff(x1, axis=1)
    assert np.all(d >= 0) or np.all(d <= 0)


def _rotated_grid(m, h, seed, d=None):
    rng = np.random.default_rng(seed)
    p = len(m)
    d = d or p + 1
    idx = np.array(list(itertools.product(*[range(k) for k in m])), dtype=float)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    X = (idx * h) @ Q[:p] + rng.normal(size=d)
    return X, idx


@FAST
@given(seed=st.integers(0, 2 ** 31),
       m=st.lists(st.integers(2, 6), min_size=1, max_size=3),
       h=st.lists(st.floats(0.1, 3.0), min_size=3, max_size=3))
def test_fit_spacing_recovers_an_exact_grid(seed, m, h):
    h = np.array(h[: len(m)])
    X, _ = _rotated_grid(m, h, seed)
    got = fit_spacing(X, m, n_pairs=500, random_state=seed)
    np.testing.assert_allclose(got, h, rtol=1e-8)


def test_mcm_prepare_recovers_a_shuffled_grid():
    m, h = (8, 5), np.array([1.3, 0.7])       # distinct extents: PCs are the axes
    X, idx = _rotated_grid(m, h, 3)
    perm = np.random.default_rng(1).permutation(len(X))
    state = MCM(levels=2, periodic=False).prepare(X[perm], None, random_state=0)
    assert state.m == m and state.dropped.size == 0
    np.testing.assert_allclose(state.h, h, rtol=1e-8)
    # the grid order puts every point at its own cell (up to reversing a level)
    placed = idx[perm][state.order]
    cells = np.array(list(itertools.product(*[range(k) for k in m])), dtype=float)
    for s in range(2):
        assert np.array_equal(placed[:, s], cells[:, s]) or np.array_equal(
            placed[:, s], m[s] - 1 - cells[:, s]
        )


def test_grid_index_differences():
    m = (5, 4)
    a = np.ravel_multi_index((np.array([0, 4]), np.array([0, 3])), m)
    b = np.ravel_multi_index((np.array([4, 0]), np.array([1, 0])), m)
    np.testing.assert_array_equal(grid_index_differences(a, b, m), [[4, 1], [4, 3]])
    np.testing.assert_array_equal(grid_index_differences(a, b, m, periodic=True), [[1, 1], [1, 1]])


# -- operator vs the explicit U --------------------------------------------------------


def _setup(seed, n=37, d=4, levels=2, kernel="gaussian", gamma=0.2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(rng.normal(size=n) > 0, 1.0, -1.0)
    A = MCM(levels=levels, clip_negative=False)
    state = A.prepare(X, y, kernel=kernel, random_state=seed)
    op = A.build(X, y, gamma, kernel=kernel, state=state)
    U = ref.multilevel_circulant(ref.song_xu_column(op.details["m"], op.details["h"], gamma, kernel))
    return X, y, op, U


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10 * max(1.0, np.max(np.abs(b))))


@pytest.mark.parametrize("levels,kernel", [(1, "gaussian"), (2, "gaussian"), (3, "laplacian")])
@pytest.mark.parametrize("seed", [0, 1])
def test_operator_matches_dense(levels, kernel, seed):
    X, y, op, U = _setup(seed, levels=levels, kernel=kernel, gamma=0.5)
    assert op.n == U.shape[0] == op.indices.size
    w, V = np.linalg.eigh(U)
    alphas = np.array([0.3, 1.0, 4.0])
    shift = max(0.0, -w.min()) + 0.1          # keep λ + α away from 0 on indefinite U
    g = lambda lam: 1.0 / (lam + shift + 1.0)
    gL = lambda lam: 1.0 / (lam[:, None] + shift + alphas[None, :])
    P = np.column_stack([op.restrict(y), op.restrict(np.ones_like(y)), op.restrict(X[:, 0])])
    G = (V * g(w)) @ V.T
    _close(op.quadratic(g, P), P.T @ G @ P)
    _close(op.trace(g), np.trace(G))
    _close(op.diagonal_function(g), np.diag(G))
    _close(op.apply_function(g, P), G @ P)
    GL = np.stack([(V * gL(w)[:, j]) @ V.T for j in range(3)], axis=-1)
    _close(op.quadratic(gL, P), np.einsum("ia,ijl,jb->abl", P, GL, P))
    _close(op.trace(gL), np.einsum("iil->l", GL))
    _close(op.diagonal_function(gL), np.einsum("iil->il", GL))
    _close(op.apply_function(gL, P), np.einsum("ijl,jm->iml", GL, P))
    _close(op.diagonal(), np.diag(U))
    _close(op.power_quadratic(2, P), P.T @ U @ U @ P)
    _close(op.power_trace(3), np.trace(U @ U @ U))
    _close(np.sort(op.eigenvalues), w)


@pytest.mark.parametrize("levels,n", [(1, 37), (1, 30), (2, 41), (3, 64)])
def test_real_transforms_agree_with_the_complex_path(levels, n):
    # the operator runs rfftn/irfftn on the half spectrum; the complex fftn of the
    # same column and probes must give the same numbers to rounding
    X, y, op, U = _setup(7, n=n, d=4, levels=levels)
    shape, axes = op.shape, tuple(range(len(op.shape)))
    lam = np.real(np.fft.fftn(op.column)).ravel()
    np.testing.assert_allclose(op.eigenvalues, lam, rtol=0, atol=1e-12 * np.abs(lam).max())
    P = np.random.default_rng(1).normal(size=(op.n, 3))
    C = np.fft.fftn(P.reshape(shape + (3,)), axes=axes).reshape(op.n, 3) / np.sqrt(op.n)
    np.testing.assert_allclose(op.project(P), C, rtol=0, atol=1e-12 * np.abs(C).max())
    g = lambda v: 1.0 / (np.abs(v) + 0.7)
    want = np.real(np.fft.ifftn((g(lam)[:, None] * C * np.sqrt(op.n)).reshape(shape + (3,)),
                                axes=axes)).reshape(op.n, 3)
    np.testing.assert_allclose(op.apply_function(g, P), want, rtol=0,
                               atol=1e-12 * np.abs(want).max())
    quad = np.real(C.conj().T @ (g(lam)[:, None] * C))
    np.testing.assert_allclose(op.quadratic(g, P), quad, rtol=0, atol=1e-12 * np.abs(quad).max())


def test_restrict_puts_probes_in_grid_order():
    X, y, op, U = _setup(5, n=41, levels=2)
    assert op.details["dropped"] == 41 - op.n
    rows = np.concatenate([op.indices, op.details["dropped_rows"]])
    assert np.array_equal(np.sort(rows), np.arange(41))
    np.testing.assert_array_equal(op.restrict(y), y[op.indices])


def test_projection_is_orthonormal():
    X, y, op, U = _setup(2)
    P = np.random.default_rng(0).normal(size=(op.n, 3))
    C = op.project(P)
    _close(np.real(C.conj().T @ C), P.T @ P)


def test_reproducible_with_random_state():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(53, 3))
    a = MCM(levels=2).prepare(X, None, random_state=4)
    b = MCM(levels=2).prepare(X, None, random_state=4)
    assert np.array_equal(a.order, b.order) and np.array_equal(a.h, b.h)
    c = MCM(levels=2).prepare(X, None, random_state=5)
    assert not np.array_equal(a.dropped, c.dropped) or not np.array_equal(a.h, c.h)


def test_periodic_fit_option_runs_and_differs():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(64, 3))
    a = MCM(levels=2, periodic=False).prepare(X, None, random_state=0).h
    b = MCM(levels=2).prepare(X, None, random_state=0).h
    assert np.all(a > 0) and np.all(b > 0) and not np.allclose(a, b)


def test_fixed_spacing_is_used():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    op = MCM(levels=2, spacing=[0.5, 0.25]).build(X, None, 1.0, kernel="laplacian",
                                                  state=MCM(levels=2, spacing=[0.5, 0.25]).prepare(X, None))
    np.testing.assert_array_equal(op.details["h"], [0.5, 0.25])


# -- bad input ---------------------------------------------------------------------------


def test_bad_inputs():
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match="levels"):
        MCM(levels=0).prepare(X, None)
    with pytest.raises(ValueError, match="levels ≤ 2"):
        MCM(levels=3).prepare(X, None)
    with pytest.raises(ValueError, match="levels ≤"):
        MCM(levels=2).prepare(X[:3], None)
    with pytest.raises(ValueError, match="spacing"):
        MCM(levels=2, spacing=[1.0]).prepare(X, None)
    with pytest.raises(ValueError, match="spacing"):
        MCM(levels=2, spacing=[1.0, -1.0]).prepare(X, None)
    with pytest.raises(ValueError, match="gamma"):
        MCM(levels=1).build(X, None, 0.0, state=MCM(levels=1).prepare(X, None))
    with pytest.raises(ValueError, match="kernel"):
        MCM(levels=1).build(X, None, 1.0, kernel="poly")
    with pytest.raises(ValueError, match="NaN"):
        MCM().prepare(np.full((5, 2), np.nan), None)
    with pytest.raises(ValueError, match="spread"):
        MCM(levels=1).prepare(np.ones((8, 2)), None)
    with pytest.raises(ValueError, match="rows"):
        grid_order(X, (3, 3))


def test_clipped_operator_is_the_psd_projection():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3))
    y = rng.normal(size=30)
    A = MCM(levels=2)                          # clipping is the default
    op = A.build(X, y, 0.05, state=A.prepare(X, y, random_state=0))
    U = ref.multilevel_circulant(ref.song_xu_column(op.details["m"], op.details["h"], 0.05))
    w, V = np.linalg.eigh(U)
    assert w.min() < -1e-3 and op.details["min_eigenvalue"] == pytest.approx(w.min())
    Up = (V * np.maximum(w, 0)) @ V.T
    P = op.restrict(y)[:, None]
    g = lambda lam: 1.0 / (lam + 0.5)
    _close(op.quadratic(g, P), P.T @ ((V / (np.maximum(w, 0) + 0.5)) @ V.T) @ P)
    _close(op.power_quadratic(1, P), P.T @ Up @ P)
    _close(op.diagonal(), np.diag(Up))
