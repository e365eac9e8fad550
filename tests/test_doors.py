"""The same data gives the same selection through every door: numpy arrays, Dask
arrays (gathered when small, streamed by chunks beyond), ``.npy`` and ``.npz`` files
through the command line, and KernelSelectionCV — with the defaults, so that the
policy (criterion, approximation levels, grids and their extensions) is the same on
each."""

import json
import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import kernelselect  # noqa: E402
from kernelselect.utils import _dask  # noqa: E402
from kernelselect.selection import _policy  # noqa: E402
from kernelselect import _policy as _rules  # noqa: E402
from kernelselect import cli  # noqa: E402
from kernelselect.utils._targets import prepare_targets, rescale_target  # noqa: E402
from kernelselect.selection import standardize_columns  # noqa: E402


def _data(kind, n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3)) * [1.0, 3.0, 0.5] + [0.0, 10.0, -4.0]
    f = X[:, 0] + np.sin(2 * (X[:, 1] - 10.0) / 3.0)
    noise = rng.standard_normal(n)
    if kind == "binary":
        y = np.where(f + 0.4 * noise > 0, 1.0, 0.0)
    elif kind == "multiclass":
        y = np.digitize(f + 0.3 * noise, [-0.7, 0.7]).astype(float)
    else:
        y = f + 0.1 * noise
    return X, y


def _record(res):
    """What must agree between doors, from a SelectionResult or its JSON form."""
    d = res if isinstance(res, dict) else res.to_dict()
    arr = lambda v: np.asarray(v, dtype=float)          # noqa: E731  (JSON null → NaN)
    # best γ: one value, or one per feature under kernel="auto" on a real target
    return {"best": (*np.ravel(d["best_gamma"]), d["best_alpha"]), "criteria": d["criteria"],
            "levels": [(lv["approximation"], arr(lv["gammas"]),
                        arr(lv["alphas"]) / (lv.get("n_rows") or d["details"]["n"]),
                        {k: arr(v) for k, v in lv["curves"].items()}) for lv in d["levels"]],
            "gamma0": d["details"].get("gamma0")}


def _assert_same(got, want, door):
    assert got["criteria"] == want["criteria"], door
    assert got["best"] == pytest.approx(want["best"], rel=1e-9), door
    assert got["gamma0"] == pytest.approx(want["gamma0"], rel=1e-10), door
    assert [lv[0] for lv in got["levels"]] == [lv[0] for lv in want["levels"]], door
    for (label, g, a, curves), (_, g0, a0, curves0) in zip(got["levels"], want["levels"]):
        np.testing.assert_allclose(g, g0, rtol=1e-10, err_msg=f"{door} {label}")
        np.testing.assert_allclose(a, a0, rtol=1e-12, err_msg=f"{door} {label}")
        # the doors round differently; a leave-one-out form divides by 1 − h_ii, whose
        # rounding grows like ε·n/α (κ ≤ 1), so tiny ridges get a tenth of that bound
        rtol = np.maximum(1e-8, 0.1 * np.finfo(float).eps / a0)
        for name in curves0:
            got_c, want_c = curves[name], curves0[name]
            close = np.isclose(got_c, want_c, rtol=0, atol=1e-12, equal_nan=True) | (
                np.abs(got_c - want_c) <= rtol * np.abs(want_c))
            assert close.all(), (door, label, name, np.argwhere(~close)[:3],
                                 got_c[~close][:3], want_c[~close][:3])


def _cli_json(path, tmp_path, capsys, kernel="auto"):
    out = tmp_path / f"{path.stem}-{path.suffix[1:]}.json"
    code = cli.main(["select", str(path), "--random-state", "0", "--quiet", "--json",
                     str(out), "--kernel", kernel])
    err = capsys.readouterr().err
    assert code == 0, err
    return json.loads(out.read_text())["result"]


