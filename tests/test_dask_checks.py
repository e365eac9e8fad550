"""Dask input at the door: non-finite targets and rows refused as in memory (X never
gathered), predictions in chunks of any size with the in-memory bits, chunks of zero
rows dropped (the same answer as without them), an in-memory X beside a Dask y cut
into y's chunks."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from kernelselect import KernelRidgeRegressor, LSSVMClassifier, NystroemPCG, select_kernel  # noqa: E402
from kernelselect import Nystroem  # noqa: E402


from test_fit_dask import chunked, threads_scheduler  # noqa: E402,F401 (autouse fixture)


def data(seed=0):
    """300 rows of 3 features and 2 smooth targets."""
    from test_fit_dask import data as smooth
    return smooth(seed, n=300, d=3, t=2)


def _krr():
    return KernelRidgeRegressor(gamma=0.4, alpha=0.1, approximation=NystroemPCG(n_centres=40),
                                random_state=1)


# --- non-finite targets and rows -------------------------------------------------------

@pytest.mark.parametrize("seed, row, col, bad", [(0, 5, 1, np.nan), (1, 250, 0, np.inf)])
def test_two_column_dask_target_with_nan_is_refused(seed, row, col, bad):
    X, Y = data(seed)
    Y[row, col] = bad
    with pytest.raises(ValueError, match=rf"y contains NaN or inf \(first at row {row};"):
        _krr().fit(chunked(X, 100), chunked(Y, 100))
    with pytest.raises(ValueError, match=r"Input y contains"):      # as in memory
        _krr().fit(X, Y)


@pytest.mark.parametrize("seed, row, bad", [(0, 7, np.nan), (2, 299, -np.inf)])
def test_one_column_dask_target_with_nan_is_refused(seed, row, bad):
    X, Y = data(seed)
    y = Y[:, 0].copy()
    y[row] = bad
    with pytest.raises(ValueError, match=rf"y contains NaN or inf \(first at row {row};"):
        _krr().fit(chunked(X, 100), chunked(y, 100))
    with pytest.raises(ValueError, match=rf"first at row {row};"):   # numpy y beside Dask X
        _krr().fit(chunked(X, 100), y)


def test_dask_target_check_does_not_gather_x():
    """The target check reduces y chunk by chunk; X's chunks are not computed for it."""
    from kernelselect.models import _dask_input
    X, Y = data(3)
    Y[10, 0] = np.nan
    seen = []

    def spy(block):
        if block.size:                  # (dask calls it once on an empty meta block)
            seen.append(block.shape)
        return block
    Xd = chunked(X, 100).map_blocks(spy, dtype=np.float64)
    with pytest.raises(ValueError, match="y contains NaN"):
        _dask_input.dask_training_data(Xd, chunked(Y, 100))
    assert seen == []


@pytest.mark.parametrize("seed, row, chunk, bad", [(0, 5, 3, np.nan), (4, 41, 20, np.inf)])
def test_predict_on_dask_rows_with_nan_is_refused(seed, row, chunk, bad):
    X, Y = data(seed)
    model = _krr().fit(chunked(X, 100), chunked(Y[:, 0], 100))
    Xn = X[:60].copy()
    Xn[row, 1] = bad
    out = model.predict(chunked(Xn, chunk))                      # lazy: nothing computed yet
    with pytest.raises(ValueError, match=rf"X contains NaN or inf \(first at row {row}, in "
                                         rf"the chunk of rows {row // chunk * chunk}\.\."):
        out.compute()
    with pytest.raises(ValueError, match="Input X contains"):      # as in memory
        model.predict(Xn)
    # finite rows still predict with the in-memory bits
    np.testing.assert_array_equal(model.predict(chunked(X[:60], chunk)).compute(),
                                  model.predict(X[:60]))


