"""Fuzzing the public API: select_kernel with every approximation, the low-level
primitives, the estimators and the command line.

Property: a call returns finite results, or raises ValueError / TypeError whose
message names an argument; never a crash (signal death), a hang (time limit) or a
huge allocation (the workers' address space is capped and the library's memory guard
is set to 256 MiB, so an allocation that escapes the guard fails as MemoryError).

Every case runs in a subprocess (tests/_fuzz_worker.py), a batch of generated cases
per subprocess to keep the suite fast; hypothesis draws the batches. Inputs range over
shapes (0, 1, 2, … rows; 1-D, 2-D, 3-D), dtypes (bool, int, float16/32/64, complex,
object, str), magnitudes 1e-300 … 1e300, NaN/inf and odd parameter values.
"""

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

WORKER = Path(__file__).resolve().parent / "_fuzz_worker.py"
CASE_SECONDS = 120      # a hang, not a slow case on a busy machine
FUZZ = settings(max_examples=int(os.environ.get("KERNELSELECT_FUZZ_EXAMPLES", "4")),
                deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# --------------------------------------------------------------------------- runner


def run_batch(cases):
    """Run cases in one subprocess; returns the records (one per case)."""
    env = dict(os.environ, KERNELSELECT_MAX_BYTES="256M", OMP_NUM_THREADS="2",
               OPENBLAS_NUM_THREADS="1", FUZZ_CASE_SECONDS=str(CASE_SECONDS),
               FUZZ_ADDRESS_SPACE=str(3 * 2**30))
    try:
        proc = subprocess.run([sys.executable, str(WORKER)], input=pickle.dumps(cases),
                              capture_output=True, env=env,
                              timeout=300 + CASE_SECONDS * len(cases))
    except subprocess.TimeoutExpired as exc:
        started = [json.loads(x) for x in (exc.stdout or b"").decode().splitlines()]
        last = max((r["start"] for r in started if "start" in r), default=0)
        pytest.fail(f"hang in case {last}: {describe(cases[last])}")
    records, started = [], None
    for line in proc.stdout.decode().splitlines():
        rec = json.loads(line)
        if "start" in rec:
            started = rec["start"]
        else:
            records.append(rec)
    if proc.returncode != 0 or len(records) != len(cases):
        case = cases[started] if started is not None else None
        pytest.fail(f"worker died (status {proc.returncode}) in case {started}: "
                    f"{describe(case)}\n{proc.stderr.decode()[-3000:]}")
    return records


def describe(case):
    if case is None:
        return "(before the first case)"
    def short(v):
        if isinstance(v, np.ndarray):
            size = ""
            if v.dtype.kind in "biufc" and v.size:
                with np.errstate(all="ignore"):
                    size = f", max|v|={np.max(np.abs(v)):.3g}"
            return f"array(shape={v.shape}, dtype={v.dtype}{size})"
        if isinstance(v, (list, tuple)):
            return type(v)(short(x) for x in v)
        if isinstance(v, dict):
            return {k: short(x) for k, x in v.items()}
        return v
    return repr(short(case))


def judge(case, record, names):
    """The property: finite results, or ValueError/TypeError naming an argument."""
    where = describe(case)
    status = record["status"]
    assert status != "hang", f"hang: {where}"
    if status == "ok":
        assert record["finite"], f"non-finite result returned: {where}"
        return
    assert status == "error"
    assert {"ValueError", "TypeError"} & set(record["bases"]), (
        f"{record['type']}: {record['message']}\n{where}")
    assert record["type"] not in ("LinAlgError", "MemoryError", "FloatingPointError"), (
        f"{record['type']}: {record['message']}\n{where}")
    pattern = r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")(?![\w])"
    assert re.search(pattern, record["message"]), (
        f"message names no argument ({', '.join(names)}): {record['message']!r}\n{where}")


def judge_cli(case, record):
    where = describe(case)
    assert record["status"] == "exit", f"{record}\n{where}"
    code, err = record["code"], record["stderr"]
    assert "Traceback" not in err, f"{err}\n{where}"
    if code == 0:
        assert "nan" not in record["stdout"].lower().split("selected", 1)[-1], (
            f"non-finite selection printed: {record['stdout']}\n{where}")
        return
    assert code == 2, f"exit status {code}: {err}\n{where}"
    lines = err.strip().splitlines()
    assert lines and "error:" in lines[-1], f"{err!r}\n{where}"
    if lines[0].startswith("kernelselect: error:"):
        assert len(lines) == 1, f"more than one line: {err!r}\n{where}"
    assert record["written"] in ([], ["data.npz"], ["data.csv"], ["data.svm"], ["data.npy"]), (
        f"files written on error: {record['written']}\n{where}")


# --------------------------------------------------------------------------- strategies

DTYPES = ["float64", "float64", "float32", "float16", "int64", "bool", "complex128",
          "object", "str"]
SCALES = [1e-300, 1e-150, 1e-10, 1.0, 1.0, 1e10, 1e150, 1e300]
ROWS = [0, 1, 2, 3, 5, 12, 40]


def make_array(shape, dtype, scale, special, seed):
    with np.errstate(all="ignore"):
        return _make_array(shape, dtype, scale, special, seed)


def _make_array(shape, dtype, scale, special, seed):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(shape) * scale
    if special is not None and base.size:
        base.flat[int(rng.integers(base.size))] = {"nan": np.nan, "inf": np.inf,
                                                    "-inf": -np.inf}[special]
    if dtype == "int64":
        return np.nan_to_num(np.round(base), posinf=9e15, neginf=-9e15).clip(
            -9e15, 9e15).astype(np.int64)
    if dtype == "bool":
        return base > 0
    if dtype == "complex128":
        return base + 1j * base
    if dtype == "object":
        return base.astype(object)
    if dtype == "str":
        return base.astype(str)
    return base.astype(dtype)


@st.composite
def matrices(draw, rows=None, plain=False):
    """X-like input: odd shapes, dtypes, magnitudes, NaN/inf (``plain``: 2-D float)."""
    n = draw(st.sampled_from(ROWS)) if rows is None else rows
    d = draw(st.integers(1, 3))
    ndim = 2 if plain else draw(st.sampled_from([2, 2, 2, 2, 1, 3]))
    shape = {1: (n,), 2: (n, d), 3: (n, d, 2)}[ndim]
    dtype = "float64" if plain else draw(st.sampled_from(DTYPES))
    scale = draw(st.sampled_from(SCALES))
    special = None if plain else draw(st.sampled_from([None, None, None, "nan", "inf", "-inf"]))
    return make_array(shape, dtype, scale, special, draw(st.integers(0, 2**31)))


@st.composite
def targets(draw, n):
    kind = draw(st.sampled_from(["pm1", "pm1", "01", "real", "real", "constant", "nan",
                                 "three", "wrong_length", "two_columns", "scaled"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    if kind == "wrong_length":
        return rng.standard_normal(n + 1)
    y = rng.standard_normal(n)
    if kind == "pm1":
        return np.where(y > 0, 1.0, -1.0) if n > 1 else np.ones(n)
    if kind == "01":
        return (np.arange(n) % 2).astype(np.int64)
    if kind == "constant":
        return np.ones(n)
    if kind == "nan":
        y[: max(1, n // 3)] = np.nan if n else y[:0]
        return y
    if kind == "three":
        return (np.arange(n) % 3).astype(float)
    if kind == "two_columns":
        return np.column_stack([y, y])
    if kind == "scaled":
        return y * draw(st.sampled_from([1e-300, 1e-100, 1e100, 1e300]))
    return y


POSITIVE_ODD = [1e-300, 1e-8, 0.5, 1.0, 3.0, 1e8, 1e300, 0.0, -1.0, float("nan"), float("inf")]
GRIDS = st.one_of(st.none(), st.lists(st.sampled_from(POSITIVE_ODD), min_size=0, max_size=3))
APPROXIMATIONS = ["exact", "nystrom", "rff", "mcm", "random_mcm"]
CRITERIA = ["ree", "kta", "gcv", "eloo", "ckta", "ipe", "sm", "fsm", "mmd", "c1",
            "random_kta", "random_c1", ["ree", "kta"]]
SELECT_NAMES = ["X", "y", "gamma", "gammas", "alpha", "alphas", "criterion", "approximation",
                "kernel", "random_state", "workers", "standardize", "n_landmarks", "n_features",
                "levels", "labels", "sigma", "h", "r", "n", "max_bytes", "max_dense",
                "KERNELSELECT_MAX_BYTES", "m", "spacing", "rank", "select_kernel", "loss"]


VALID_GRIDS = st.one_of(st.none(), st.lists(st.sampled_from([1e-3, 0.1, 1.0, 10.0]), min_size=1,
                                            max_size=3))
FAULTS = ["none", "none", "none", "none", "shape", "dtype", "special", "y", "gammas", "alphas",
          "random_state", "workers", "standardize", "kernel", "param"]


@st.composite
def selection_cases(draw, approximation=None):
    """Mostly valid calls at any magnitude, each with at most one odd part."""
    fault = draw(st.sampled_from(FAULTS))
    n = draw(st.sampled_from(ROWS if fault == "shape" else [3, 5, 12, 40]))
    if fault in ("shape", "dtype", "special"):
        X = draw(matrices(rows=n))
    else:
        X = draw(matrices(rows=n, plain=True))
    y = draw(targets(n)) if fault == "y" else draw(st.sampled_from(["pm1", "real"])) and \
        make_y(n, draw(st.sampled_from(["pm1", "real"])), draw(st.integers(0, 2**31)))
    kwargs = {
        "approximation": approximation or draw(st.sampled_from(APPROXIMATIONS)),
        "criterion": draw(st.sampled_from(CRITERIA)),
        "gammas": draw(GRIDS if fault == "gammas" else VALID_GRIDS),
        "alphas": draw(st.lists(st.sampled_from(POSITIVE_ODD), min_size=0, max_size=3)
                       if fault == "alphas" else st.sampled_from([(1.0,), (0.1, 1.0), (1e-3,)])),
        "random_state": draw(st.sampled_from([None, -1, 2**70, True, "seed", 1.5]
                                             if fault == "random_state" else [0, 1])),
        "workers": draw(st.sampled_from([-1, 0, 10**6, 1.5, True] if fault == "workers"
                                        else [None, 1, 2])),
        "standardize": draw(st.sampled_from(["no", None, 1] if fault == "standardize"
                                            else [False, True])),
        "kernel": draw(st.sampled_from(["rbf", "poly", None] if fault == "kernel"
                                       else ["gaussian", "laplacian"])),
    }
    if fault == "param":  # criterion parameters, valid or not
        key, value = draw(st.sampled_from([("sigma", 0.1), ("sigma", float("nan")),
                                           ("sigma", -1.0), ("r", 200), ("h", float("nan")),
                                           ("n_jobs", 2), ("loss", "zero_one")]))
        kwargs[key] = value
    return {"kind": "call", "target": "kernelselect.select_kernel", "args": (X, y),
            "kwargs": kwargs, "check": "selection"}


def make_y(n, kind, seed):
    y = np.random.default_rng(seed).standard_normal(n)
    return np.where(np.arange(n) % 2 == 0, 1.0, -1.0) if kind == "pm1" else y


@st.composite
def primitive_cases(draw):
    """Each primitive with valid arguments at any magnitude, or one odd argument."""
    which = draw(st.sampled_from(["kernel_block", "kernel_matvec", "kernel_sums",
                                  "rff_features", "labeled_rff_column", "song_xu_column",
                                  "choose_grid", "grid_order", "fit_spacing"]))
    fault = draw(st.sampled_from(["none", "none", "none", "X", "gamma", "workers", "kernel",
                                  "other"]))
    X = draw(matrices() if fault == "X" else matrices(rows=draw(st.sampled_from(ROWS[1:])),
                                                       plain=True))
    n = X.shape[0] if X.ndim else 0
    d = X.shape[1] if X.ndim >= 2 else 1
    gamma = draw(st.sampled_from(POSITIVE_ODD if fault == "gamma" else [1e-3, 0.5, 10.0]))
    workers = draw(st.sampled_from([-1, 0, 10**6, 1.5] if fault == "workers" else [None, 1, 2]))
    kernel = draw(st.sampled_from(["poly", None] if fault == "kernel"
                                  else ["gaussian", "laplacian"]))
    odd = fault == "other"
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    D = draw(st.sampled_from([0, 1, 3, 8] if odd else [1, 3, 8]))
    W = make_array((d + (1 if odd and draw(st.booleans()) else 0), D), "float64",
                   draw(st.sampled_from(SCALES)), None, rng.integers(2**31))
    b = rng.uniform(0, 2 * np.pi, D)
    y = draw(targets(n)) if odd else make_y(n, "real", int(rng.integers(2**31)))
    with np.errstate(all="ignore"):
        y = y * draw(st.sampled_from(SCALES))
    if which == "kernel_block":
        Z = draw(matrices()) if odd else make_array(
            (draw(st.integers(1, 5)), d), "float64", draw(st.sampled_from(SCALES)), None,
            rng.integers(2**31))
        args, kw = (X, Z, gamma), {"kernel": kernel, "workers": workers}
    elif which == "kernel_matvec":
        args, kw = (X, y, gamma), {"kernel": kernel, "workers": workers}
    elif which == "kernel_sums":
        lab = {"none": None, "classes": np.arange(n) % 2,
               "nan": np.where(np.arange(n) % 2, 1.0, np.nan),
               "strings": np.array(["a", "b"] * n)[:n], "wrong": np.arange(n + 1)}[
            draw(st.sampled_from(["none", "classes", "strings"] + (["nan", "wrong"] if odd
                                                                    else [])))]
        args, kw = (X, gamma), {"kernel": kernel, "labels": lab, "workers": workers}
    elif which == "rff_features":
        args, kw = (X, W, b if not odd else b[:-1]), {"workers": workers}
    elif which == "labeled_rff_column":
        args, kw = (X, y, W, b), {"workers": workers}
    elif which == "song_xu_column":
        m = draw(st.sampled_from([(0, 3), (2**20, 2**20), (), (2, -1)] if odd
                                 else [(4,), (3, 5), (2, 2, 2)]))
        h = draw(st.sampled_from([[0.0] * len(m), [np.nan] * len(m), [1.0]] if odd else
                                 [[1.0] * len(m), [1e-150] * len(m), [1e150] * len(m)]))
        args, kw = (m, h, gamma), {"kernel": kernel, "workers": workers}
    elif which == "choose_grid":
        args = (draw(st.sampled_from([0, -3, 2.5, True, 10**30] if odd else [7, 100, 683])),
                draw(st.sampled_from([0, 64, 10**6, -1] if odd else [1, 2, 3])))
        kw = {"max_ratio": draw(st.sampled_from([0.5, float("nan"), float("inf")] if odd
                                                else [1.0, 2.0]))}
    elif which == "grid_order":
        args, kw = (X, draw(st.sampled_from([(0,), (), (n + 1,)] if odd else [(n,), (n, 1)]))), {}
    else:
        args, kw = (X, draw(st.sampled_from([(0,), (n + 1,)] if odd else [(n,), (n, 1)]))), {
            "n_pairs": draw(st.sampled_from([0, 10**10] if odd else [1, 10, 100])),
            "periodic": draw(st.booleans()), "random_state": 0}
    return {"kind": "call", "target": f"kernelselect.lowlevel.{which}", "args": args,
            "kwargs": kw, "check": "array"}


PRIMITIVE_NAMES = ["X", "Z", "V", "y", "W", "b", "gamma", "kernel", "workers", "labels", "m",
                   "h", "n", "levels", "max_ratio", "n_pairs", "X_grid", "directions",
                   "random_state", "max_bytes", "KERNELSELECT_MAX_BYTES", "periodic"]


@st.composite
def estimator_cases(draw):
    """The estimators with valid settings at any magnitude, or one odd part."""
    target = draw(st.sampled_from(["LSSVMClassifier", "KernelRidgeRegressor",
                                   "KernelSelectionCV", "DINystroem",
                                   "DIRandomFourierFeatures"]))
    fault = draw(st.sampled_from(["none", "none", "none", "X", "y", "param"]))
    n = draw(st.sampled_from(ROWS if fault == "X" else [5, 12, 40]))
    X = draw(matrices(rows=n, plain=fault != "X"))
    y = draw(targets(n)) if fault == "y" else make_y(
        n, "real" if target == "KernelRidgeRegressor" else "pm1", draw(st.integers(0, 2**31)))
    odd = fault == "param"
    if target in ("LSSVMClassifier", "KernelRidgeRegressor"):
        kwargs = {"gamma": draw(st.sampled_from(POSITIVE_ODD if odd else [None, 0.1, 1.0])),
                  "alpha": draw(st.sampled_from(POSITIVE_ODD if odd else [1e-3, 1.0])),
                  "approximation": draw(st.sampled_from(["exact", "nystrom", "rff"])),
                  "random_state": draw(st.sampled_from([True, -1, "x"] if odd else [0, None]))}
    elif target == "KernelSelectionCV":
        kwargs = {"criterion": draw(st.sampled_from(["ree", "kta", "cv", "bogus"] if odd
                                                    else ["ree", "kta", "cv"])),
                  "approximation": draw(st.sampled_from(["exact", "nystrom"])),
                  "random_state": 0}
    else:
        kwargs = {"n_components": draw(st.sampled_from([0, 10**7, 2.5] if odd else [1, 3])),
                  "random_state": draw(st.sampled_from([True] if odd else [0]))}
    return {"kind": "estimator", "target": target, "kwargs": kwargs, "X": X, "y": y}


# scikit-learn's own input checks speak of "array", "sample(s)" and "Complex data"
ESTIMATOR_NAMES = SELECT_NAMES + ["n_components", "n_samples", "estimator", "classes",
                                  "class", "samples", "sample", "features", "feature", "cv",
                                  "array", "Complex", "label", "labels", "targets", "target"]


@st.composite
def cli_cases(draw):
    """``kernelselect select`` on a written data file: mostly valid, odd options mixed in."""
    odd = draw(st.booleans())
    n = draw(st.sampled_from([0, 1, 3, 12, 40] if odd else [12, 40]))
    suffix = draw(st.sampled_from([".csv", ".npz", ".svm", ".npy"]))
    X = draw(matrices(rows=n, plain=not odd or draw(st.booleans())))
    y = draw(targets(n)) if odd else make_y(n, draw(st.sampled_from(["pm1", "real"])),
                                             draw(st.integers(0, 2**31)))
    argv = ["select", "{data}", "--quiet"]
    approximation = draw(st.sampled_from(APPROXIMATIONS))
    argv += ["--approximation", approximation]
    criteria = (["random_kta", "random_c1,random_kta"] if approximation == "random_mcm"
                else ["ree", "kta", "gcv", "eloo,kta"])
    argv += ["--criterion", draw(st.sampled_from(criteria + (["bogus", "", "ree"] if odd
                                                             else [])))]
    grid = draw(st.sampled_from([None, "0.1,1", "log2:-2:2"] + (
        ["", "nan", "1e300", "-1", "log10:-1:1:nan", "log2:-1e308:1e308",
         "log2:-1:1:1e-300"] if odd else [])))
    if grid is not None:
        argv += ["--gamma-grid" if grid.startswith("log") else "--gammas", grid]
    alphas = draw(st.sampled_from([None, "1", "0.1,10"] + (["1e300", "1e-300", "0", "", "x"]
                                                          if odd else [])))
    if alphas is not None:
        argv += ["--alphas", alphas]
    options = [("--workers", ["1", "2"], ["0", "100000", "-1", "x"]),
               ("--random-state", ["0", "3"], ["-1", "1e3"]),
               ("--json", ["{out}.json", "-"], ["{out}", "/dev/full"]),
               ("--plot", ["{out}.png", "{out}.svg"], ["{out}.unknownext", "-"]),
               ("--landmarks", ["5"] if approximation == "nystrom" else [], ["0", "100000"]),
               ("--features", ["5"] if approximation in ("rff", "random_mcm") else [], ["0"]),
               ("--target", ["-1"] if suffix in (".csv", ".npy") else [], ["0", "name", "99"]),
               ("--encoding", ["utf-8", "latin-1"] if suffix == ".csv" else [],
                ["klingon", "utf-16"])]
    for flag, good, bad in options:
        choices = good + (bad if odd else [])
        if choices and draw(st.integers(0, 3)) == 0:
            argv += [flag, draw(st.sampled_from(choices))]
    if draw(st.booleans()):
        argv += ["--no-standardize"]
    if (suffix == ".csv" or odd) and draw(st.integers(0, 3)) == 0:
        argv += [draw(st.sampled_from(["--header", "--no-header"]))]
    return {"kind": "cli", "argv": argv, "data": (suffix, X, y)}


# --------------------------------------------------------------------------- tests

BATCH = 6


@pytest.mark.parametrize("approximation", APPROXIMATIONS)
@FUZZ
@given(data=st.data())
def test_fuzz_select_kernel(approximation, data):
    cases = data.draw(st.lists(selection_cases(approximation), min_size=BATCH, max_size=BATCH))
    for case, record in zip(cases, run_batch(cases)):
        judge(case, record, SELECT_NAMES)


@FUZZ
@given(cases=st.lists(primitive_cases(), min_size=2 * BATCH, max_size=2 * BATCH))
def test_fuzz_lowlevel_primitives(cases):
    for case, record in zip(cases, run_batch(cases)):
        judge(case, record, PRIMITIVE_NAMES)


@FUZZ
@given(cases=st.lists(estimator_cases(), min_size=BATCH, max_size=BATCH))
def test_fuzz_estimators(cases):
    for case, record in zip(cases, run_batch(cases)):
        judge(case, record, ESTIMATOR_NAMES)


@FUZZ
@given(cases=st.lists(cli_cases(), min_size=BATCH, max_size=BATCH))
def test_fuzz_command_line(cases):
    for case, record in zip(cases, run_batch(cases)):
        judge_cli(case, record)
