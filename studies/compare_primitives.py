"""Time each kernelselect primitive against the bare numpy/scipy code a user would write.

Every primitive and its peer run in the same process, on the same inputs, with
1 and then 2 threads: ``workers=t`` for kernelselect and scipy.fft, and
threadpoolctl limiting BLAS/OpenMP pools to ``t`` threads for both sides. Each
pair is also checked to compute the same thing (max relative difference).

The peers:

=================== ==========================================================
rff_features        np.sqrt(2/D) * np.cos(X @ W + b)
labeled_rff_column  (np.sqrt(2)/D) * y[:, None] * np.cos(X @ W + b)
song_xu_column      1-D factors in numpy, combined with np.multiply.outer
kernel_block        np.exp(-gamma * cdist(X, Z, "sqeuclidean"))
kernel_matvec       K = np.exp(-gamma * cdist(X, X, "sqeuclidean")); K @ V
kernel_sums         the same K, then its sums, Frobenius norm, row sums, diagonal
fft.rfftn (pyFFTW)  scipy.fft.rfftn(a, workers=t), on an (n, D) array (labelled MCM)
                    and on the Song–Xu grid m; the pyFFTW layer with its default
                    FFTW_ESTIMATE plans, and with FFTW_MEASURE plans on (n, D)
=================== ==========================================================

Usage::

    python studies/compare_primitives.py                  # defaults below
    python studies/compare_primitives.py --n-columns 1000000 --n-dense 20000 --repeats 3
    python studies/compare_primitives.py --only rff_features kernel_sums

Prints a markdown table: min and median over ``--repeats`` timed calls (after
one untimed warm-up call), ratio = peer min / ours min (> 1: kernelselect is
faster), and the 1 → t thread speed-up of the kernelselect call.
"""

import argparse
import functools
import math
import statistics
import sys
import time

import numpy as np
import scipy.fft
from scipy.spatial.distance import cdist
from threadpoolctl import threadpool_limits

import _common as C

GAMMA = 0.05


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n-columns", type=int, default=100_000,
                   help="n for rff_features, labeled_rff_column, song_xu_column, kernel_block "
                        "(default 100000)")
    p.add_argument("--n-dense", type=int, default=5_000,
                   help="n for kernel_matvec and kernel_sums; the peer forms the n×n K, so keep "
                        "8·n² bytes in memory (default 5000)")
    p.add_argument("--d", type=int, default=20, help="input dimension (default 20)")
    p.add_argument("--D", type=int, default=100, help="random features (default 100)")
    p.add_argument("--landmarks", type=int, default=200, help="columns of kernel_block (default 200)")
    p.add_argument("--grid-dims", type=int, default=3, help="p of the Song–Xu grid (default 3)")
    p.add_argument("--fft-shape", default=None,
                   help="shape of the rfftn input, e.g. 100000x100 (default n-columns x D)")
    p.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                   help="thread counts to time (default 1 2); the first is the speed-up baseline")
    p.add_argument("--repeats", type=int, default=5, help="timed calls per case (default 5)")
    p.add_argument("--only", nargs="+", default=None, help="run only these primitives")
    p.add_argument("--memory", action="store_true",
                   help="also measure the peak memory kernel_matvec, kernel_sums and their dense "
                        "peers add beyond their inputs (one child process per measurement)")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be ≥ 1")
    if any(t < 1 for t in args.threads):
        p.error("--threads must be positive")
    return args


def timeit(func, repeats):
    func()  # warm-up: plans, page faults, lazy imports
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def _ms(seconds):
    return f"{seconds * 1e3:.3g}"


def max_rel_diff(ours, peer):
    ours = [np.asarray(v, dtype=np.complex128 if np.iscomplexobj(v) else np.float64) for v in ours]
    peer = [np.asarray(v, dtype=np.complex128 if np.iscomplexobj(v) else np.float64) for v in peer]
    worst = 0.0
    for a, b in zip(ours, peer):
        scale = max(np.max(np.abs(b)), np.finfo(float).tiny)
        worst = max(worst, float(np.max(np.abs(a - b)) / scale))
    return worst


# --------------------------------------------------------------------------- cases
# Each case returns (label, size text, ours(t) -> callable, peer(t) -> callable,
# check: (ours result, peer result) -> max relative difference).


def song_xu_peer(m, h, gamma):
    factors = []
    for ms, hs in zip(m, h):
        i = np.arange(ms)
        f = np.exp(-gamma * (i * hs) ** 2)
        mirror = (i != 0) & (2 * i != ms)
        f[mirror] += np.exp(-gamma * ((ms - i[mirror]) * hs) ** 2)
        factors.append(f)
    return functools.reduce(np.multiply.outer, factors)


