"""Per-γ overhead of the exact and Nyström paths: what one γ of a selection costs
beyond its kernel arithmetic, on one thread.

For n ∈ {200, 2000} (d = 8, standardised synthetic regression data, Gaussian kernel)
and 15 γ = γ₀·2^k (k = −7…7), one sweep over the grid times, per γ:

  exact          ``Exact(method="dense").build``: K = K(X, X) handed to the dense operator
  exact_eloo     the same build and the leave-one-out criterion ``eloo`` (squared loss)
                 over the 13-value α path, what a selection does per γ once the
                 operator is built (n = 200 only: at n = 2000 its eigendecomposition
                 takes seconds per γ and says nothing about the overhead)
  nystrom        ``Nystroem(n_landmarks=100).build``: C = K(X, Z), W = K(Z, Z), its
                 eigendecomposition and V = C T (the in-memory path of fitting, of
                 cross-validation and of the γ-dependent samplers)
  nystrom_grid   ``Nystroem(n_landmarks=100).build_all``: every γ of the grid from one
                 pass over the rows (the path a selection takes), per γ; its arithmetic
                 is not that of a per-γ build, so it has no floor here

and the floor of each, the same arithmetic on arrays prepared once, without a check,
a copy or a translation: the compiled kernel block K(X, X) (exact), the compiled
blocks C and W, the eigendecomposition of W and C T (nystrom). overhead = path − floor.

A fresh interpreter measures one (installation, n, path): it warms up with one sweep,
then times ``--sweeps`` sweeps and reports their minimum and median. Several
installations (``--python A --python B``, e.g. the code before and after a change) are
run interleaved, repeat after repeat, so that a change of machine load hits them alike.
OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1 and ``workers=1`` keep everything on one
thread. The 1-minute load average before and after each run is part of the record.

Raw records: results/per_gamma_overhead_raw.jsonl.gz; the report
(results/per_gamma_overhead.md) is rebuilt from them with --report.

Usage: python studies/per_gamma_overhead.py --python before=/path/python \\
           --python after=/path/python [--sizes 200,2000] [--repeats 5]
       python studies/per_gamma_overhead.py --report
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

RAW = C.RESULTS / "per_gamma_overhead_raw.jsonl"
REPORT = C.RESULTS / "per_gamma_overhead.md"
PATHS = ("exact", "exact_eloo", "nystrom", "nystrom_grid")
LANDMARKS = 100

CHILD = r"""
import json, os, time, warnings
import numpy as np
from threadpoolctl import threadpool_limits
n, path, sweeps, c = {n}, {path!r}, {sweeps}, {landmarks}
rng = np.random.default_rng(0)
X = rng.standard_normal((n, 8))
X = (X - X.mean(axis=0)) / X.std(axis=0)
y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.standard_normal(n)
gammas = (1.0 / 16.0) * 2.0 ** np.arange(-7, 8)
alphas = n * 10.0 ** np.arange(-6, 0.25, 0.5)
import kernelselect
from kernelselect import _kernels
from kernelselect.criteria import evaluate_criterion
from kernelselect.operators.dense import Exact
from kernelselect.operators.nystrom import Nystroem
from kernelselect.operators._row_passes import ArrayRows
import scipy.linalg

def conditioned(A, centre):
    return np.ascontiguousarray(A - centre)

Xc = conditioned(X, X.mean(axis=0))

def floor_block(A, B, g):
    K = np.empty((A.shape[0], B.shape[0]))
    _kernels._kernel_block_into(A, B, g, 0, K, 1)
    return K

def sweep():
    t = 0.0
    if path in ("exact", "exact_eloo"):
        approx = Exact(method="dense")
        state = approx.prepare(X, y, kernel="gaussian", random_state=0, workers=1)
        for g in gammas:
            t0 = time.perf_counter()
            op = approx.build(X, y, float(g), kernel="gaussian", state=state, workers=1)
            if path == "exact_eloo":
                evaluate_criterion("eloo", op, y, alphas, loss="squared")
            t += time.perf_counter() - t0
        return t, None
    approx = Nystroem(n_landmarks=c, random_state=0)
    state = approx.prepare(X, y, kernel="gaussian", random_state=0, workers=1)
    idx = np.sort(np.random.default_rng(0).choice(n, size=c, replace=False))
    Zc = np.ascontiguousarray(Xc[idx])
    if path == "nystrom_grid":
        t0 = time.perf_counter()
        approx.build_all(ArrayRows(X, y, threads=1), y, gammas, kernel="gaussian",
                         state=state)
        return time.perf_counter() - t0, "none"
    else:
        for g in gammas:
            t0 = time.perf_counter()
            approx.build(X, y, float(g), kernel="gaussian", state=state, workers=1)
            t += time.perf_counter() - t0
    f = 0.0
    for g in gammas:
        t0 = time.perf_counter()
        Cb = floor_block(Xc, Zc, float(g))
        W = floor_block(Zc, Zc, float(g))
        s, U = scipy.linalg.eigh(W, driver="evd")
        keep = s > 1e-8 * s[-1]
        V = Cb @ (U[:, keep] / np.sqrt(s[keep]))
        f += time.perf_counter() - t0
    return t, f