@pytest.mark.parametrize("centres", [40, 300])
def test_dask_predictions_have_the_in_memory_bits_in_any_chunks(centres):
    """Predictions on Dask rows in chunks of any size (1, 3, 5, … rows, which begin
    inside the passes' 64-row blocks) have the bits of the same rows in memory. At 300
    centres OpenBLAS 0.3.30 gives the kernel values of the last centres 1 ulp apart for
    rows at different places in a product, so the chunks are moved to the blocks'
    boundaries; the predictions keep their rows' order and count."""
    X, Y = data(2)
    model = KernelRidgeRegressor(gamma=0.4, alpha=0.1,
                                 approximation=NystroemPCG(n_centres=centres),
                                 random_state=1).fit(X, Y[:, 0])
    expected = model.predict(X[:200])
    for chunk in (1, 3, 5, 7, 37, 64, 100):
        out = model.predict(chunked(X[:200], chunk))
        assert out.shape == (200,)
        np.testing.assert_array_equal(out.compute(), expected)


def test_dask_predictions_on_rows_of_unknown_chunk_sizes_are_refused_clearly():
    """Rows picked by a lazy mask have chunks of unknown size: predict refuses them as
    fit does, naming X and the fix, instead of a TypeError from inside a task."""
    X, Y = data(3)
    model = _krr().fit(X, Y[:, 0])
    Xd = chunked(X, 100)
    picked = Xd[Xd[:, 0] > -np.inf]                       # every row, sizes unknown
    with pytest.raises(ValueError, match=r"X has unknown chunk sizes .*compute_chunk_sizes"):
        model.predict(picked)
    np.testing.assert_array_equal(model.predict(picked.compute_chunk_sizes()).compute(),
                                  model.predict(X))


# --- chunks of zero rows ------------------------------------------------------------------

@pytest.mark.parametrize("chunks", [(100, 0, 150, 0, 50), (0, 120, 180, 0)])
def test_zero_row_chunks_give_the_answer_without_them(chunks):
    X, Y = data(5)
    y = Y[:, 0]
    plain = [c for c in chunks if c]
    kw = dict(approximation=Nystroem(n_landmarks=30), random_state=3, gammas=[0.2, 1.0],
              alphas=[0.01, 1.0])
    with_empty = select_kernel(chunked(X, chunks), chunked(y, chunks), **kw)
    without = select_kernel(chunked(X, plain), chunked(y, plain), **kw)
    for name in without.curves:
        np.testing.assert_array_equal(with_empty.curves[name], without.curves[name])
    m1 = _krr().fit(chunked(X, chunks), chunked(Y, chunks))
    m2 = _krr().fit(chunked(X, plain), chunked(Y, plain))
    np.testing.assert_array_equal(m1.predict(X[:20]), m2.predict(X[:20]))
    p1 = m1.predict(chunked(X, chunks)).compute()
    np.testing.assert_array_equal(p1, m2.predict(X))


def test_zero_row_chunks_in_a_classifier_and_a_numpy_target():
    X, Y = data(6)
    labels = np.where(Y[:, 0] > 0, "yes", "no")
    chunks = (0, 200, 0, 100)
    clf = LSSVMClassifier(gamma=0.5, alpha=0.1, approximation=NystroemPCG(n_centres=40),
                          random_state=0)
    a = clf.fit(chunked(X, chunks), labels).predict(X[:30])
    b = clf.fit(chunked(X, 200), labels).predict(X[:30])
    np.testing.assert_array_equal(a, b)


# --- an in-memory X beside a Dask y -------------------------------------------------------

@pytest.mark.parametrize("rows", [50, (120, 80, 100)])
def test_numpy_x_with_dask_y_is_cut_into_the_chunks_of_y(rows):
    X, Y = data(7)
    y = Y[:, 1]
    kw = dict(approximation=Nystroem(n_landmarks=30), random_state=2, gammas=[0.3, 2.0],
              alphas=[0.1])
    mixed = select_kernel(X, chunked(y, rows), **kw)
    both = select_kernel(chunked(X, rows), chunked(y, rows), **kw)
    for name in both.curves:
        np.testing.assert_array_equal(mixed.curves[name], both.curves[name])


def test_dask_x_with_other_chunks_than_dask_y_names_the_rechunk():
    X, Y = data(8)
    with pytest.raises(ValueError, match=r"y = y\.rechunk\(X\.chunks\[0\]\)"):
        select_kernel(chunked(X, 100), chunked(Y[:, 0], 50), approximation="nystrom")
