"""The blocked Cholesky factorisation and rank-k update (kernelselect.utils._lapack)
against dense references, and the large orders at which the threaded OpenBLAS ?syrk
and ?potrf ended the process."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelselect.utils import _lapack


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few columns, so that small matrices take the blocked path."""
    monkeypatch.setattr(_lapack, "DIRECT_MAX", 4)
    monkeypatch.setattr(_lapack, "BLOCK", 3)


def _laid_out(A, order):
    """A copy of A in Fortran or C order, or a strided view (neither)."""
    if order == "strided":
        wide = np.zeros((A.shape[0], 2 * A.shape[1]), order="F")
        wide[:, ::2] = A
        return wide[:, ::2]
    return np.array(A, order=order)


def _spd(rng, n):
    B = rng.standard_normal((n, n + 2))
    return B @ B.T / n + 0.05 * np.eye(n)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 30), lower=st.booleans(), order=st.sampled_from(["F", "C", "strided"]),
       clean=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_blocked_cholesky_is_the_factor_and_keeps_the_other_triangle(n, lower, order, clean,
                                                                     seed):
    rng = np.random.default_rng(seed)
    S = _spd(rng, n)
    junk = rng.standard_normal((n, n))
    keep = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
    A = _laid_out(np.where(keep, S, junk), order)
    saved = (_lapack.DIRECT_MAX, _lapack.BLOCK)
    _lapack.DIRECT_MAX, _lapack.BLOCK = 4, 3
    try:
        assert _lapack.cholesky_in_place(A, lower, clean=clean) == 0
    finally:
        _lapack.DIRECT_MAX, _lapack.BLOCK = saved
    L = np.linalg.cholesky(S)                      # S = LLᵀ
    got = np.tril(A) if lower else np.triu(A).T
    np.testing.assert_allclose(got, L, rtol=0, atol=1e-12 * np.abs(L).max())
    strict = ~keep
    expected_other = 0.0 if clean else junk[strict]
    np.testing.assert_array_equal(A[strict], expected_other)


@pytest.mark.parametrize("lower", [True, False])
def test_blocked_cholesky_reports_the_first_minor_that_is_not_positive(small_blocks, lower):
    S = np.eye(11)
    S[7, 7] = -1.0
    assert scipy.linalg.lapack.dpotrf(S.copy(), lower=int(lower))[1] == 8
    assert _lapack.cholesky_in_place(S.copy(order="F"), lower) == 8


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 25), k=st.integers(1, 6), lower=st.booleans(),
       alpha=st.sampled_from([1.0, -0.5, 2.0]), order=st.sampled_from(["F", "C", "strided"]),
       seed=st.integers(0, 2**32 - 1))
def test_blocked_rank_k_update_is_the_dense_one_on_its_triangle(n, k, lower, alpha, order,
                                                               seed):
    rng = np.random.default_rng(seed)
    C0 = rng.standard_normal((n, n))
    P = rng.standard_normal((n, k))
    C = _laid_out(C0, order)
    saved = (_lapack.DIRECT_MAX, _lapack.BLOCK)
    _lapack.DIRECT_MAX, _lapack.BLOCK = 4, 3
    try:
        _lapack.syrk_in_place(C, P, alpha, lower=lower)
    finally:
        _lapack.DIRECT_MAX, _lapack.BLOCK = saved
    expected = C0 + alpha * P @ P.T
    keep = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
    np.testing.assert_allclose(C[keep], expected[keep], rtol=1e-13, atol=1e-12)
    np.testing.assert_array_equal(C[~keep], C0[~keep])


def test_small_orders_are_one_lapack_call_with_its_bits():
    rng = np.random.default_rng(3)
    S = np.asfortranarray(_spd(rng, 50))
    c, info = scipy.linalg.lapack.dpotrf(S.copy(order="F"), lower=1, clean=0)
    A = S.copy(order="F")
    assert _lapack.cholesky_in_place(A, True) == info == 0
    np.testing.assert_array_equal(np.tril(A), np.tril(c))


