"""Progress and checkpoints of the Nyström conjugate-gradient solve: the per-iteration
record and its estimate of what is left, and a solve interrupted then resumed from its
checkpoint ending where an uninterrupted one ends."""

import contextlib
import io
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest

import kernelselect
from kernelselect import KernelRidgeRegressor, NystroemPCG
from kernelselect.solvers._cg_monitor import iterations_left
from kernelselect.solvers._checkpoint import FORMAT, CGCheckpoint
from kernelselect.solvers._nystroem_pcg import fit_pcg_machine
from kernelselect.solvers import _pcg
from kernelselect.solvers._pcg import choose_centres, fit_nystrom_pcg
from kernelselect.utils import _progress

pytestmark = pytest.mark.filterwarnings(
    "ignore::kernelselect.utils._warnings.ConvergenceWarning")

CASES = [  # (seed, n, d, m, t, gamma, alpha, bias)
    (0, 600, 3, 80, 1, 0.5, 1.0, True),
    (7, 900, 5, 120, 2, 0.2, 0.1, False),
]


def problem(seed, n, d, m, t):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = np.sin(X @ rng.standard_normal((d, t))) + 0.1 * rng.standard_normal((n, t))
    return X, Y, choose_centres(n, m, np.random.default_rng(seed + 1))


def fit(case, **kw):
    seed, n, d, m, t, gamma, alpha, bias = case
    X, Y, centres = problem(seed, n, d, m, t)
    kw.setdefault("tol", 1e-10)
    return fit_nystrom_pcg(X, Y, gamma, alpha, centres=centres, bias=bias, **kw)


class Stop(Exception):
    pass


def stop_at(k, seen=None):
    def callback(step):
        if seen is not None:
            seen.append(step.iteration)
        if step.iteration == k:
            raise KeyboardInterrupt
    return callback


# ---- progress ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
def test_record_has_monotone_iterations_and_a_finite_estimate(case, capsys):
    steps = []
    model = fit(case, callback=steps.append)
    its = [s.iteration for s in steps]
    assert its == list(range(1, model.details["iterations"] + 1)) and len(its) >= 3
    for s in steps[1:]:
        assert np.isfinite(s.seconds_left) and s.seconds_left >= 0
        assert 0 <= s.iterations_left <= 100 - s.iteration
        assert s.tol == 1e-10 and np.isfinite(s.residual)
    assert steps[-1].residual <= 1e-10 and steps[-1].iterations_left == 0
    assert capsys.readouterr().err == ""           # a callback alone prints nothing


@pytest.mark.parametrize("case", CASES)
def test_nothing_is_printed_when_progress_is_off(case, capsys):
    fit(case, progress=False)
    KernelRidgeRegressor(gamma=case[5], alpha=case[6], random_state=0,
                         approximation=NystroemPCG(n_centres=50)).fit(*problem(*case[:5])[:2])
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""


def test_progress_lines_show_the_residual_against_tol_and_time_left(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "LINE_INTERVAL", 0.01)
    text = []

    def wait_for_status(step):                     # the heartbeat speaks during the solve
        if step.iteration == 2:
            end = time.monotonic() + 600
            while time.monotonic() < end and "left" not in "".join(text):
                text.append(capsys.readouterr().err)
                time.sleep(0.01)

    fit(CASES[0], progress=0.01, callback=wait_for_status)
    text.append(capsys.readouterr().err)
    line = next(ln for ln in "".join(text).splitlines() if "left" in ln)
    assert re.fullmatch(r"Nyström conjugate gradients: [12]/100 iterations done, .* elapsed, "
                        r"residual \S+ \(tol 1e-10\), about \d+ iterations, .* left", line)


def test_a_resumed_solve_says_so_until_it_has_timed_an_iteration(monkeypatch):
    """Resumed at iteration 11, the count starts at 11; the lines must not divide this
    run's seconds by those 11 iterations for a time left."""
    from kernelselect.solvers._cg_monitor import CGMonitor
    said = []
    monkeypatch.setattr(_progress.ProgressBar, "status", lambda self, text: said.append(text))
    monitor = CGMonitor(3600.0, 1e-7, 100)
    monitor.start(11, np.array([3e-4]))
    assert said == ["residual 0.0003 (tol 1e-07), resumed from a checkpoint"]
    monitor.step(12, np.array([1e-4]))
    assert re.fullmatch(r"residual 0.0001 \(tol 1e-07\), about \d+ iterations, .* left",
                        said[-1])
    monitor.close()
    CGMonitor(3600.0, 1e-7, 100).start(0, np.array([1.0]))
    assert said[-1] == "residual 1 (tol 1e-07)"