def floor_exact():
    f = 0.0
    for g in gammas:
        t0 = time.perf_counter()
        floor_block(Xc, Xc, float(g))
        f += time.perf_counter() - t0
    return f

load_before = os.getloadavg()[0]
with threadpool_limits(1), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    sweep()
    times, floors = [], []
    for _ in range(sweeps):
        t, f = sweep()
        times.append(t)
        floors.append(floor_exact() if f is None else (None if f == "none" else f))
print(json.dumps(dict(n=n, path=path, seconds=times, floor=floors,
                      version=getattr(kernelselect, "__version__", "?"),
                      load_before=load_before, load_after=os.getloadavg()[0])))
"""


def measure(python, n, path, sweeps):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    code = CHILD.format(n=n, path=path, sweeps=sweeps, landmarks=LANDMARKS)
    out = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True,
                         timeout=3600, cwd="/")
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(pythons, sizes, repeats, sweeps):
    for rep in range(repeats):
        for n in sizes:
            for path in PATHS:
                if path == "exact_eloo" and n > 500:
                    continue
                for label, python in pythons:
                    rec = dict(measure(python, n, path, sweeps), side=label, repeat=rep,
                               time=time.strftime("%Y-%m-%d %H:%M:%S"))
                    C.append_record(RAW, rec)
                    floors = [v for v in rec["floor"] if v is not None]
                    floor = f"{1e3 * min(floors) / 15:.3f}" if floors else "—"
                    C.log(f"{label} n={n} {path}: {1e3 * min(rec['seconds']) / 15:.3f} ms/γ "
                          f"(floor {floor}; load {rec['load_before']:.1f})")


def archive():
    """The records of this run appended to the committed archive (``RAW``.gz)."""
    records = C.read_jsonl(RAW)
    with gzip.open(str(RAW) + ".gz", "wt") as f:
        f.writelines(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    RAW.unlink(missing_ok=True)


def report():
    recs = C.read_jsonl(RAW)
    sides = list(dict.fromkeys(r["side"] for r in recs))
    lines = [
        "# Per-γ overhead of the exact and Nyström paths",
        "",
        "`python studies/per_gamma_overhead.py` (raw records: "
        "`per_gamma_overhead_raw.jsonl.gz`; the script's docstring says what each path",
        "times). Milliseconds per γ on one thread, min / median over every sweep of every",
        "repeat (15 γ per sweep), the floor (its minimum: the same arithmetic on arrays",
        "prepared once, no check, copy or translation) and the overhead, min − floor and",
        "median − floor. The installations",
        "ran interleaved; the load is the 1-minute load average before and after the",
        "runs (min–max).",
        "",
        "| n | path | " + " | ".join(f"{s} (ms/γ)" for s in sides) + " | floor (ms/γ) | "
        + " | ".join(f"overhead {s} (min / median)" for s in sides) + " |",
        "|---:|---|" + "---:|" * (2 * len(sides) + 1),
    ]
    loads = []
    for n in sorted({r["n"] for r in recs}):
        for path in PATHS:
            sel = {s: [r for r in recs if r["n"] == n and r["path"] == path and r["side"] == s]
                   for s in sides}
            if not all(sel.values()):
                continue
            per = {s: 1e3 * np.array([t for r in sel[s] for t in r["seconds"]]) / 15
                   for s in sides}
            best = {s: float(per[s].min()) for s in sides}
            mid = {s: float(np.median(per[s])) for s in sides}
            floors = [f for s in sides for r in sel[s] for f in r["floor"] if f is not None]
            loads += [r[k] for s in sides for r in sel[s] for k in ("load_before", "load_after")]
            if floors:                     # the grid path has no per-γ floor of its own
                floor = 1e3 * min(floors) / 15
                tail = f" | {floor:.3f} | " + " | ".join(
                    f"{best[s] - floor:.3f} / {mid[s] - floor:.3f}" for s in sides)
            else:
                tail = " | — | " + " | ".join("—" for s in sides)
            lines.append(f"| {n} | {path} | " + " | ".join(f"{best[s]:.3f} / {mid[s]:.3f}"
                                                           for s in sides)
                         + tail + " |")
    if loads:
        lines += ["", f"Load (1-minute average, 2 cores): {min(loads):.1f}–{max(loads):.1f}."]
    REPORT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--python", action="append", default=[],
                   help="LABEL=PATH of an interpreter with kernelselect installed "
                        "(repeatable); default: this interpreter as 'current'")
    p.add_argument("--sizes", default="200,2000")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--sweeps", type=int, default=5)
    p.add_argument("--report", action="store_true", help="only rebuild the report")
    args = p.parse_args()
    if not args.report:
        pythons = [tuple(v.split("=", 1)) for v in args.python] or [("current", sys.executable)]
        run(pythons, [int(v) for v in args.sizes.split(",")], args.repeats, args.sweeps)
        archive()
    report()


if __name__ == "__main__":
    main()
