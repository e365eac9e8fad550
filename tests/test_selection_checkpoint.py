"""Checkpoints of a selection: an interrupted search resumes to the uninterrupted
result, reading back what it had evaluated; other selections and other files are
refused and left untouched."""

import json
import os
import warnings

import numpy as np
import pytest

import kernelselect
from kernelselect import GridEdgeWarning, cli, select_kernel
from kernelselect import _policy as _rules
from kernelselect.selection import _search

pytestmark = pytest.mark.filterwarnings("ignore::kernelselect.GridEdgeWarning")


def _data(n=2400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)


def _interrupted(monkeypatch, after, **kwargs):
    """select_kernel interrupted (KeyboardInterrupt) on its ``after``-th fresh
    evaluation; returns the number of fresh evaluations made before."""
    fresh = _search.Search._evaluate_fresh
    calls = {"n": 0}

    def counting(self, *args, **kw):
        calls["n"] += 1
        if calls["n"] == after:
            raise KeyboardInterrupt
        return fresh(self, *args, **kw)

    monkeypatch.setattr(_search.Search, "_evaluate_fresh", counting)
    with pytest.raises(KeyboardInterrupt):
        select_kernel(**kwargs)
    monkeypatch.setattr(_search.Search, "_evaluate_fresh", fresh)
    return calls["n"] - 1


def _assert_same(res, ref):
    assert (res.best_gamma, res.best_alpha) == (ref.best_gamma, ref.best_alpha)
    assert [lv.approximation for lv in res.levels] == [lv.approximation for lv in ref.levels]
    for a, b in zip(res.levels, ref.levels):
        np.testing.assert_array_equal(a.gammas, b.gammas)
        np.testing.assert_array_equal(a.alphas, b.alphas)
        np.testing.assert_array_equal(a.curves["eloo"], b.curves["eloo"])


@pytest.mark.parametrize("subsample", [False, True])
@pytest.mark.parametrize("after", [2, 3])
def test_an_interrupted_selection_resumes_to_the_uninterrupted_result(
        monkeypatch, tmp_path, subsample, after):
    if subsample:                  # the coarse levels on 800 rows, the rest on all 2400
        monkeypatch.setattr(_rules, "SUBSAMPLE_ROWS", 800)
    X, y = _data()
    args = dict(X=X, y=y, random_state=0, kernel="gaussian", refine=True)
    ref = select_kernel(**args)
    path = tmp_path / "selection.json"
    done = _interrupted(monkeypatch, after, checkpoint=path, **args)
    saved = json.loads(path.read_text())
    assert done == after - 1 and len(saved["entries"]) >= done
    res = select_kernel(checkpoint=path, **args)
    _assert_same(res, ref)
    assert res.details["refine"]["gamma"] == ref.details["refine"]["gamma"]
    assert res.details["refine"]["alpha"] == ref.details["refine"]["alpha"]
    # the finished evaluations were read, not built again
    assert res.details["n_operator_builds"] < ref.details["n_operator_builds"]
    # and a finished checkpoint replays the whole selection without building anything
    again = select_kernel(checkpoint=path, **args)
    _assert_same(again, ref)
    assert again.details["n_operator_builds"] == 0
    # every operator the uninterrupted run built was read back
    assert again.details["operators_read"] == ref.details["n_operator_builds"]
    assert res.details["operators_read"] >= done and "operators_read" not in ref.details


def test_a_checkpoint_of_another_selection_is_refused_and_kept(tmp_path):
    X, y = _data(600)
    path = tmp_path / "selection.json"
    select_kernel(X, y, random_state=0, kernel="gaussian", checkpoint=path)
    before = path.read_bytes()
    with pytest.raises(ValueError, match=r"differs in .*\by\b.*delete it"):
        select_kernel(X, y + 1.0, random_state=0, kernel="gaussian", checkpoint=path)
    with pytest.raises(ValueError, match=r"differs in .*\bX\b"):
        select_kernel(X * 2.0 + 1.0, y, random_state=0, kernel="gaussian",
                      standardize=False, checkpoint=path)
    with pytest.raises(ValueError, match=r"differs in .*random_state"):
        select_kernel(X, y, random_state=1, kernel="gaussian", checkpoint=path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("content", [b"not a checkpoint", b'{"format": "other"}', b"\xff\xfe"])
def test_a_file_that_is_no_checkpoint_is_never_overwritten(tmp_path, content):
    X, y = _data(500)
    path = tmp_path / "notes.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not a readable kernelselect selection checkpoint"):
        select_kernel(X, y, random_state=0, kernel="gaussian", checkpoint=path)
    assert path.read_bytes() == content


