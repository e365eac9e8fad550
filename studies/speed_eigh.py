"""The per-γ eigendecompositions of the streamed Nyström levels: the compiled
``symmetric_eigh_unchecked`` (LAPACK's dsyevd without the interpreter lock) against
``scipy.linalg.eigh(driver="evd")`` (the same routine behind an f2py wrapper that holds
it), and the γ loop of a level on two threads against one.

One run, settings interleaved repeat after repeat, the machine's 1-minute load
recorded beside every figure (a shared machine's load is part of the result):

* ``eigh``: one eigendecomposition of a landmark Gram matrix W (c × c, Gaussian,
  d = 8) on one BLAS thread, ours and scipy's, bits compared; median of the repeats.
* ``loop``: the per-γ work of a level of c landmarks on 15 γ, n = 2·10⁴ rows, d = 8,
  as ``Nystroem.build_all`` runs it: the landmark transforms (W and its
  eigendecomposition, or its Cholesky factor where W allows) before the first pass,
  and the operators (the eigendecomposition of VᵀV) after it, on 1 and 2 Python
  threads (``map_in_threads``); also with every W eigendecomposed (``ours_eigh_of_W``,
  the Cholesky factor switched off) and, with ``--peer-scipy``, with scipy's eigh
  swapped in as well (the loop before: its eighs hold the interpreter lock).
* ``level``: the whole streamed level (``build_all`` with the first pass) on 1 and 2
  threads.

Usage (one command; a few minutes on an idle 2-core machine):

    python studies/speed_eigh.py [--sizes 200,400,800] [--repeats 5] [--peer-scipy]
    python studies/speed_eigh.py --report

Raw records go to results/speed_eigh_raw.jsonl (rebuilt into results/speed_eigh.md by
``--report``).
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

RAW = C.RESULTS / "speed_eigh_raw.jsonl"
REPORT = C.RESULTS / "speed_eigh.md"
N, D, N_GAMMAS = 20_000, 8, 15


def load():
    return float(os.getloadavg()[0])


def problem(n=N, d=D, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.standard_normal(n)
    return X, y


def grid(X):
    from kernelselect.selection import default_gammas

    return np.asarray(default_gammas(X, random_state=0), dtype=np.float64)[:N_GAMMAS]


def time_eigh(sizes, repeats, label):
    import scipy.linalg
    from threadpoolctl import threadpool_limits

    from kernelselect.lowlevel import kernel_block
    from kernelselect.primitives._kernel_ops import symmetric_eigh_unchecked

    X, _ = problem()
    gamma0 = float(np.median(grid(X)))
    for c in sizes:
        W = kernel_block(X[:c], X[:c], gamma0)
        W = 0.5 * (W + W.T)
        times = {"ours": [], "scipy": []}
        loads = [load()]
        with threadpool_limits(1):
            w0, U0 = scipy.linalg.eigh(W, driver="evd")
            w1, U1 = symmetric_eigh_unchecked(W)
            same = bool(np.array_equal(w0, w1) and np.array_equal(U0, U1))
            for _ in range(repeats):
                for name, fn in (("ours", symmetric_eigh_unchecked),
                                 ("scipy", lambda A: scipy.linalg.eigh(A, driver="evd"))):
                    t0 = time.perf_counter()
                    fn(W)
                    times[name].append(time.perf_counter() - t0)
        loads.append(load())
        rec = dict(kind="eigh", label=label, c=c, same_bits=same, loads=loads,
                   **{k: float(np.median(v)) for k, v in times.items()},
                   raw=times)
        C.append_record(RAW, rec)
        C.log(f"eigh c={c}: ours {rec['ours']:.4f} s, scipy {rec['scipy']:.4f} s, "
              f"same bits {same}, load {loads}")


def time_loop(sizes, repeats, label, peer_scipy):
    """The per-γ work of a level on 1 and 2 threads: transforms, then operators from
    the statistics of one first pass (computed once, outside the timing)."""
    import scipy.linalg

    import kernelselect
    from kernelselect.operators import nystrom, streaming_lowrank
    from kernelselect.operators._row_passes import first_pass
    from kernelselect.operators._feature_maps import LandmarkFeatures
    from kernelselect.operators.streaming_lowrank import (ArrayRows, StreamingLowRankOperator,
                                                         _Family)
    from kernelselect.primitives._kernel_ops import Points
    from kernelselect.utils._kernel_family import Kernel
    from kernelselect.utils._threads import map_in_threads

    X, y = problem()
    gammas = grid(X)
    ours = nystrom.symmetric_eigh_unchecked
    cholesky_limit = getattr(nystrom, "CHOLESKY_MAX_COND", None)
    variants = [("ours", ours, cholesky_limit)]
    if cholesky_limit is not None:          # W always eigendecomposed, as before
        variants.append(("ours_eigh_of_W", ours, 0.0))
    if peer_scipy:
        variants.append(("scipy", lambda A: scipy.linalg.eigh(A, driver="evd"), 0.0))
    family_kernel = Kernel.of("gaussian")
    for c in sizes:
        approx = kernelselect.Nystroem(n_landmarks=c, random_state=0)
        state = approx.prepare(X, y, kernel="gaussian",
                               random_state=np.random.default_rng(0), workers=1)
        Z = X[state.landmarks]
        Zc = Points(Z, family_kernel, name="the landmarks")
        floor, k = float(approx.eigen_floor), state.rank
        rows = ArrayRows(X, y, threads=1)

        def transform(gamma):
            W = nystrom._landmark_gram(Zc, float(gamma))
            chol = getattr(nystrom, "_cholesky_transform", None)
            T = None if chol is None else chol(0.5 * (W + W.T), k, floor)
            if T is not None:
                return streaming_lowrank.Transform(post=T, T=T)
            U, scale = nystrom.nystroem_transform(W, k, floor, split=True)
            T = U * scale
            if scale.size and scale.max() > nystrom.ROTATE_ABOVE * scale.min():
                return streaming_lowrank.Transform(rotation=np.ascontiguousarray(U),
                                                   post=scale, T=T)
            return streaming_lowrank.Transform(post=T, T=T)

        transforms = [transform(g) for g in gammas]
        cholesky = sum(t.rotation is None and t.post is not None and t.post.ndim == 2
                       and np.allclose(t.post, np.triu(t.post)) for t in transforms)
        fmap = LandmarkFeatures(Z, gammas, family_kernel)
        family = _Family(rows, fmap, y)
        parts = rows.reduce(first_pass, fmap, family.values, [t.rotation for t in transforms])
        ng = len(gammas)

        def operator(i):
            return StreamingLowRankOperator(family, i, parts[i], parts[ng + i], transforms[i],
                                            "nystrom")

        times = {}
        loads = [load()]
        for _ in range(repeats):
            for name, eigh, limit in variants:
                nystrom.symmetric_eigh_unchecked = eigh
                streaming_lowrank.symmetric_eigh_unchecked = eigh
                if limit is not None:
                    nystrom.CHOLESKY_MAX_COND = limit
                try:
                    for threads in (1, 2):
                        t0 = time.perf_counter()
                        map_in_threads(transform, list(gammas), threads)
                        t1 = time.perf_counter()
                        map_in_threads(operator, range(ng), threads)
                        t2 = time.perf_counter()
                        times.setdefault(f"{name}_transforms_{threads}", []).append(t1 - t0)
                        times.setdefault(f"{name}_operators_{threads}", []).append(t2 - t1)
                        times.setdefault(f"{name}_loop_{threads}", []).append(t2 - t0)
                finally:
                    nystrom.symmetric_eigh_unchecked = ours
                    streaming_lowrank.symmetric_eigh_unchecked = ours
                    if cholesky_limit is not None:
                        nystrom.CHOLESKY_MAX_COND = cholesky_limit
        loads.append(load())
        med = {k: float(np.median(v)) for k, v in times.items()}
        rec = dict(kind="loop", label=label, c=c, n=N, gammas=int(ng),
                   cholesky_gammas=int(cholesky), loads=loads, **med, raw=times)
        C.append_record(RAW, rec)
        C.log(f"loop c={c}: " + ", ".join(f"{k} {v:.3f}" for k, v in med.items())
              + f"; cholesky on {cholesky}/{ng} γ; load {loads}")


def time_level(sizes, repeats, label):
    import kernelselect
    from kernelselect.operators.streaming_lowrank import ArrayRows

    X, y = problem()
    gammas = grid(X)
    for c in sizes:
        approx = kernelselect.Nystroem(n_landmarks=c, random_state=0)
        state = approx.prepare(X, y, kernel="gaussian",
                               random_state=np.random.default_rng(0), workers=1)
        times = {1: [], 2: []}
        loads = [load()]
        for _ in range(repeats):
            for threads in (1, 2):
                t0 = time.perf_counter()
                approx.build_all(ArrayRows(X, y, threads=threads), y, gammas,
                                 kernel="gaussian", state=state)
                times[threads].append(time.perf_counter() - t0)
        loads.append(load())
        rec = dict(kind="level", label=label, c=c, n=N, one=float(np.median(times[1])),
                   two=float(np.median(times[2])), loads=loads,
                   raw={str(k): v for k, v in times.items()})
        C.append_record(RAW, rec)
        C.log(f"level c={c}: one {rec['one']:.3f} s, two {rec['two']:.3f} s "
              f"({rec['one'] / rec['two']:.2f}x), load {loads}")


def report():
    recs = C.read_jsonl(RAW)
    lines = ["# The per-γ eigendecompositions: compiled dsyevd without the interpreter lock",
             "",
             "Generated by `studies/speed_eigh.py --report` from `speed_eigh_raw.jsonl` "
             "(protocol in the script's docstring). Medians of the interleaved repeats; "
             "loads are the 1-minute load average before and after each row's runs. "
             "On 2 cores at a load of 2 or more other processes hold the second core, so "
             "the 2-thread columns there show what the threads cost, not what they gain; "
             "their gain is measured on an idle machine.", ""]
    for label in dict.fromkeys(r["label"] for r in recs):
        rows = [r for r in recs if r["label"] == label]
        lines += [f"## {label}", ""]
        eig = [r for r in rows if r["kind"] == "eigh"]
        if eig:
            lines += ["One eigendecomposition of W (c × c), one BLAS thread:", "",
                      "| c | ours (s) | scipy evd (s) | scipy / ours | same bits | load |",
                      "|---:|---:|---:|---:|:---:|---|"]
            for r in eig:
                lines.append(f"| {r['c']} | {r['ours']:.4f} | {r['scipy']:.4f} | "
                             f"{r['scipy'] / r['ours']:.2f} | {'yes' if r['same_bits'] else 'NO'}"
                             f" | {r['loads'][0]:.1f}–{r['loads'][1]:.1f} |")
            lines.append("")
        loop = [r for r in rows if r["kind"] == "loop"]
        if loop:
            lines += [f"The per-γ loop of a level ({N_GAMMAS} γ, n = {N}): transforms + "
                      "operators, seconds on 1 and 2 threads:", "",
                      "| c | variant | Cholesky γ | transforms, 1 thread | 1 thread | "
                      "2 threads | 1 / 2 | load |",
                      "|---:|---|---:|---:|---:|---:|---:|---|"]
            for r in loop:
                for name in ("ours", "ours_eigh_of_W", "scipy"):
                    if f"{name}_loop_1" not in r:
                        continue
                    one, two = r[f"{name}_loop_1"], r[f"{name}_loop_2"]
                    chol = r['cholesky_gammas'] if name == "ours" else 0
                    lines.append(f"| {r['c']} | {name} | {chol}/{r['gammas']}"
                                 f" | {r[f'{name}_transforms_1']:.3f}"
                                 f" | {one:.3f} | {two:.3f} | {one / two:.2f} | "
                                 f"{r['loads'][0]:.1f}–{r['loads'][1]:.1f} |")
            lines.append("")
        level = [r for r in rows if r["kind"] == "level"]
        if level:
            lines += ["The whole streamed level (first pass included), seconds:", "",
                      "| c | 1 thread | 2 threads | 1 / 2 | load |", "|---:|---:|---:|---:|---|"]
            for r in level:
                lines.append(f"| {r['c']} | {r['one']:.3f} | {r['two']:.3f} | "
                             f"{r['one'] / r['two']:.2f} | "
                             f"{r['loads'][0]:.1f}–{r['loads'][1]:.1f} |")
            lines.append("")
    C.write_report(REPORT, lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="200,400,800")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--parts", default="eigh,loop,level")
    p.add_argument("--peer-scipy", action="store_true")
    p.add_argument("--label", default="run")
    p.add_argument("--report", action="store_true")
    a = p.parse_args()
    if a.report:
        report()
        return
    sizes = [int(s) for s in a.sizes.split(",")]
    parts = a.parts.split(",")
    if "eigh" in parts:
        time_eigh(sizes, a.repeats, a.label)
    if "loop" in parts:
        time_loop(sizes, a.repeats, a.label, a.peer_scipy)
    if "level" in parts:
        time_level(sizes, max(1, a.repeats // 2), a.label)
    report()


if __name__ == "__main__":
    main()