def test_the_preconditioner_factors_an_order_where_threaded_potrf_faulted():
    """On two BLAS threads, OpenBLAS 0.3.30/0.3.31's ?potrf and ?syrk of order 16 000
    ended the process (segmentation fault): the default machine's 20 000 centres did.
    The preconditioner's factorisation and its sample update run in a child process,
    so that a fault fails this test instead of ending the run."""
    code = textwrap.dedent("""
        import numpy as np
        from threadpoolctl import threadpool_limits
        from kernelselect import lowlevel
        from kernelselect.solvers import _pcg
        from kernelselect.utils._lapack import syrk_in_place

        m = 16000
        rng = np.random.default_rng(0)
        Z = rng.standard_normal((m, 3))
        F = lowlevel.kernel_block(Z, Z, 0.5).T      # Fortran-ordered, symmetric
        F[np.diag_indices(m)] += 1e-2
        K = F[:5, :5].copy()
        with threadpool_limits(2):
            assert _pcg._potrf(F, lower=False) == 0
            U = np.triu(F[:5, :5])
            assert np.allclose(U.T @ U, K, rtol=0, atol=1e-12)
            P = np.asfortranarray(rng.standard_normal((m, 600)))
            before = F[-1, 0]
            syrk_in_place(F, P, 1.0, lower=True)
            assert np.isclose(F[-1, 0], before + P[-1] @ P[0], rtol=1e-12)
        print("factored")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert "factored" in out.stdout


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compiled_landmark_factor_and_gram_are_blocked_beyond_8192(dtype):
    """The compiled primitives behind the Nyström levels (``cholesky_inverse_unchecked``,
    ``gram_upper_add_unchecked``, public through ``_kernels.pxd``) switch to the blocked
    routines above order 8192: just above it they agree with the dense reference."""
    from kernelselect.primitives import _kernel_ops

    n, rtol = 8200, (1e-9 if dtype == np.float64 else 2e-3)
    rng = np.random.default_rng(5)
    P = rng.standard_normal((40, n)).astype(dtype)          # (rows, cols), C-ordered
    G = np.zeros((n, n), dtype=dtype)
    _kernel_ops.gram_upper_add_unchecked(P, G)
    rows = rng.choice(n, 30, replace=False)
    expected = (P[:, rows].astype(np.float64).T @ P.astype(np.float64))   # (30, n)
    upper = np.triu(np.ones((n, n), bool))[rows]
    np.testing.assert_allclose(G[rows][upper], expected[upper], rtol=rtol, atol=rtol * 40)
    assert not np.any(np.tril(G, -1)[rows])
    del G
    B = rng.standard_normal((n, 5))
    W = (B @ B.T / 5.0).astype(dtype)                      # dense, positive definite
    W[np.diag_indices(n)] += 2.0
    T = _kernel_ops.cholesky_inverse_unchecked(W)          # L⁻ᵀ, W = LLᵀ
    assert T is not None
    probe = rng.standard_normal((n, 3)).astype(np.float64)
    # W⁻¹ = TTᵀ: W (T (Tᵀ probe)) gives the probe back
    back = W.astype(np.float64) @ (T.astype(np.float64) @ (T.T.astype(np.float64) @ probe))
    np.testing.assert_allclose(back, probe, rtol=0, atol=10 * rtol)


@pytest.mark.parametrize("blocked", [False, True])
def test_upper_cholesky_is_scipys_and_refuses_what_is_not_positive(monkeypatch, blocked):
    if blocked:
        monkeypatch.setattr(_lapack, "DIRECT_MAX", 4)
        monkeypatch.setattr(_lapack, "BLOCK", 3)
    rng = np.random.default_rng(7)
    G = _spd(rng, 17)
    R = _lapack.upper_cholesky(G)
    np.testing.assert_allclose(R, scipy.linalg.cholesky(G, lower=False), rtol=0,
                               atol=1e-12)
    assert not np.any(np.tril(R, -1))
    G[5, 5] = -1.0
    with pytest.raises(np.linalg.LinAlgError, match="leading minor"):
        _lapack.upper_cholesky(G)


@settings(max_examples=30, deadline=None)
@given(k=st.integers(1, 9), d=st.integers(1, 24), dtype=st.sampled_from([np.float64, np.float32]),
       seed=st.integers(0, 2**32 - 1))
def test_gram_is_the_product_with_the_transpose(k, d, dtype, seed):
    A = np.random.default_rng(seed).standard_normal((k, d)).astype(dtype)
    saved = (_lapack.DIRECT_MAX, _lapack.BLOCK)
    _lapack.DIRECT_MAX, _lapack.BLOCK = 4, 3
    try:
        G = _lapack.gram(A)
    finally:
        _lapack.DIRECT_MAX, _lapack.BLOCK = saved
    assert G.dtype == dtype and G.shape == (d, d)
    np.testing.assert_array_equal(G, G.T)
    exact = A.astype(np.float64).T @ A.astype(np.float64)
    np.testing.assert_allclose(G, exact, rtol=0, atol=(1e-12 if dtype == np.float64 else 1e-4)
                               * max(1.0, np.abs(exact).max()))
    if d <= 4:
        np.testing.assert_array_equal(G, A.T @ A)      # numpy's product, bit for bit


def test_gram_of_16000_columns_where_numpys_product_faulted():
    """numpy's A.T @ A is one ?syrk call: with A of shape (1024, 16 000) on two BLAS
    threads it ended the process (numpy 2.3, OpenBLAS 0.3.31). gram() runs it in
    blocks, in a child process so that a fault fails this test."""
    code = textwrap.dedent("""
        import numpy as np
        from threadpoolctl import threadpool_limits
        from kernelselect.utils._lapack import gram

        A = np.random.default_rng(0).standard_normal((1024, 16000))
        with threadpool_limits(2):
            G = gram(A)
        rows = [0, 7000, 15999]
        assert np.allclose(G[rows], A[:, rows].T @ A, rtol=1e-12, atol=1e-9)
        assert np.array_equal(G[rows][:, rows], G[rows][:, rows].T)
        print("gram done")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert "gram done" in out.stdout