def build_cases(args, lowlevel, fft):
    rng = np.random.default_rng(0)
    dt = np.dtype(args.dtype)
    n, d, D = args.n_columns, args.d, args.D
    X = rng.standard_normal((n, d)).astype(dt)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0).astype(dt)
    W = rng.normal(0.0, math.sqrt(2 * GAMMA), size=(d, D)).astype(dt)
    b = rng.uniform(0, 2 * math.pi, size=D).astype(dt)
    Z = X[: args.landmarks].copy()
    nd = args.n_dense
    Xd = X[:nd].copy() if nd <= n else rng.standard_normal((nd, d)).astype(dt)
    vd = rng.standard_normal(nd).astype(dt)
    p = args.grid_dims
    side = round(n ** (1.0 / p))
    m = tuple([side] * (p - 1) + [max(1, round(n / side ** (p - 1)))])
    h = tuple(1.0 / ms for ms in m)
    fft_shape = (tuple(int(s) for s in args.fft_shape.split("x")) if args.fft_shape
                 else (n, D))
    a_fft = rng.standard_normal(fft_shape).astype(dt)
    a_grid = rng.standard_normal(m).astype(dt)  # a Song–Xu column's grid, as the MCM criteria use

    def dense_K(Xs):
        K = cdist(Xs, Xs, "sqeuclidean")
        K *= -GAMMA
        np.exp(K, out=K)
        return K

    def dense_sums(Xs):
        K = dense_K(Xs)
        rs = K.sum(axis=1)
        return {"total": rs.sum(), "frobenius_sq": np.vdot(K, K), "row_sums": rs,
                "row_sums_sq": rs @ rs, "diagonal": np.diagonal(K).copy()}

    def measured_rfftn(a, t):
        # the plan is built (with trial runs) in the untimed warm-up call, then cached
        previous = fft.set_planner_effort("FFTW_MEASURE")
        try:
            return fft.rfftn(a, workers=t, backend="pyfftw")
        finally:
            fft.set_planner_effort(previous)

    sums_keys = ("total", "frobenius_sq", "row_sums", "row_sums_sq", "diagonal")

    def cases():
        yield ("rff_features", f"n={n}, d={d}, D={D}",
               lambda t: lambda: lowlevel.rff_features(X, W, b, workers=t),
               lambda t: lambda: np.sqrt(2.0 / D) * np.cos(X @ W + b),
               lambda o, q: max_rel_diff([o], [q]))
        yield ("labeled_rff_column", f"n={n}, d={d}, D={D}",
               lambda t: lambda: lowlevel.labeled_rff_column(X, y, W, b, workers=t),
               lambda t: lambda: (np.sqrt(2.0) / D) * y[:, None] * np.cos(X @ W + b),
               lambda o, q: max_rel_diff([o], [q]))
        yield ("song_xu_column", f"m={'x'.join(map(str, m))}",
               lambda t: lambda: lowlevel.song_xu_column(m, h, GAMMA, workers=t),
               lambda t: lambda: song_xu_peer(m, h, GAMMA),
               lambda o, q: max_rel_diff([o], [q]))
        yield ("kernel_block", f"{n}x{args.landmarks}, d={d}",
               lambda t: lambda: lowlevel.kernel_block(X, Z, GAMMA, workers=t),
               lambda t: lambda: np.exp(-GAMMA * cdist(X, Z, "sqeuclidean")),
               lambda o, q: max_rel_diff([o], [q]))
        yield ("kernel_matvec", f"n={nd}, d={d}, one vector",
               lambda t: lambda: lowlevel.kernel_matvec(Xd, vd, GAMMA, workers=t),
               lambda t: lambda: dense_K(Xd) @ vd,
               lambda o, q: max_rel_diff([o], [q]))
        yield ("kernel_sums", f"n={nd}, d={d}",
               lambda t: lambda: lowlevel.kernel_sums(Xd, GAMMA, workers=t),
               lambda t: lambda: dense_sums(Xd),
               lambda o, q: max_rel_diff([o[k] for k in sums_keys], [q[k] for k in sums_keys]))
        yield ("fft.rfftn (pyFFTW)", "x".join(map(str, fft_shape)),
               lambda t: lambda: fft.rfftn(a_fft, workers=t, backend="pyfftw"),
               lambda t: lambda: scipy.fft.rfftn(a_fft, workers=t),
               lambda o, q: max_rel_diff([o], [q]))
        yield ("fft.rfftn (pyFFTW, FFTW_MEASURE plan)", "x".join(map(str, fft_shape)),
               lambda t: lambda: measured_rfftn(a_fft, t),
               lambda t: lambda: scipy.fft.rfftn(a_fft, workers=t),
               lambda o, q: max_rel_diff([o], [q]))
        yield ("fft.rfftn (pyFFTW)", f"grid {'x'.join(map(str, m))}",
               lambda t: lambda: fft.rfftn(a_grid, workers=t, backend="pyfftw"),
               lambda t: lambda: scipy.fft.rfftn(a_grid, workers=t),
               lambda o, q: max_rel_diff([o], [q]))

    return cases()


