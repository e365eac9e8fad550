"""Passes on a distributed Client send their shared constants (feature maps, landmark
factors, probe bases) once, apart from the graph: no "large graph" warnings, and no
key submitted twice with different tasks when a Client serves several calls."""

import logging
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
import dask  # noqa: E402

import kernelselect  # noqa: E402
from kernelselect import KernelSelectionCV, Nystroem, select_kernel  # noqa: E402

#: the warning threshold lowered from 10 MB, so that small data show what large data do
THRESHOLD = "100kB"


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture(scope="module")
def client():
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": THRESHOLD}):
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                           dashboard_address=":0")
        with cluster, distributed.Client(cluster) as c:
            yield c


@pytest.fixture
def quiet_cluster(client):
    """Records the warnings and the distributed loggers' messages of one test."""
    records = _Records()
    logger = logging.getLogger("distributed")
    logger.addHandler(records)
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": THRESHOLD}), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught, records
    logger.removeHandler(records)


def _data(seed, n=1600, d=4, binary=True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    f = X[:, 0] - 0.5 * X[:, 1] ** 2
    y = np.sign(f + 0.3 * rng.standard_normal(n)) if binary else f
    return da.from_array(X, chunks=(400, -1)), da.from_array(y, chunks=400)


def _noisy(caught, records):
    graphs = [str(w.message).splitlines()[0] for w in caught
              if "large graph" in str(w.message)]
    specs = [m[:120] for m in records.messages if "run_spec" in m]
    return graphs, specs


@pytest.mark.parametrize("seed, approximation", [
    (0, lambda: Nystroem(n_landmarks=150)),
    (1, lambda: kernelselect.Exact(method="streaming")),
])
def test_selection_sends_no_large_graph_and_no_colliding_keys(quiet_cluster, seed,
                                                              approximation):
    caught, records = quiet_cluster
    X, y = _data(seed)
    crit = "eloo" if isinstance(approximation(), Nystroem) else "kta"
    kw = dict(criterion=crit, gammas=[0.05, 0.2, 1.0], alphas=[0.01, 1.0], random_state=3)
    first = select_kernel(X, y, approximation=approximation(), **kw)
    second = select_kernel(X, y, approximation=approximation(), **kw)   # same Client again
    assert _noisy(caught, records) == ([], [])
    np.testing.assert_array_equal(first.curves[crit], second.curves[crit])
    local = select_kernel(X.compute(), y.compute(), approximation=approximation(), **kw)
    np.testing.assert_allclose(first.curves[crit], local.curves[crit], rtol=1e-9)


@pytest.mark.parametrize("seed, binary", [(2, True), (3, False)])
def test_selection_estimator_sends_no_large_graph(quiet_cluster, seed, binary):
    caught, records = quiet_cluster
    X, y = _data(seed, n=1200, binary=binary)
    est = KernelSelectionCV(random_state=0, approximation="nystrom")
    est.fit(X, y)
    est.fit(X, y)
    assert _noisy(caught, records) == ([], [])
    assert np.isfinite(np.asarray(est.predict(X[:50]))).all()


@pytest.mark.parametrize("seed, centres, d", [(4, 250, 60), (5, 300, 80)])
def test_prediction_on_dask_rows_sends_no_large_graph(quiet_cluster, seed, centres, d):
    """The centres (m × d, here above the lowered threshold) travel apart from the graph."""
    caught, records = quiet_cluster
    # drawn on the cluster: a numpy X of this width would itself be a large graph
    X = da.random.default_rng(seed).standard_normal((1200, d), chunks=(400, -1))
    y = X[:, 0] - 0.5 * X[:, 1] ** 2
    model = kernelselect.KernelRidgeRegressor(
        gamma=0.3, alpha=0.1, approximation=kernelselect.NystroemPCG(n_centres=centres),
        random_state=0).fit(X, y)
    lazy = model.predict(X).compute()
    assert _noisy(caught, records) == ([], [])
    # (rows of a chunk are multiplied in blocks of other lengths than in memory)
    np.testing.assert_allclose(lazy, model.predict(X.compute()), rtol=1e-12, atol=1e-12)