@pytest.mark.filterwarnings("ignore::kernelselect.GridEdgeWarning")
@pytest.mark.parametrize("kind, n, kernel", [
    ("regression", 300, "auto"),        # exact kernel matrix, 5-fold criterion; per feature
    ("binary", 700, "auto"),            # Nyström levels up to the exact window: Dask gathers
    ("multiclass", 500, "auto"),
    ("regression", 3300, "gaussian"),   # Nyström levels streamed over the Dask chunks
    ("regression", 3300, "auto"),       # per feature: Dask gathers beyond GATHER_BELOW
])
def test_every_door_gives_the_same_selection(kind, n, kernel, tmp_path, capsys):
    X, y = _data(kind, n)
    memory = _record(kernelselect.select_kernel(X, y, random_state=0, kernel=kernel))
    doors = {}
    with dask.config.set(scheduler="synchronous"):
        res = kernelselect.select_kernel(da.from_array(X, chunks=(n // 3 + 1, -1)),
                                         da.from_array(y, chunks=n // 3 + 1), random_state=0,
                                         kernel=kernel)
        gathered = n < _policy.GATHER_BELOW or res.kernel == "ard"
        assert res.details["input"].startswith("Dask array gathered" if gathered
                                               else "Dask array, streamed")
        doors["dask"] = _record(res)
        np.save(tmp_path / "data.npy", np.column_stack([X, y]))
        doors[".npy (command line)"] = _record(_cli_json(tmp_path / "data.npy", tmp_path,
                                                         capsys, kernel))
    labels = y.astype(int) if kind != "regression" else y
    np.savez(tmp_path / "data.npz", X=X, y=labels)
    doors[".npz (command line)"] = _record(_cli_json(tmp_path / "data.npz", tmp_path, capsys,
                                                     kernel))
    machine = (None if kernel == "auto"
               else kernelselect.KernelRidgeRegressor(kernel=kernel, fit_intercept="mean"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kernelselect.GridEdgeWarning)
        model = kernelselect.KernelSelectionCV(machine, random_state=0).fit(X, labels)
    doors["KernelSelectionCV"] = _record(model.selection_)
    for door, got in doors.items():
        _assert_same(got, memory, door)


@pytest.mark.filterwarnings("ignore::kernelselect.GridEdgeWarning")
def test_dask_input_takes_the_same_coarse_subsample_as_memory(monkeypatch):
    """Beyond twice the subsample size the coarse levels run on the same rows in memory
    (gathered from the chunks) and the last level streams over every chunk: the same
    levels, curves and choice as in memory."""
    monkeypatch.setattr(_rules, "SUBSAMPLE_ROWS", 1000)
    X, y = _data("regression", 3300, seed=4)
    mem = kernelselect.select_kernel(X, y, random_state=2, kernel="gaussian")
    with dask.config.set(scheduler="synchronous"):
        res = kernelselect.select_kernel(da.from_array(X, chunks=(1100, -1)),
                                         da.from_array(y, chunks=1100), random_state=2,
                                         kernel="gaussian")
    assert res.details["auto"]["subsample"]["rows"] == 1000
    assert res.details["auto"]["subsample"] == pytest.approx(mem.details["auto"]["subsample"])
    assert [lv.n_rows for lv in res.levels] == [lv.n_rows for lv in mem.levels]
    assert res.levels[-1].n_rows is None
    _assert_same(_record(res), _record(mem), "dask")


def test_the_streamed_levels_never_build_in_memory(monkeypatch):
    """Beyond the gather size, every level (and the refinement) is a pass over the
    chunks: no per-γ operator is built from X, which is never gathered."""
    X, y = _data("binary", 3300, seed=2)
    mem = kernelselect.select_kernel(X, y, random_state=1, refine=True)

    def refuse(*args, **kwargs):
        raise AssertionError("a Nyström operator was built in memory from Dask input")

    monkeypatch.setattr(kernelselect.Nystroem, "build", refuse)
    monkeypatch.setattr(_dask, "gather", refuse)
    with dask.config.set(scheduler="synchronous"):
        res = kernelselect.select_kernel(da.from_array(X, chunks=(1000, -1)), y,
                                         random_state=1, refine=True)
    assert len(res.levels) > 1 and res.levels[-1].n_landmarks > _policy.START_LANDMARKS
    _assert_same(_record(res), _record(mem), "dask")
    assert res.details["refine"]["gamma"] == pytest.approx(mem.details["refine"]["gamma"],
                                                           rel=1e-9)
    assert res.details["refine"]["alpha"] == pytest.approx(mem.details["refine"]["alpha"],
                                                           rel=1e-9)


def test_gathering_small_dask_input_is_guarded():
    X, y = _data("binary", 500)
    with kernelselect.config_context(max_bytes="1K"):
        with pytest.raises(ValueError, match="gathered into memory.*approximation='nystrom'"):
            kernelselect.select_kernel(da.from_array(X, chunks=(100, -1)), y)
    X[321, 2] = np.inf
    with pytest.raises(ValueError, match="row 321"):
        kernelselect.select_kernel(da.from_array(X, chunks=(100, -1)), y)


@pytest.mark.parametrize("scale, offset", [(1.0, 0.0), (1.0, 1e6), (1e-200, 0.0),
                                           (1e200, 3e200)])
def test_standardisation_is_the_same_on_both_doors(scale, offset):
    X, _ = _data("regression", 1000, seed=3)
    X = X * scale + offset
    X[:, 2] = 7.0 * scale                                        # a constant column
    got = standardize_columns(da.from_array(X, chunks=(300, -1))).compute()
    np.testing.assert_allclose(got, standardize_columns(X), rtol=0, atol=1e-13)


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression", "huge regression"])
def test_the_target_is_encoded_the_same_on_both_doors(kind):
    X, y = _data(kind.split()[-1], 900, seed=4)
    if kind == "huge regression":
        y = y * 2.0 ** 600
    targets = prepare_targets(y, "auto")
    want, _, scale = rescale_target(targets.y, {})
    if kind == "huge regression":
        assert scale == 2.0 ** 600 or scale > 2.0 ** 256
    got = _dask.encoded_target(da.from_array(y, chunks=300), targets.classes, targets.task,
                               scale).compute()
    np.testing.assert_array_equal(got, want)
    # and the curves through both doors, on a fixed stand-in
    args = dict(criterion="eloo", approximation=kernelselect.Nystroem(n_landmarks=40),
                random_state=0, gammas=[0.1, 0.4, 1.6])
    mem = kernelselect.select_kernel(X, y, **args)
    with dask.config.set(scheduler="synchronous"):
        dist = kernelselect.select_kernel(da.from_array(X, chunks=(300, -1)), y, **args)
    assert dist.details.get("target_scale") == mem.details.get("target_scale")
    np.testing.assert_allclose(dist.curves["eloo"], mem.curves["eloo"], rtol=1e-9)


def test_the_command_line_names_the_loss(tmp_path, capsys):
    X, y = _data("binary", 120)
    np.savez(tmp_path / "d.npz", X=X, y=y.astype(int))
    code = cli.main(["select", str(tmp_path / "d.npz"), "--criterion", "eloo,eloo_error_rate",
                     "--gammas", "0.5,1", "--alphas", "0.1,1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "criterion eloo: squared loss" in out and "criterion eloo_error_rate" not in out