def _peak_child(name, side, n, d, dtype, threads, conn):
    """In a fresh process: build the inputs, then report how far one call raises peak RSS."""
    from kernelselect import lowlevel

    def dense_K(Xs):
        K = cdist(Xs, Xs, "sqeuclidean")
        K *= -GAMMA
        np.exp(K, out=K)
        return K

    calls = {
        ("kernel_matvec", "ours"): lambda X, v: lowlevel.kernel_matvec(X, v, GAMMA, workers=threads),
        ("kernel_matvec", "peer"): lambda X, v: dense_K(X) @ v,
        ("kernel_sums", "ours"): lambda X, v: lowlevel.kernel_sums(X, GAMMA, workers=threads),
        ("kernel_sums", "peer"): lambda X, v: (lambda K: (K.sum(), np.vdot(K, K), K.sum(axis=1)))(dense_K(X)),
    }
    call = calls[(name, side)]
    rng = np.random.default_rng(0)
    with threadpool_limits(limits=threads):
        call(rng.standard_normal((16, d)).astype(dtype), np.ones(16, dtype))  # load libraries
        X = rng.standard_normal((n, d)).astype(dtype)
        v = rng.standard_normal(n).astype(dtype)
        try:
            C.reset_peak_rss()
            before = C.peak_rss()
            call(X, v)
            extra = C.peak_rss() - before
        except OSError:
            extra = float("nan")
    conn.send(extra)
    conn.close()


def memory_table(args):
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    print()
    print("| primitive | n | threads | ours: extra peak (MB) | peer: extra peak (MB) |")
    print("|---|---:|---:|---:|---:|")
    for name in ("kernel_matvec", "kernel_sums"):
        if args.only and name not in args.only:
            continue
        for t in args.threads:
            row = []
            for side in ("ours", "peer"):
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_peak_child,
                                   args=(name, side, args.n_dense, args.d, args.dtype, t, send))
                proc.start()
                row.append(recv.recv() / 1e6)
                proc.join()
            print(f"| {name} | {args.n_dense} | {t} | {row[0]:.1f} | {row[1]:.1f} |")
            sys.stdout.flush()


def main(argv=None):
    args = parse_args(argv)
    import kernelselect
    from kernelselect import fft, lowlevel

    cfg = kernelselect.show_config()
    print(f"kernelselect {cfg['version']}, openmp={cfg['openmp']}, "
          f"omp_max_threads={cfg['omp_max_threads']}, fft={cfg['fft_backend']} "
          f"(pyFFTW {cfg.get('pyfftw')}), numpy {cfg['numpy']}, scipy {cfg['scipy']}, "
          f"dtype={args.dtype}, repeats={args.repeats}")
    print()
    header = ("| primitive | size | threads | ours min (ms) | ours median (ms) | peer min (ms) "
              "| peer median (ms) | peer/ours (min) | ours speed-up vs "
              f"{args.threads[0]} thread(s) | max rel diff |")
    print(header)
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    sys.stdout.flush()
    for label, size, ours_for, peer_for, check in build_cases(args, lowlevel, fft):
        if args.only and label.split(" ")[0] not in args.only and label not in args.only:
            continue
        base = None
        for t in args.threads:
            with threadpool_limits(limits=t):
                ours = ours_for(t)
                peer = peer_for(t)
                diff = check(ours(), peer())
                o_min, o_med = timeit(ours, args.repeats)
                p_min, p_med = timeit(peer, args.repeats)
            if base is None:
                base = o_min
            print(f"| {label} | {size} | {t} | {_ms(o_min)} | {_ms(o_med)} | {_ms(p_min)} | "
                  f"{_ms(p_med)} | {p_min / o_min:.2f} | {base / o_min:.2f} | {diff:.1e} |")
            sys.stdout.flush()
    if args.memory:
        memory_table(args)


if __name__ == "__main__":
    main()