@pytest.mark.parametrize("rejected", [False, True])
def test_the_preconditioner_says_its_stages_and_time_left(monkeypatch, rejected):
    """The set-up before the first iteration (minutes at the default's size) shows
    progress too: the centres' factor, each block of sampled rows, the estimate's
    factor, by their flops; every planned step is done when it ends."""
    said, bars = [], []
    monkeypatch.setattr(_progress.ProgressBar, "status", lambda self, text: said.append(text))
    real_close = _progress.ProgressBar.close
    monkeypatch.setattr(_progress.ProgressBar, "close",
                        lambda self: (bars.append(self), real_close(self))[1])
    monkeypatch.setattr(_pcg, "_SAMPLE_BLOCK", 80 * 25)      # 25 sampled rows a block
    seed, n, d, m, t, gamma, alpha, bias = CASES[0]
    X, Y, centres = problem(seed, n, d, m, t)
    sample = _pcg.choose_sample(n, centres, 100, np.random.default_rng(5))
    if rejected:                 # "auto" tries float32 factors and factors again in float64
        monkeypatch.setattr(_pcg, "FLOAT32_MIN_CENTRES", 10)
        monkeypatch.setattr(_pcg.NystromPreconditioner, "_single_suffices", lambda self: False)
    fit_nystrom_pcg(X, Y, gamma, alpha, centres=centres, sample=sample, bias=bias,
                    progress=3600.0, precision="auto")
    setup = next(b for b in bars if b.desc == "Nyström preconditioner")
    assert setup.done == setup.total == 1 + 4 + 2 + rejected
    assert setup.cost_done == pytest.approx(setup.cost_total)
    assert any(re.fullmatch(r"sampled rows 100/100, about .* left \(by the steps' costs\)",
                            text) for text in said)
    assert any(text.startswith("factor of the estimate, about") for text in said)


def test_the_solves_time_left_counts_down_between_iterations(monkeypatch):
    """A pass takes seconds to minutes at scale: between two iterations the lines count
    the estimate down instead of repeating it."""
    from kernelselect.solvers._cg_monitor import CGMonitor
    clock = [100.0]
    monkeypatch.setattr(_progress.time, "monotonic", lambda: clock[0])
    import itertools
    from kernelselect.solvers import _cg_monitor
    ticks = itertools.count(0.0, 10.0)                    # each iteration takes 10 s
    monkeypatch.setattr(_cg_monitor, "time", type("Clock", (), {
        "perf_counter": staticmethod(lambda: next(ticks))}))
    monitor = CGMonitor(3600.0, 1e-5, 100)
    monitor.start(0, np.array([1.0]))
    lines = monitor._bar._lines
    assert lines is not None
    monitor.step(1, np.array([1e-2]))                     # 2 iterations more, 10 s each
    assert lines.status() == "residual 0.01 (tol 1e-05), about 2 iterations, 20 s left"
    clock[0] += 15.0
    assert lines.status() == "residual 0.01 (tol 1e-05), about 2 iterations, 5 s left"
    monitor.close()


def test_iterations_left_from_the_decay_rate():
    # log r falls by ln 10 per iteration: from 1e-2 to 3e-8 takes log10(1e-2/3e-8) = 5.5
    assert iterations_left((0, 1.0), (2, 1e-2), 3e-8, 100) == 6
    assert iterations_left((4, 1e-1), (6, 1e-5), 3e-10, 100) == 3     # 2 decades a step
    assert iterations_left((0, 1.0), (2, 1e-2), 3e-8, 5) == 3         # at most max_iter − k
    assert iterations_left((0, 1.0), (3, 2.0), 1e-7, 50) == 47         # not falling yet
    assert iterations_left((0, 1.0), (3, 1e-3), 0.0, 50) == 47         # tol 0: all of them
    assert iterations_left((0, 1.0), (3, 1e-9), 1e-7, 50) == 0         # met
    assert iterations_left((2, 1.0), (2, 1.0), 1e-7, 50) == 48         # no step yet


