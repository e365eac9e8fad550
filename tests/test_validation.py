import numpy as np
import pytest

from kernelselect.utils import _threads
from kernelselect.utils import _validation as v


def test_check_matrix_converts_and_copies_layout():
    X = np.asfortranarray(np.arange(12, dtype=np.int64).reshape(4, 3))
    out = v.check_matrix(X)
    assert out.dtype == np.float64 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, X)
    assert v.check_matrix(np.ones((2, 2), np.float32)).dtype == np.float32


@pytest.mark.parametrize("bad, word", [(np.nan, "NaN"), (np.inf, "inf")])
def test_check_matrix_rejects_non_finite(bad, word):
    X = np.ones((3, 2))
    X[1, 1] = bad
    with pytest.raises(ValueError, match=f"X contains {word}"):
        v.check_matrix(X)


def test_check_matrix_shapes():
    with pytest.raises(ValueError, match="reshape"):
        v.check_matrix(np.ones(3))
    with pytest.raises(ValueError, match="2-D"):
        v.check_matrix(np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="numbers"):
        v.check_matrix([["a", "b"]])


def test_check_vector_length_and_values():
    assert v.check_vector([1, 2, 3], n=3).dtype == np.float64
    with pytest.raises(ValueError, match="y has 2 entries but X has 3 rows"):
        v.check_vector([1, 2], n=3)
    with pytest.raises(ValueError, match="y contains NaN"):
        v.check_vector([1, np.nan])


@pytest.mark.parametrize("value", [0, -1.0, np.nan, np.inf])
def test_check_positive_rejects(value):
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        v.check_positive(value, "gamma")


def test_check_kernel_lists_known_names():
    assert v.check_kernel("RBF") == "gaussian"
    with pytest.raises(ValueError, match="gaussian, laplacian"):
        v.check_kernel("poly")


def test_check_workers():
    assert _threads.check_workers(None) >= 1
    assert _threads.check_workers(-1) >= 1
    assert _threads.check_workers(2) == 2
    for bad in (0, -2):
        with pytest.raises(ValueError, match="workers"):
            _threads.check_workers(bad)
    with pytest.raises(TypeError, match="workers"):
        _threads.check_workers(1.5)
    assert not hasattr(v, "check_workers")              # one home: _threads


def test_check_random_state_is_reproducible():
    a = v.check_random_state(3).standard_normal(4)
    b = v.check_random_state(3).standard_normal(4)
    np.testing.assert_array_equal(a, b)
    g = np.random.default_rng(0)
    assert v.check_random_state(g) is g
    with pytest.raises(TypeError, match="random_state"):
        v.check_random_state("seed")
