"""The compiled layer's conventions: every nogil entry point of the .pxd files is a
``*_into`` function exported for cimport, its Python binding is the same name with a
leading underscore, and a status other than OK becomes the matching Python exception
(MemoryError with the size, ValueError naming the argument, OverflowError for a size
beyond BLAS's 32-bit integers). kernelselect's own wrappers validate their input first,
so these errors are what a direct caller of the bindings (or of the .pxd) meets."""

import numpy as np
import pytest

from kernelselect import _kernels, _mcm, _predict, _rff

MODULES = {
    _kernels: {"kernel_block_into", "kernel_matvec_into", "kernel_sums_into",
               "gram_upper_into", "symmetric_eigh_into", "cholesky_inverse_into",
               "cholesky_factor_into", "gram_update_into", "triangular_apply_into"},
    _predict: {"cross_kernel_matvec_into", "distance_kernel_matvec_into"},
    _rff: {"rff_columns_into", "rff_chunk_rows"},
    _mcm: {"song_xu_column_into", "song_xu_factors_into"},
}
INFO = {"vecmath_backend"}  # module facts, not bindings of an entry point


@pytest.mark.parametrize("module", list(MODULES), ids=lambda m: m.__name__)
def test_entry_points_and_bindings_follow_one_naming_pattern(module):
    exported = {name.split("[")[0] for name in module.__pyx_capi__ if "__pyx_fuse" not in name}
    assert exported == MODULES[module]
    bindings = {name for name in dir(module) if not name.startswith("__")} - INFO
    assert bindings and all(name.startswith("_") and name.endswith("_into") for name in bindings)
    assert {name[1:] for name in bindings} <= exported


X = np.random.default_rng(0).normal(size=(5, 3))
D = np.abs(X @ X.T)
F64 = np.float64


def _out(*shape):
    return np.empty(shape)