# ---- checkpoints ------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", [1, 4])
def test_an_interrupted_solve_resumes_where_it_stopped(case, k, tmp_path):
    path = str(tmp_path / "solve.ckpt")
    whole = fit(case)
    with pytest.raises(KeyboardInterrupt):
        fit(case, callback=stop_at(k), checkpoint=CGCheckpoint(path))
    assert os.path.exists(path)
    seen = []
    resumed = fit(case, callback=stop_at(-1, seen), checkpoint=CGCheckpoint(path))
    assert seen == list(range(k + 1, whole.details["iterations"] + 1))
    assert resumed.details["iterations"] == whole.details["iterations"]
    rel = np.max(np.abs(resumed.coef - whole.coef)) / np.max(np.abs(whole.coef))
    assert rel <= 1e-12
    np.testing.assert_allclose(resumed.intercept, whole.intercept, rtol=1e-12, atol=1e-14)
    assert resumed.details["history"].shape == whole.details["history"].shape
    assert not os.path.exists(path)                 # converged: the checkpoint is gone


def test_saves_every_k_iterations_and_keeps_the_latest_on_interrupt(tmp_path):
    path = str(tmp_path / "solve.ckpt")
    save = CGCheckpoint(path, every=3)
    with pytest.raises(KeyboardInterrupt):
        fit(CASES[0], callback=stop_at(5), checkpoint=save)
    assert save.saves == 2                          # at 3, then the interrupted 5
    seen = []
    fit(CASES[0], callback=stop_at(-1, seen), checkpoint=CGCheckpoint(path))
    assert seen[0] == 6


def test_saves_when_the_time_since_the_last_save_has_passed(tmp_path):
    every_time = CGCheckpoint(str(tmp_path / "a.ckpt"), every=100, seconds=0.0)
    never_due = CGCheckpoint(str(tmp_path / "b.ckpt"), every=100, seconds=1e9)
    for save in (every_time, never_due):
        with pytest.raises(KeyboardInterrupt):
            fit(CASES[0], callback=stop_at(4), checkpoint=save)
    assert every_time.saves == 4 and never_due.saves == 1     # the interrupted state only


def test_max_iter_keeps_the_checkpoint_and_a_larger_max_iter_continues(tmp_path):
    path = str(tmp_path / "solve.ckpt")
    whole = fit(CASES[1])
    first = fit(CASES[1], max_iter=3, checkpoint=CGCheckpoint(path))
    assert first.details["iterations"] == 3 and not first.details["converged"]
    assert os.path.exists(path)
    seen = []
    rest = fit(CASES[1], checkpoint=CGCheckpoint(path), callback=stop_at(-1, seen))
    assert seen[0] == 4 and rest.details["iterations"] == whole.details["iterations"]
    assert np.max(np.abs(rest.coef - whole.coef)) <= 1e-12 * np.max(np.abs(whole.coef))


@pytest.mark.parametrize("change, field", [({"alpha": 2.0}, "alpha"), ({"gamma": 0.4}, "gamma")])
def test_a_checkpoint_of_another_system_is_refused(change, field, tmp_path, monkeypatch):
    path = str(tmp_path / "solve.ckpt")
    with pytest.raises(KeyboardInterrupt):
        fit(CASES[0], callback=stop_at(2), checkpoint=CGCheckpoint(path))
    other = CASES[0][:5] + (change.get("gamma", CASES[0][5]), change.get("alpha", CASES[0][6]),
                            CASES[0][7])
    with monkeypatch.context() as patch:          # refused before the costly set-up
        patch.setattr(_pcg, "NystromPreconditioner", None)
        with pytest.raises(ValueError,
                           match=f"checkpoint .*another system.*{field}.*resume=False"):
            fit(other, checkpoint=CGCheckpoint(path))
    started_over = fit(other, checkpoint=CGCheckpoint(path, resume=False))
    np.testing.assert_array_equal(started_over.coef, fit(other).coef)