def test_checkpoint_argument_is_checked(tmp_path):
    X, y = _data(500)
    with pytest.raises(ValueError, match="is a folder"):
        select_kernel(X, y, random_state=0, kernel="gaussian", checkpoint=tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        select_kernel(X, y, random_state=0, kernel="gaussian",
                      checkpoint=tmp_path / "missing" / "c.json")
    with pytest.raises(TypeError, match="checkpoint must be a file path"):
        select_kernel(X, y, random_state=0, kernel="gaussian", checkpoint=3)
    with pytest.raises(ValueError, match="kernel='gaussian'"):
        select_kernel(X, y, random_state=0, kernel="ard", checkpoint=tmp_path / "c.json")


def test_dask_input_resumes_from_its_checkpoint(monkeypatch, tmp_path):
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    X, y = _data(3300)
    ref = select_kernel(X, y, random_state=0, kernel="gaussian")
    path = tmp_path / "selection.json"
    with dask.config.set(scheduler="synchronous"):
        args = dict(X=da.from_array(X, chunks=(1100, -1)), y=da.from_array(y, chunks=1100),
                    random_state=0, kernel="gaussian")
        _interrupted(monkeypatch, 2, checkpoint=path, **args)
        res = select_kernel(checkpoint=path, **args)
    assert (res.best_gamma, res.best_alpha) == pytest.approx((ref.best_gamma, ref.best_alpha),
                                                             rel=1e-9)
    assert [lv.approximation for lv in res.levels] == [lv.approximation for lv in ref.levels]


def test_command_line_select_resumes_from_its_checkpoint(monkeypatch, tmp_path, capsys):
    X, y = _data(1500)
    data = tmp_path / "data.npy"
    np.save(data, np.column_stack([X, y]))
    path = tmp_path / "run.ckpt"
    argv = ["select", str(data), "--task", "regression", "--kernel", "gaussian",
            "--random-state", "0", "--quiet", "--checkpoint", str(path)]
    fresh = _search.Search._evaluate_fresh
    calls = {"n": 0}

    def interrupted(self, *args, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return fresh(self, *args, **kw)

    monkeypatch.setattr(_search.Search, "_evaluate_fresh", interrupted)
    assert cli.main(argv) != 0                              # "kernelselect: interrupted"
    monkeypatch.setattr(_search.Search, "_evaluate_fresh", fresh)
    assert path.exists()
    capsys.readouterr()
    out = tmp_path / "res.json"
    assert cli.main(argv + ["--json", str(out)]) == 0
    got = json.loads(out.read_text())["result"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        ref = select_kernel(X, y, random_state=0, kernel="gaussian", task="regression")
    assert got["best_gamma"] == pytest.approx(ref.best_gamma, rel=1e-12)
    assert got["best_alpha"] == pytest.approx(ref.best_alpha, rel=1e-12)
    assert cli.main(argv[:-1] + [str(data)]) != 0         # the data file itself: refused


# ---- the selection estimators: both halves resume ---------------------------------------

def _estimator(path):
    from kernelselect import KernelRidgeRegressor, KernelSelectionRegressor, NystroemPCG
    machine = KernelRidgeRegressor(kernel="gaussian", approximation=NystroemPCG(
        n_centres=120, sample_per_centre=1.0))
    # α on a grid the 120 centres' solve converges on within max_iter
    return KernelSelectionRegressor(machine, alphas=[1.0, 10.0, 100.0], random_state=0,
                                    checkpoint=path)


@pytest.mark.parametrize("on_dask", [False, True])
def test_an_interrupted_selection_estimator_resumes_its_selection_then_its_solve(
        monkeypatch, operator_builds, tmp_path, on_dask):
    import contextlib
    from kernelselect.solvers import _nystroem_pcg, _pcg
    from kernelselect.solvers._checkpoint import CGCheckpoint
    monkeypatch.setattr(_nystroem_pcg, "loo_affordable", lambda *a, **k: False)
    X, y = _data(3300 if on_dask else 2400)
    ctx = contextlib.nullcontext()
    if on_dask:
        dask = pytest.importorskip("dask")
        da = pytest.importorskip("dask.array")
        X, y = da.from_array(X, chunks=(1100, -1)), da.from_array(y, chunks=1100)
        ctx = dask.config.set(scheduler="synchronous")
    path = str(tmp_path / "run.ckpt")
    sel_path = path + ".selection.json"
    builds = operator_builds
    saved_at = []
    write = CGCheckpoint.write
    monkeypatch.setattr(CGCheckpoint, "write",
                        lambda self, state: (saved_at.append(state.iterations),
                                             write(self, state))[1])
    with ctx:
        ref = _estimator(None).fit(X, y)
        total, builds["n"] = builds["n"], 0
        assert total >= 2 and saved_at == []
        # 1. killed in the selection: its file holds what was evaluated, no solve began
        builds["stop"] = 2
        with pytest.raises(KeyboardInterrupt):
            _estimator(path).fit(X, y)
        assert os.path.exists(sel_path) and not os.path.exists(path)
        # 2. killed in the solve, after its third iteration: the selection was read back
        builds.update(n=0, stop=None)
        monitor = _pcg.CGMonitor

        class Interrupting(monitor):
            def __init__(self, progress, tol, max_iter, callback=None):
                def stop(step):
                    if step.iteration == 3:
                        raise KeyboardInterrupt
                super().__init__(progress, tol, max_iter, stop)

        monkeypatch.setattr(_pcg, "CGMonitor", Interrupting)
        with pytest.raises(KeyboardInterrupt):
            _estimator(path).fit(X, y)
        assert 0 < builds["n"] < total                 # the first evaluation came back
        assert os.path.exists(path) and saved_at == [1, 2, 3]
        # 3. run to the end: nothing built again, the solve continues from iteration 3
        monkeypatch.setattr(_pcg, "CGMonitor", monitor)
        builds["n"] = 0
        done = _estimator(path).fit(X, y)
    assert builds["n"] == 0 and saved_at[3] == 4
    assert done.selection_.details["n_operator_builds"] == 0
    assert done.best_params_ == ref.best_params_
    machine, whole = done.best_estimator_[-1], ref.best_estimator_[-1]
    assert machine.model_.details["iterations"] == whole.model_.details["iterations"]
    assert (machine.model_.details["resumed_from"], whole.model_.details["resumed_from"]) == (
        [3], [0])
    np.testing.assert_allclose(machine.model_.coef, whole.model_.coef, rtol=0,
                               atol=1e-12 * np.abs(whole.model_.coef).max())
    assert done.selection_.details["checkpoint"] == {"selection": sel_path, "refit": path}
    assert not os.path.exists(path) and os.path.exists(sel_path)   # solved; replayable


def test_selection_estimator_checkpoint_needs_a_fixed_state_and_a_criterion(tmp_path):
    from kernelselect import KernelRidgeRegressor, KernelSelectionRegressor
    X, y = _data(300)
    path = tmp_path / "run.ckpt"
    with pytest.raises(ValueError, match="random_state as an int"):
        KernelSelectionRegressor(checkpoint=path).fit(X, y)
    with pytest.raises(ValueError, match="criterion='cv'"):
        KernelSelectionRegressor(criterion="cv", random_state=0, checkpoint=path).fit(X, y)
    with pytest.raises(ValueError, match="does not exist"):
        KernelSelectionRegressor(random_state=0, checkpoint=tmp_path / "no" / "c").fit(X, y)
    with pytest.raises(ValueError, match="kernel='gaussian'"):
        KernelSelectionRegressor(KernelRidgeRegressor(kernel="ard"), random_state=0,
                                 checkpoint=path).fit(X, y)
    assert not os.listdir(tmp_path)
    # a file there that is no checkpoint: refused before the selection, left untouched
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a readable kernelselect conjugate-gradient"):
        KernelSelectionRegressor(random_state=0, checkpoint=path).fit(X, y)
    assert os.listdir(tmp_path) == ["run.ckpt"] and path.read_bytes() == b"not a checkpoint"
    path.unlink()
    # kernel="auto" choosing one γ per feature: the search is not saved, and says so
    est = KernelSelectionRegressor(random_state=0, checkpoint=path).fit(X, y)
    assert est.best_kernel_ == "ard"
    assert est.selection_.details["checkpoint"] == {"selection": None, "refit": str(path)}
