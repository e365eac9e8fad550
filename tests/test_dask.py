"""select_kernel on Dask arrays: same results as in memory, on a real two-process
cluster, and clear errors for bad distributed input."""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import kernelselect  # noqa: E402

# every criterion the streamed operators provide (all but the random_* ones, which need
# the RandomMCM operator); the regression run leaves out the binary-only ones
CRITERIA = [c for c in kernelselect.criteria.criterion_names()
            if kernelselect.get_criterion(c).needs in ("spectral", "moments")]
REGRESSION = [c for c in CRITERIA if kernelselect.get_criterion(c).labels == "any"]
APPROXIMATIONS = {
    "nystrom": lambda: kernelselect.Nystroem(n_landmarks=40),
    "nystrom_given": lambda: kernelselect.Nystroem(landmarks=np.arange(0, 1200, 40)),
    "rff": lambda: kernelselect.RFF(n_features=30),
}


def _data(n=1200, d=4, binary=True, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * [1.0, 2.0, 0.5, 1.0][:d]
    f = X[:, 0] - 0.4 * X[:, 1] ** 2
    y = np.sign(f + 0.3 * rng.standard_normal(n)) if binary else f + 0.1 * rng.standard_normal(n)
    return X, y


def _compare(X, y, approx, criteria, **kw):
    args = dict(criterion=criteria, random_state=7, alphas=[0.05, 1.0, 20.0], **kw)
    mem = kernelselect.select_kernel(X, y, approximation=approx(), **args)
    Xd, yd = da.from_array(X, chunks=(300, -1)), da.from_array(y, chunks=300)
    dist = kernelselect.select_kernel(Xd, yd, approximation=approx(), **args)
    np.testing.assert_allclose(dist.gammas, mem.gammas, rtol=1e-12)
    for name in criteria:
        np.testing.assert_allclose(dist.curves[name], mem.curves[name], rtol=1e-8, atol=1e-300,
                                   err_msg=name)
        assert dist.best[name]["index"] == mem.best[name]["index"]
    return dist


def _two_workers():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def client():
    yield from _two_workers()


@pytest.mark.parametrize("name", list(APPROXIMATIONS))
def test_two_workers_give_the_in_memory_result(client, name):
    X, y = _data()
    with distributed.get_task_stream(client) as ts:
        _compare(X, y, APPROXIMATIONS[name], CRITERIA, standardize=True)
    workers = {t["worker"] for t in ts.data}
    assert len(workers) == 2, workers


def test_regression_target_and_laplacian_kernel(client):
    X, y = _data(binary=False)
    _compare(X, y, APPROXIMATIONS["nystrom"], REGRESSION, kernel="laplacian")
    _compare(X, y, APPROXIMATIONS["rff"], REGRESSION)


@pytest.mark.filterwarnings("ignore:.*on the edge")   # random_kta prefers the widest kernel
def test_random_mcm_streams_on_two_workers(client):
    from kernelselect.operators.streaming_random_mcm import STREAMED_CRITERIA

    X, y = _data()
    with distributed.get_task_stream(client) as ts:
        _compare(X, y, lambda: kernelselect.RandomMCM(n_features=30), list(STREAMED_CRITERIA))
    assert len({t["worker"] for t in ts.data}) == 2
    X, y = _data(binary=False)
    _compare(X, y, lambda: kernelselect.RandomMCM(n_features=30),
             ["random_kta", "random_kta_row_2g", "random_c1_rff"], kernel="laplacian")


def test_exact_moments_stream_on_two_workers(client):
    moments = [c for c in CRITERIA if kernelselect.get_criterion(c).needs == "moments"]
    X, y = _data(n=700)
    exact = lambda: kernelselect.Exact(method="streaming")            # noqa: E731
    with distributed.get_task_stream(client) as ts:
        dist = _compare(X, y, exact, moments, gammas=[0.05, 0.1, 0.2, 1.5])
    assert len({t["worker"] for t in ts.data}) == 2
    assert dist.details["operators"][0]["method"] == "streaming"
    X, y = _data(n=500, binary=False)
    _compare(X, y, exact, ["kta", "ckta"], kernel="laplacian", gammas=[0.05, 0.3])


def test_random_mcm_fft_criteria_are_refused_on_dask():
    X, y = _data(n=400)
    for name in ("random_c1", "random_eloo"):
        with pytest.raises(ValueError, match="random_c1 and random_eloo need the 2-D FFT"):
            kernelselect.select_kernel(da.from_array(X, chunks=(100, -1)), y, criterion=name,
                                       approximation="random_mcm", gammas=[0.5, 1.0])


def test_local_scheduler_and_numpy_target():
    X, y = _data(n=600)
    small = dict(criterion="eloo", random_state=1, approximation=kernelselect.Nystroem(30),
                 alphas=(1.0,))
    mem = kernelselect.select_kernel(X, y, **small)
    dist = kernelselect.select_kernel(da.from_array(X, chunks=(128, 2)), y, **small)
    np.testing.assert_allclose(dist.curves["eloo"], mem.curves["eloo"], rtol=1e-8)


def test_x_larger_than_its_chunks_from_a_memory_map(tmp_path):
    """The out-of-core recipe: a .npy file opened as a memory map, read chunk by chunk."""
    X, y = _data(n=3000, d=3)
    path = tmp_path / "data.npy"
    np.save(path, np.column_stack([X, y]))
    Xd, yd = kernelselect.datasets.open_chunked(path, chunk_rows=500)
    assert Xd.chunks[0] == (500,) * 6
    small = dict(criterion=["eloo", "gcv"], random_state=2,
                 approximation=kernelselect.Nystroem(30))
    dist = kernelselect.select_kernel(Xd, yd, **small)
    mem = kernelselect.select_kernel(X, y, **small)
    for name in ("eloo", "gcv"):
        np.testing.assert_allclose(dist.curves[name], mem.curves[name], rtol=1e-8)


def test_zarr_input(tmp_path):
    zarr = pytest.importorskip("zarr")
    X, y = _data(n=900, d=3)
    z = zarr.open(str(tmp_path / "data.zarr"), mode="w", shape=(900, 4), chunks=(300, 4),
                  dtype="f8")
    z[:] = np.column_stack([X, y])
    Xd, yd = kernelselect.datasets.open_chunked(tmp_path / "data.zarr")
    small = dict(criterion="gcv", random_state=2, approximation=kernelselect.RFF(30))
    dist = kernelselect.select_kernel(Xd, yd, **small)
    mem = kernelselect.select_kernel(X, y, **small)
    np.testing.assert_allclose(dist.curves["gcv"], mem.curves["gcv"], rtol=1e-8)


def test_unknown_chunk_sizes_are_refused():
    X, y = _data(n=400)
    Xd = da.from_array(X, chunks=(100, -1))
    masked = Xd[Xd[:, 0] > -10]                     # every row, but sizes unknown
    with pytest.raises(ValueError, match="unknown chunk sizes.*compute_chunk_sizes"):
        kernelselect.select_kernel(masked, y, criterion="eloo")


def test_nan_in_a_chunk_names_the_row():
    X, y = _data(n=400)
    X[333, 1] = np.nan
    Xd = da.from_array(X, chunks=(100, -1))
    with pytest.raises(ValueError, match="row 333"):
        kernelselect.select_kernel(Xd, y, criterion="eloo", gammas=[0.5])


def test_mismatched_chunks_are_refused():
    X, y = _data(n=400)
    with pytest.raises(ValueError, match="do not match the row chunks"):
        kernelselect.select_kernel(da.from_array(X, chunks=(100, -1)),
                                   da.from_array(y, chunks=150), criterion="eloo")
    with pytest.raises(ValueError, match="entries but X has"):
        kernelselect.select_kernel(da.from_array(X, chunks=(100, -1)),
                                   da.from_array(y[:-1], chunks=100), criterion="eloo")


def test_unsupported_approximation_is_refused():
    X, y = _data(n=300)
    with pytest.raises(ValueError, match="does not run on Dask"):
        kernelselect.select_kernel(da.from_array(X, chunks=(100, -1)), y, approximation="exact")


def _slow(block):
    time.sleep(0.2)
    return block


def test_a_cluster_that_dies_mid_run_gives_a_clear_error():
    X, y = _data(n=2000)
    Xd = da.from_array(X, chunks=(100, -1)).map_blocks(_slow, dtype=float)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    c = distributed.Client(cluster)

    def kill_once_a_chunk_runs():
        # the cluster is closed while a pass is under way, however long the machine
        # takes to get there (no fixed delay)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            try:
                if any(c.processing().values()):
                    break
            except Exception:  # pragma: no cover - the Client is going: close anyway
                break
            time.sleep(0.05)
        cluster.close()
    killer = threading.Thread(target=kill_once_a_chunk_runs)
    killer.start()
    try:
        with pytest.raises(RuntimeError, match="Dask cluster failed"):
            kernelselect.select_kernel(Xd, y, criterion="eloo", random_state=0)
    finally:
        killer.join()
        c.close()
        cluster.close()


def _kill_worker(client, address):
    """SIGKILL the worker at ``address`` (its nanny starts another) and wait until the
    scheduler has removed it, so that what it held is lost."""
    pid = client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 300
    while address in client.scheduler_info(n_workers=-1)["workers"]:
        assert time.monotonic() < deadline, "the scheduler never removed the killed worker"
        time.sleep(0.05)


def _counting_shared(monkeypatch, run, kill_on=None, client=None):
    """``run()``'s result and the number of values its passes shared; on call
    ``kill_on`` the worker holding that value's only copy is killed before the pass is
    submitted."""
    from kernelselect.utils import _dask

    real, calls = _dask.shared, []

    def shared(value):
        future = real(value)
        calls.append(future)
        if len(calls) == kill_on:
            _kill_worker(client, next(iter(client.who_has([future])[future.key])))
        return future
    monkeypatch.setattr(_dask, "shared", shared)
    try:
        return run(), len(calls)
    finally:
        monkeypatch.setattr(_dask, "shared", real)


def _pcg_fit(X, y):
    return lambda: kernelselect.KernelRidgeRegressor(
        gamma=0.5, alpha=1e-3, random_state=0,
        approximation=kernelselect.NystroemPCG(n_centres=120)).fit(
            da.from_array(X, chunks=(500, -1)), da.from_array(y, chunks=500))


def _selection(X, y):
    return lambda: kernelselect.select_kernel(
        da.from_array(X, chunks=(500, -1)), da.from_array(y, chunks=500), criterion="gcv",
        approximation=kernelselect.Nystroem(n_landmarks=60), random_state=0)


@pytest.fixture
def fresh_client():
    """A cluster of two worker processes of the test's own, for a test that kills one:
    the other carries on, and no later test waits for the killed one's restart."""
    yield from _two_workers()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("run, kill_on, result", [
    (_pcg_fit, 3, lambda fitted: fitted.model_.coef),
    (_selection, 2, lambda res: res.curves["gcv"]),
], ids=["conjugate gradients", "selection"])
def test_a_pass_whose_shared_values_die_with_a_worker_is_computed_again(
        fresh_client, monkeypatch, run, kill_on, result):
    # a scattered value has no task to run again: a worker lost while it held the only
    # copy used to end the fit; the pass is now built, sent and computed again
    X, y = _data(n=2000, d=3, binary=False)
    calm, passes = _counting_shared(monkeypatch, run(X, y))
    with pytest.warns(RuntimeWarning, match=r"pass is sent and computed again \(1 of 2\)"):
        hit, calls = _counting_shared(monkeypatch, run(X, y), kill_on, fresh_client)
    assert calls == passes + 1                        # the lost pass, sent again
    np.testing.assert_array_equal(result(hit), result(calm))           # the same bits


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_pass_lost_beyond_its_retries_says_so(fresh_client, monkeypatch):
    from kernelselect.utils import _dask

    X, y = _data(n=2000, d=3, binary=False)
    monkeypatch.setattr(_dask, "LOST_VALUES_RETRIES", 0)
    with pytest.raises(RuntimeError, match="worker was lost while it held values a pass"
                                           r"(.|\n)*checkpoint=PATH"):
        _counting_shared(monkeypatch, _pcg_fit(X, y), 3, fresh_client)


def _unaligned(a):
    """A copy of ``a`` that begins 4 bytes past an 8-byte boundary, as an array received
    from another worker may."""
    buf = np.zeros(a.nbytes + 8, dtype=np.uint8)
    start = (-buf.ctypes.data) % 8 + 4
    out = np.frombuffer(buf[start:start + a.nbytes].data, dtype=a.dtype).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


def test_exact_moments_do_not_depend_on_where_a_received_array_begins():
    # numpy multiplies an unaligned array outside BLAS (VᵀV by other sums than syrk's),
    # so a cluster's moments differed from call to call in their last bits
    from kernelselect.operators import streaming_exact

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((300, 3)), np.sign(rng.standard_normal(300))
    prev, new = rng.standard_normal((2, 300, 2)), rng.standard_normal((2, 300, 2))
    basis = (None, np.array([0, 1]), np.eye(2))         # probes 1 and y, two γ
    pair = (new, np.zeros(2))
    ref = streaming_exact._chunk_stats(np.zeros(3), X, 0, y, basis, prev, pair)
    got = streaming_exact._chunk_stats(np.zeros(3), X, 0, y, basis, _unaligned(prev),
                                       (_unaligned(new), pair[1]))
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(a, b)


def test_exact_moments_are_the_same_bits_on_every_call(client):
    X, y = _data(n=1200)
    Xd, yd = da.from_array(X, chunks=(300, -1)), da.from_array(y, chunks=300)
    args = dict(criterion=["ckta", "sm"], approximation=kernelselect.Exact(method="streaming"),
                gammas=[0.05, 0.2, 1.0, 4.0], random_state=0)
    first, *others = [kernelselect.select_kernel(Xd, yd, **args) for _ in range(3)]
    for other in others:
        for name in ("ckta", "sm"):
            np.testing.assert_array_equal(other.curves[name], first.curves[name], err_msg=name)


def _slow_while(block, flag):
    if os.path.exists(flag):
        time.sleep(0.3)
    return block


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_pass_whose_only_worker_dies_while_it_runs_is_computed_again(tmp_path, monkeypatch):
    # the worker holding the pass's values is lost after the pass was submitted, with no
    # other worker to have fetched them: distributed forgets the pass's tasks ("already
    # forgotten", as when a nanny restarts a worker over its memory limit)
    from kernelselect.utils import _dask

    X, y = _data(n=2000, d=3, binary=False)
    flag = str(tmp_path / "slow")
    Xd = da.from_array(X, chunks=(500, -1)).map_blocks(_slow_while, flag, dtype=float)
    yd = da.from_array(y, chunks=500)
    fit = lambda: kernelselect.KernelRidgeRegressor(                       # noqa: E731
        gamma=0.5, alpha=1e-3, random_state=0,
        approximation=kernelselect.NystroemPCG(n_centres=120)).fit(Xd, yd)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    c = distributed.Client(cluster)
    try:
        calm = fit()
        real, calls = _dask.shared, []

        def kill_once_it_runs():
            deadline = time.monotonic() + 300
            while not any(c.processing().values()):
                assert time.monotonic() < deadline, "the pass never started"
                time.sleep(0.02)
            _kill_worker(c, next(iter(c.scheduler_info(n_workers=-1)["workers"])))
            os.remove(flag)

        def shared(value):
            calls.append(1)
            if len(calls) == 3:
                open(flag, "w").close()          # this pass runs long enough to be hit
                threading.Thread(target=kill_once_it_runs, daemon=True).start()
            return real(value)
        monkeypatch.setattr(_dask, "shared", shared)
        with pytest.warns(RuntimeWarning, match="computed again"):
            hit = fit()
        np.testing.assert_array_equal(hit.model_.coef, calm.model_.coef)
    finally:
        c.close()
        cluster.close()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_exact_moments_start_again_when_a_worker_takes_their_products(fresh_client,
                                                                       monkeypatch):
    # the streamed exact operator keeps V_k on the workers between passes, computed
    # from values scattered for the pass before: a worker lost between two passes took
    # V_k beyond recovery, and the selection ended; the passes now start again
    from kernelselect.operators import streaming_exact

    moments = [c for c in CRITERIA if kernelselect.get_criterion(c).needs == "moments"]
    X, y = _data(n=1200)
    Xd, yd = da.from_array(X, chunks=(300, -1)), da.from_array(y, chunks=300)
    args = dict(criterion=moments, approximation=kernelselect.Exact(method="streaming"),
                gammas=[0.05, 0.2, 1.0], random_state=0)
    real, started = streaming_exact._DaskExactFamily._pass, []
    client = fresh_client

    def counted(family, kill_after_first=False):
        started.append(family.done)
        real(family)
        if kill_after_first and len(started) == 1:
            distributed.wait(list(family.V))
            holders = {a for who in client.who_has(list(family.V)).values() for a in who}
            _kill_worker(client, sorted(holders)[0])

    monkeypatch.setattr(streaming_exact._DaskExactFamily, "_pass", counted)
    calm = kernelselect.select_kernel(Xd, yd, **args)
    passes, started[:] = list(started), []
    monkeypatch.setattr(streaming_exact._DaskExactFamily, "_pass",
                        lambda family: counted(family, kill_after_first=True))
    with pytest.warns(RuntimeWarning, match=r"passes start again from the first \(1 of"):
        hit = kernelselect.select_kernel(Xd, yd, **args)
    assert len(passes) >= 2 and started == [0, 1] + passes            # lost, then again
    for name in moments:
        np.testing.assert_array_equal(hit.curves[name], calm.curves[name], err_msg=name)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_lazy_prediction_outlives_the_workers_it_was_built_beside(fresh_client):
    # the centres and coefficients travel inside the prediction's graph: workers lost
    # between predict() and the compute cost tasks, not the prediction
    X, y = _data(n=1500, d=3, binary=False)
    Xd = da.from_array(X, chunks=(500, -1))
    reg = kernelselect.KernelRidgeRegressor(
        gamma=0.5, alpha=1e-3, random_state=0,
        approximation=kernelselect.NystroemPCG(n_centres=80)).fit(X, y)
    client = fresh_client
    lazy = reg.predict(Xd)
    # nothing of the prediction waits on a worker (the values were scattered before) …
    assert not any(client.has_what().values())
    # … so a worker lost before the compute costs only tasks run again
    _kill_worker(client, sorted(client.scheduler_info(n_workers=-1)["workers"])[0])
    np.testing.assert_array_equal(lazy.compute(), reg.predict(X))


def test_a_task_that_kills_its_workers_names_memory_and_chunks():
    # distributed gives up on a task whose workers all died running it (KilledWorker),
    # most often over the memory limit: restarting the cluster would not help
    from kernelselect.utils import _dask

    class KilledWorker(Exception):                   # distributed's, by its name
        pass

    with pytest.raises(RuntimeError, match="ended every worker that ran it(.|\n)*"
                                           "smaller row chunks"):
        with _dask.cluster_guard():
            raise KilledWorker("Attempted to run task x on 4 different workers")


def test_import_does_not_import_dask():
    code = "import sys, kernelselect; sys.exit('dask' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def _cli(argv, capsys):
    from kernelselect import cli

    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_selects_on_a_npy_file_chunk_by_chunk(tmp_path, capsys):
    X, y = _data(n=1500, d=3)
    path = tmp_path / "big.npy"
    np.save(path, np.column_stack([y, X]))               # target in column 0
    out_json = tmp_path / "r.json"
    code, out, err = _cli(["select", str(path), "--target", "0", "--criterion", "eloo,gcv",
                           "--chunk-rows", "400", "--landmarks", "30", "--json",
                           str(out_json)], capsys)
    assert code == 0, err
    assert "chunked, Dask" in out and "n=1500, d=3, binary" in out
    got = __import__("json").loads(out_json.read_text())["result"]
    mem = kernelselect.select_kernel(X, y, criterion=["eloo", "gcv"], standardize=True,
                                     approximation=kernelselect.Nystroem(30), random_state=0)
    np.testing.assert_allclose(got["curves"]["gcv"], mem.curves["gcv"], rtol=1e-8)


def test_cli_nan_in_a_chunk_writes_nothing(tmp_path, capsys):
    X, y = _data(n=900, d=3)
    X[700, 2] = np.inf
    path = tmp_path / "bad.npy"
    np.save(path, np.column_stack([X, y]))
    out_json = tmp_path / "r.json"
    code, out, err = _cli(["select", str(path), "--no-standardize", "--gammas", "0.5",
                           "--chunk-rows", "300", "--json", str(out_json)], capsys)
    assert code != 0 and "row 700" in err
    assert not out_json.exists()
    code, _, err = _cli(["select", str(path), "--target", "name"], capsys)
    assert code != 0 and "column index" in err


@pytest.mark.parametrize("labels", ["codes 1..3", "strings", "binary 2/5"])
def test_class_labels_of_any_kind_give_the_in_memory_result(labels):
    """Dask chunks are encoded with the classes of the whole target, as in memory: class
    codes for multiclass labels that are not 0..C-1 or not numbers, ±1 for two classes."""
    X, _ = _data(n=600)
    codes = (X[:, 0] > 0.4).astype(int) + (X[:, 0] > -0.4)
    y = {"codes 1..3": codes + 1, "strings": np.array(["cat", "cow", "dog"])[codes],
         "binary 2/5": np.where(codes > 0, 5, 2)}[labels]
    criteria = ["kta", "di"] if labels != "binary 2/5" else ["kta", "mmd"]
    _compare(X, y, APPROXIMATIONS["nystrom"], criteria, gammas=[0.1, 1.0])