@pytest.mark.parametrize("on_dask, field", [(False, r"y\b"), (True, r"K\(X, centres\)")])
def test_other_targets_are_refused(on_dask, field, tmp_path):
    path = str(tmp_path / "solve.ckpt")
    seed, n, d, m, t, gamma, alpha, bias = CASES[0]
    X, Y, centres = problem(seed, n, d, m, t)
    Y2 = Y.copy()
    Y2[17] += 1e-9
    if on_dask:
        da = pytest.importorskip("dask.array")
        X, Y, Y2 = (da.from_array(a, chunks=(200, a.shape[1])) for a in (X, Y, Y2))
    with pytest.raises(KeyboardInterrupt):
        fit_nystrom_pcg(X, Y, gamma, alpha, centres=centres, bias=bias, callback=stop_at(2),
                        checkpoint=CGCheckpoint(path))
    with pytest.raises(ValueError, match=f"another system.*differs in .*{field}"):
        fit_nystrom_pcg(X, Y2, gamma, alpha, centres=centres, bias=bias,
                        checkpoint=CGCheckpoint(path))


def _savez(path, **arrays):
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _truncated(path):
    with pytest.raises(KeyboardInterrupt):
        fit(CASES[0], callback=stop_at(2), checkpoint=CGCheckpoint(path))
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("make", [
    lambda p: Path(p).write_text("my precious notes\n"),
    lambda p: _savez(p, U=np.zeros(3)),
    _truncated,
])
@pytest.mark.parametrize("resume", [True, False])
def test_a_file_that_is_not_a_checkpoint_is_refused_and_left_alone(make, resume, tmp_path):
    path = str(tmp_path / "solve.ckpt")
    make(path)
    before = Path(path).read_bytes()
    with pytest.raises(ValueError, match=f"checkpoint '{path}' exists but is not a readable"):
        fit(CASES[0], checkpoint=CGCheckpoint(path, resume=resume))
    assert Path(path).read_bytes() == before


def test_a_checkpoint_with_wrong_arrays_is_refused(tmp_path):
    path = str(tmp_path / "solve.ckpt")
    with pytest.raises(KeyboardInterrupt):
        fit(CASES[0], callback=stop_at(2), checkpoint=CGCheckpoint(path))
    with np.load(path) as f:
        arrays = dict(f)
    arrays["U"] = arrays["U"][:-1]
    _savez(path, **arrays)
    assert str(arrays["format"]) == FORMAT
    with pytest.raises(ValueError, match="checkpoint .* is corrupted .*U"):
        fit(CASES[0], checkpoint=CGCheckpoint(path))


# ---- the public path --------------------------------------------------------------------

def _regressor(path, max_iter):
    recipe = NystroemPCG(n_centres=60, tol=1e-10, max_iter=max_iter, checkpoint=path)
    return KernelRidgeRegressor(gamma=0.3, alpha=0.5, random_state=3, approximation=recipe)


@pytest.mark.parametrize("on_dask", [False, True])
def test_a_fit_stopped_by_max_iter_is_continued_through_the_estimator(on_dask, tmp_path):
    X, Y, _ = problem(11, 700, 4, 1, 1)
    y = Y[:, 0]
    ctx = contextlib.nullcontext()
    if on_dask:
        da = pytest.importorskip("dask.array")
        import dask
        X, y = da.from_array(X, chunks=(250, 4)), da.from_array(y, chunks=250)
        ctx = dask.config.set(scheduler="synchronous")
    path = str(tmp_path / "fit.ckpt")
    with ctx:
        whole = _regressor(None, 100).fit(X, y)
        part = _regressor(path, 2).fit(X, y)
        assert part.model_.details["iterations"] == [2]
        assert os.path.exists(path)
        rest = _regressor(path, 100).fit(X, y)
    assert rest.model_.details["iterations"] == whole.model_.details["iterations"]
    np.testing.assert_allclose(rest.model_.coef, whole.model_.coef, rtol=0,
                               atol=1e-12 * np.abs(whole.model_.coef).max())
    assert not os.listdir(tmp_path)                # converged: nothing left behind