@pytest.mark.parametrize(
    "call, match",
    [
        # shapes, checked by the bindings before any pointer is taken
        (lambda: _kernels._kernel_block_into(X, X[:, :2].copy(), 1.0, 0, _out(5, 5), 1),
         "kernel_block_into: Z must be of shape"),
        (lambda: _kernels._kernel_block_into(X, X, 1.0, 0, _out(5, 4), 1),
         "kernel_block_into: K must be of shape"),
        (lambda: _kernels._kernel_matvec_into(X, _out(4, 2), 1.0, 0, _out(5, 2), 1),
         "kernel_matvec_into: V must be"),
        (lambda: _kernels._kernel_sums_into(X, np.zeros(4, np.intp), 1.0, 0, _out(5, 1),
                                            _out(5), 1), "kernel_sums_into: codes must be"),
        (lambda: _predict._cross_kernel_matvec_into(X, X, _out(4, 2), 1.0, 0, _out(5, 2), 1),
         "cross_kernel_matvec_into: C must be"),
        (lambda: _predict._distance_kernel_matvec_into(D, _out(5, 2), 1.0, _out(5, 3), 1),
         "distance_kernel_matvec_into: out must be"),
        (lambda: _rff._rff_columns_into(X, _out(3, 4), _out(3), _out(0), 1.0, _out(5, 4), 1),
         "rff_columns_into: b must be of length D"),
        (lambda: _rff._rff_columns_into(X, _out(3, 4), _out(4), _out(2), 1.0, _out(5, 4), 1),
         "rff_columns_into: row_scale must be"),
        (lambda: _mcm._song_xu_column_into(np.array([2, 3]), np.ones(2), 1.0, 0, _out(5), 1),
         "song_xu_column_into: out must be of length prod"),
        # argument domains, checked by the nogil functions (status BAD_ARGUMENT)
        (lambda: _kernels._kernel_block_into(X, X, 1.0, 2, _out(5, 5), 1),
         r"kernel_block_into: kernel must be 0 \(Gaussian\) or 1 \(Laplacian\)"),
        (lambda: _kernels._kernel_sums_into(X, np.array([0, 1, 2, 0, 1]), 1.0, 0, _out(5, 2),
                                            _out(5), 1),
         r"kernel_sums_into: codes must be in \[0, n_classes\)"),
        (lambda: _kernels._kernel_matvec_into(X[:, :0].copy(), _out(5, 1), 1.0, 0,
                                              _out(5, 1), 1), "kernel_matvec_into: d must be >= 1"),
        (lambda: _predict._cross_kernel_matvec_into(X, X[:0].copy(), _out(0, 1), 1.0, 0,
                                                    _out(5, 1), 1),
         "cross_kernel_matvec_into: n_train must be >= 1"),
        (lambda: _mcm._song_xu_column_into(np.array([2, 0]), np.ones(2), 1.0, 0, _out(0), 1),
         "song_xu_column_into: m must be >= 1"),
        (lambda: _mcm._song_xu_column_into(np.array([2, 3]), np.array([1.0, -1.0]), 1.0, 0,
                                           _out(6), 1), "song_xu_column_into: h must be > 0"),
        (lambda: _kernels._cholesky_factor_into(_out(3, 4), True, 0),
         "cholesky_factor_into: A must be square"),
        (lambda: _kernels._cholesky_factor_into(np.eye(3), True, -1),
         r"cholesky_factor_into: block must be >= 0"),
        (lambda: _kernels._cholesky_factor_into(np.diag([1.0, np.nan, 1.0]), False, 0),
         "cholesky_factor_into: A must be finite"),
        (lambda: _kernels._gram_update_into(X, _out(4, 4), 1.0, True, 0),
         "gram_update_into: G must be of shape"),
        (lambda: _kernels._gram_update_into(X, _out(3, 3), 1.0, True, -2),
         "gram_update_into: block must be >= 0"),
        (lambda: _kernels._triangular_apply_into(np.eye(3), np.ones(2), True, False, True,
                                                 1.0, _out(1, 3)),
         r"triangular_apply_into: diag must be of shape \(m,\)"),
        (lambda: _kernels._triangular_apply_into(np.eye(3), np.ones(3), True, False, True,
                                                 1.0, _out(1, 2)),
         r"triangular_apply_into: B must be of shape \(t, m\)"),
        (lambda: _kernels._triangular_apply_into(np.eye(3), np.array([1.0, 0.0, 1.0]), True,
                                                 False, True, 1.0, _out(1, 3)),
         "triangular_apply_into: diag must be finite"),
        (lambda: _kernels._triangular_apply_into(np.eye(3), np.array([1.0, np.inf, 1.0]),
                                                 True, False, False, 1.0, _out(1, 3)),
         "triangular_apply_into: diag must be finite"),
    ],
)
def test_bad_arguments_raise_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_a_dimension_beyond_blas_integers_raises_overflow_error():
    # Zero rows: the arrays hold no bytes, but d = 2**31 does not fit BLAS's int.
    wide = np.empty((0, 2**31))
    with pytest.raises(OverflowError, match=r"kernel_block_into: d must be below 2\*\*31"):
        _kernels._kernel_block_into(wide, wide, 1.0, 0, _out(0, 0), 1)
    with pytest.raises(OverflowError, match=r"rff_columns_into: d must be below 2\*\*31"):
        _rff._rff_columns_into(wide, np.empty((2**31, 0)), _out(0), _out(0), 1.0, _out(0, 0), 1)


def test_bindings_write_into_their_output_and_return_none():
    K = _out(5, 5)
    assert _kernels._kernel_block_into(X, X, 0.5, 0, K, 2) is None
    np.testing.assert_allclose(K, np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1)),
                               rtol=1e-12)
    out = _out(5, 2)
    C = np.random.default_rng(1).normal(size=(5, 2))
    assert _predict._distance_kernel_matvec_into(D, C, 0.5, out, 2) is None
    np.testing.assert_allclose(out, np.exp(-0.5 * D) @ C, rtol=1e-12)
    u = _out(6)
    assert _mcm._song_xu_column_into(np.array([2, 3]), np.ones(2), 0.5, 1, u, 2) is None
    # f_s[i] sums κ(j h) over j in {i, m_s − i}; Laplacian κ(t) = exp(−γ t)
    e1, e2 = np.exp(-0.5), np.exp(-1.0)
    f0, f1 = np.array([1, e1]), np.array([1, e1 + e2, e1 + e2])
    np.testing.assert_allclose(u, np.outer(f0, f1).ravel(), rtol=1e-12)