def test_each_alpha_of_a_path_has_its_own_checkpoint(tmp_path):
    X, Y, _ = problem(5, 500, 3, 1, 1)
    alphas = np.array([0.5, 2.0, 8.0])

    def machine(path, max_iter):
        recipe = NystroemPCG(n_centres=50, tol=1e-10, max_iter=max_iter, checkpoint=path)
        return fit_pcg_machine(X, Y, 0.4, alphas, recipe, kernel="gaussian", bias=True,
                               random_state=2)

    path = str(tmp_path / "path.ckpt")
    whole = machine(None, 100)
    machine(path, 2)
    assert sorted(os.listdir(tmp_path)) == ["path-alpha1.ckpt", "path-alpha2.ckpt",
                                            "path.ckpt"]
    rest = machine(path, 100)
    assert rest.details["iterations"] == whole.details["iterations"]
    np.testing.assert_allclose(rest.coef, whole.coef, rtol=0,
                               atol=1e-12 * np.abs(whole.coef).max())
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("bad, error, match", [
    ({"checkpoint": 12}, TypeError, "checkpoint must be a file path"),
    ({"checkpoint": "/no/such/folder/x.ckpt"}, ValueError, "checkpoint .* does not exist"),
    ({"checkpoint": "."}, ValueError, "checkpoint '.' is a folder"),
    ({"checkpoint": "x.ckpt", "checkpoint_every": 0}, ValueError, "checkpoint_every"),
    ({"checkpoint": "x.ckpt", "resume": "yes"}, TypeError, "resume"),
])
def test_bad_checkpoint_settings_are_refused(bad, error, match):
    with pytest.raises(error, match=match):
        NystroemPCG(**bad).checkpoints(1)


def test_recipe_repr_names_the_checkpoint():
    assert "checkpoint='a.ckpt'" in repr(NystroemPCG(checkpoint="a.ckpt"))
    assert kernelselect.NystroemPCG is NystroemPCG


# ---- the command line -------------------------------------------------------------------

@pytest.fixture
def pcg_refit(monkeypatch):
    """``predict``'s refit on the Nyström conjugate-gradient machine at a small n."""
    from kernelselect import _policy
    from kernelselect.solvers import _nystroem_pcg
    monkeypatch.setattr(_policy, "EXACT_FIT_MAX_N", 40)
    monkeypatch.setattr(_nystroem_pcg, "loo_affordable", lambda *a, **k: False)
    # q = m sampled rows: the automatic 8m would be every row of this set, an exact
    # preconditioner, and the solve would end before the iteration it is stopped at
    monkeypatch.setattr(_policy, "SAMPLE_MAX_PER_CENTRE", 1.0)
    writes = []
    real = CGCheckpoint.write
    monkeypatch.setattr(CGCheckpoint, "write",
                        lambda self, state: (writes.append(state.iterations),
                                             real(self, state))[1])
    return writes


def _predict(argv, capsys, code=0):
    from kernelselect.cli import main
    assert main(["predict", "--dataset", "winequality_red", "--rows", "3", *argv]) == code
    return capsys.readouterr().out


def test_cli_checkpoint_resumes_an_interrupted_refit(pcg_refit, monkeypatch, tmp_path, capsys):
    from kernelselect.solvers import _pcg
    path = str(tmp_path / "refit.ckpt")
    plain = _predict([], capsys)
    assert pcg_refit == []

    class Interrupting(_pcg.CGMonitor):
        def __init__(self, progress, tol, max_iter, callback=None):
            super().__init__(progress, tol, max_iter, stop_at(3))

    monkeypatch.setattr(_pcg, "CGMonitor", Interrupting)
    _predict(["--checkpoint", path], capsys, code=130)   # "interrupted", exit 130
    assert os.path.exists(path) and pcg_refit == [1, 2, 3]
    monkeypatch.setattr(_pcg, "CGMonitor", Interrupting.__bases__[0])
    resumed = _predict(["--checkpoint", path], capsys).splitlines()
    assert pcg_refit[3] == 4 and len(pcg_refit) > 4      # continued from iteration 3
    assert resumed[2] == ("checkpoint: the selection was not saved (one γ per feature); the "
                          "refit's solve continued from iteration 3")   # winequality: ARD
    assert resumed[1:2] + resumed[3:] == plain.splitlines()[1:]
    assert not os.path.exists(path)


def test_cli_checkpoint_resumes_an_interrupted_selection(operator_builds, tmp_path, capsys):
    from kernelselect.cli import main
    path = str(tmp_path / "run.ckpt")
    argv = ["predict", "--dataset", "breast_cancer", "--rows", "3", "--proba"]
    calls = operator_builds
    assert main(argv) == 0
    plain, total = capsys.readouterr().out, calls["n"]
    calls.update(n=0, stop=2)
    assert main(argv + ["--checkpoint", path]) == 130          # interrupted
    assert os.path.exists(path + ".selection.json")
    capsys.readouterr()
    calls.update(n=0, stop=None)
    assert main(argv + ["--checkpoint", path]) == 0
    assert total >= 2 and calls["n"] == total - 1               # the first came back
    resumed = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"checkpoint: the selection read [1-9]\d* evaluated operators back "
                        r"and built [1-9]\d*; the refit has no iterations to save", resumed[2])
    assert resumed[1:2] + resumed[3:] == plain.splitlines()[1:]


def test_cli_checkpoint_refuses_a_foreign_file_and_clashes(tmp_path, capsys):
    from kernelselect.cli import main
    out = tmp_path / "pred.csv"
    assert main(["predict", "--dataset", "servo", "--output", str(out),
                 "--checkpoint", str(out)]) == 2
    assert "--checkpoint" in capsys.readouterr().err
    assert main(["predict", "--dataset", "servo", "--checkpoint",
                 str(tmp_path / "no" / "x.ckpt")]) == 2
    assert "does not exist" in capsys.readouterr().err
    # the selection's file beside the solve's would be the output
    assert main(["predict", "--dataset", "servo", "--output", str(out) + ".selection.json",
                 "--checkpoint", str(out)]) == 2
    assert "would be --output" in capsys.readouterr().err
    assert not os.listdir(tmp_path)


# ---- the selection's levels -------------------------------------------------------------

def test_progress_bar_weights_the_time_left_by_the_steps_costs(monkeypatch):
    said = []
    monkeypatch.setattr(_progress.ProgressBar, "status", lambda self, text: said.append(text))
    bar = _progress.ProgressBar(False, desc="d", unit="operators")
    bar.extend(2, cost=4.0)
    bar.update(1, cost=4.0, where="m=2")
    assert said == [] and bar.cost_total == 0.0     # off: nothing counted or said
    bar = _progress.ProgressBar(30.0, desc="d", unit="operators", stream=io.StringIO())
    bar.extend(2, cost=1.0)
    bar.extend(3, cost=16.0)
    bar.update(2, cost=1.0, where="nystrom m=1")
    bar.close()
    assert bar.cost_total == 50.0 and bar.cost_done == 2.0
    assert re.fullmatch(r"nystrom m=1, about .* left \(by the steps' costs\)", said[-1])


def test_progress_says_the_planned_stage_and_its_time_left_as_it_starts(monkeypatch):
    """A long stage planned after cheap ones (the all-rows level after the subsample's)
    is named with its own time left when it starts — by the rate of the steps last
    done — and the lines count that time down while it runs, instead of repeating the
    previous stage's "about 0 s left"."""
    clock = [100.0]
    monkeypatch.setattr(_progress.time, "monotonic", lambda: clock[0])
    said = []
    real_status = _progress.ProgressBar.status
    monkeypatch.setattr(_progress.ProgressBar, "status",
                        lambda self, text: (said.append(text), real_status(self, text))[1])
    bar = _progress.ProgressBar(3600.0, desc="d", unit="operators", stream=io.StringIO())
    bar.extend(10, cost=1.0, where="small: 10 γ planned")
    clock[0] += 50.0                       # slow first steps (start-up)...
    bar.update(5, cost=1.0, where="small: 5 γ")
    clock[0] += 5.0                        # ...then 1 s per unit of cost
    bar.update(5, cost=1.0, where="small: 5 γ")
    assert said[-1] == "small: 5 γ, about 0 s left (by the steps' costs)"
    bar.extend(3, cost=40.0, where="big m=800: 3 γ planned")
    assert said[-1] == "big m=800: 3 γ planned, about 2 min 00 s left (by the steps' costs)"
    lines = bar._lines
    assert lines is not None and callable(lines.status)
    clock[0] += 30.0
    assert lines.status() == "big m=800: 3 γ planned, about 1 min 30 s left (by the steps' costs)"
    clock[0] += 200.0
    assert lines.status().endswith("about 0 s left (by the steps' costs)")
    bar.close()


def test_steps_read_from_a_checkpoint_estimate_by_the_seconds_they_took(monkeypatch):
    """A resumed selection reads its finished levels back in moments; the time left of
    the stage it then builds comes from the seconds those levels took when built (their
    saved seconds), not from the moments of reading them ("about 0 s left")."""
    clock = [100.0]
    monkeypatch.setattr(_progress.time, "monotonic", lambda: clock[0])
    said = []
    monkeypatch.setattr(_progress.ProgressBar, "status", lambda self, text: said.append(text))
    bar = _progress.ProgressBar(3600.0, desc="d", unit="operators", stream=io.StringIO())
    bar.extend(3, cost=40.0, where="m=800: 3 γ planned")
    clock[0] += 0.01
    bar.update(3, cost=40.0, where="m=800: read from the checkpoint", seconds=120.0)
    bar.extend(1, cost=40.0, where="m=800: 1 γ planned")
    assert said[-1] == "m=800: 1 γ planned, about 40 s left (by the steps' costs)"
    clock[0] += 0.01                       # a step saved without its seconds: the rate stays
    bar.update(1, cost=40.0, where="m=800: read from the checkpoint", seconds=0.0)
    bar.extend(1, cost=20.0, where="m=400: 1 γ planned")
    assert said[-1] == "m=400: 1 γ planned, about 20 s left (by the steps' costs)"
    bar.close()


def test_a_resumed_selection_times_what_is_left_by_the_saved_seconds(monkeypatch, tmp_path):
    from kernelselect import select_kernel
    from kernelselect.selection import _search
    said = []
    monkeypatch.setattr(_progress.ProgressBar, "status", lambda self, text: said.append(text))
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2400, 3))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(2400)
    path = tmp_path / "s.json"
    args = dict(random_state=0, kernel="gaussian", approximation="nystrom", refine=True,
                checkpoint=path, progress=3600.0)
    select_kernel(X, y, **args)
    said.clear()
    fresh = _search.Search._evaluate_fresh
    read = []
    monkeypatch.setattr(_progress.ProgressBar, "update",
                        lambda self, steps=1, cost=None, where="", seconds=None: read.append(
                            (where, seconds)))
    select_kernel(X, y, **args)                      # every evaluation read back
    assert read and all("read from the checkpoint" in w for w, _ in read)
    assert all(s is not None and s > 0 for _, s in read)   # the saved seconds, refinement too
    assert _search.Search._evaluate_fresh is fresh


def test_selection_levels_report_their_landmarks_and_costs(monkeypatch):
    extended, said = [], []
    real_extend = _progress.ProgressBar.extend
    monkeypatch.setattr(_progress.ProgressBar, "extend",
                        lambda self, steps, cost=None, where="": (
                            extended.append((steps, cost)),
                            real_extend(self, steps, cost, where))[1])
    monkeypatch.setattr(_progress.ProgressBar, "status", lambda self, text: said.append(text))
    rng = np.random.default_rng(4)
    X = rng.standard_normal((1200, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(1200)
    result = kernelselect.select_kernel(X, y, random_state=0, progress=30.0)
    ms = [int(lv["approximation"].split("=")[1].rstrip(")"))
          for lv in result.details["auto"]["levels"] if "approximation" in lv]
    # a build weighs n·m² (n = 1200 rows: no subsample below 4·10⁴)
    assert ms and all(cost in {1200.0 * float(m) ** 2 for m in [100] + ms}
                      for _, cost in extended)
    assert any(re.fullmatch(rf"nystrom m={ms[-1]}: (\d+ γ|γ \d+ of \d+), about .* left "
                            r"\(by the steps' costs\)", text) for text in said)
