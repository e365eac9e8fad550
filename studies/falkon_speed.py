"""The large-m Nyström solver: time per iteration against one streamed pass, and the
iterations conjugate gradients needs at n = 10⁶.

Two measurements, each appending JSON lines (with the machine load before and after)
to studies/results/falkon_speed_raw.jsonl; ``report`` rebuilds
studies/results/falkon_speed.md from those lines alone.

``speed``: at n rows and m centres (d = 10, synthetic), interleaved repeats of
  - ``apply``: one streamed K_nm·v (the compiled pass, kernel blocks formed once);
  - ``cross``: one streamed K_nmᵀ·u;
  - ``normal``: the fused pass K_nmᵀ(K_nm v), each block of kernel rows formed once
    and used for both products (the floor of an iteration);
  - ``iteration``: one conjugate-gradient iteration of the solver, measured as the
    difference of two fits stopped after k₁ and k₂ iterations (tol = 0), divided by
    k₂ − k₁; so it holds the pass, the four triangular solves with the m × m factors
    and the vector updates, and nothing of the setup.
``iterations``: at n = 10⁶, the iterations to a relative residual of 1e-6 for
  synthetic data (d = 10) and for data shaped like protein (d = 9) and cadata (d = 8):
  a smoothed bootstrap of the standardised set (rows resampled with N(0, 0.1²) noise
  added to every feature, the target of the drawn row plus N(0, (0.1·sd)²) noise), at
  the (γ, α/n) that ``select_kernel`` chooses with its defaults on a 10⁴-row sample.

Run from the repository root with the project's virtualenv active:

    python studies/falkon_speed.py speed --n 200000 --m 1000 5000 20000 --repeats 3
    python studies/falkon_speed.py iterations --n 1000000 --shape synthetic protein cadata --m 10000
    python studies/falkon_speed.py report
"""

import json
import os
import resource
import time
from pathlib import Path

import numpy as np

import _common as C

RAW = C.RESULTS / "falkon_speed_raw.jsonl"
REPORT = C.RESULTS / "falkon_speed.md"


def load():
    return [round(x, 2) for x in os.getloadavg()]


def record(**fields):
    fields.update(peak_rss_gb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 3))
    C.append_record(RAW, fields)
    C.log(json.dumps(fields)[:300])


def synthetic(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    W = rng.standard_normal((d, 3)) / np.sqrt(d)
    y = np.sin(2 * X @ W).sum(axis=1) + 0.1 * rng.standard_normal(n)
    return X, y - y.mean()


def shaped(name, n, seed=0):
    """A smoothed bootstrap of the standardised set ``name`` to n rows."""
    data = C.load_data(name)
    X, _ = C.standardise(np.asarray(data.X, dtype=np.float64), np.zeros((1, data.X.shape[1])))
    y = np.asarray(data.y, dtype=np.float64)
    y = (y - y.mean()) / y.std()
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, X.shape[0], n)
    Xn = X[rows] + 0.1 * rng.standard_normal((n, X.shape[1]))
    yn = y[rows] + 0.1 * rng.standard_normal(n)
    return np.ascontiguousarray(Xn), yn - yn.mean()


def selected_point(X, y, seed=0):
    """(γ, α/n) that select_kernel's defaults choose on a 10⁴-row sample."""
    import kernelselect

    rng = np.random.default_rng(seed)
    idx = rng.choice(X.shape[0], 10_000, replace=False)
    res = kernelselect.select_kernel(X[idx], y[idx], random_state=seed)
    return float(res.best_gamma), float(res.best_alpha) / 10_000


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run_speed(args):
    from kernelselect.solvers._pcg import choose_centres, fit_nystrom_pcg
    from kernelselect.solvers._rows import APPLY, CROSS, NORMAL, Conditioning, run_pass

    d, gamma, lam = 10, 0.05, 1e-6
    X, y = synthetic(args.n, d)
    Y = y[:, None]
    rng = np.random.default_rng(1)
    for m in args.m:
        centres = choose_centres(args.n, m, np.random.default_rng(0))
        cond = Conditioning(X[centres], gamma, "gaussian",
                            bounds=(X.min(axis=0), X.max(axis=0)))
        V, U = rng.standard_normal((m, 1)), rng.standard_normal((args.n, 1))

        def fit(k):
            return fit_nystrom_pcg(X, Y, gamma, lam * args.n, centres=centres, bias=False,
                                   tol=0.0, max_iter=k, workers=args.workers)

        for repeat in range(args.repeats):
            before = load()
            times = {
                "apply": timed(lambda: run_pass(APPLY, X, cond, V, args.workers))[0],
                "cross": timed(lambda: run_pass(CROSS, X, cond, U, args.workers))[0],
                "normal": timed(lambda: run_pass(NORMAL, X, cond, V, args.workers))[0],
            }
            m1 = fit(args.k1)
            m2 = fit(args.k2)
            times["iteration"] = ((m2.details["seconds"]["iterations"]
                                   - m1.details["seconds"]["iterations"]) / (args.k2 - args.k1))
            times["preconditioner"] = m2.details["seconds"]["preconditioner"]
            record(part="speed", n=args.n, d=d, m=m, repeat=repeat, workers=args.workers,
                   seconds=times, load_before=before, load_after=load())


def run_iterations(args):
    from kernelselect.solvers._pcg import choose_centres, choose_sample, fit_nystrom_pcg

    for shape in args.shape:
        X, y = synthetic(args.n, 10) if shape == "synthetic" else shaped(shape, args.n)
        gamma, lam = selected_point(X, y)
        for m in args.m:
            centres = choose_centres(args.n, m, np.random.default_rng(0))
            for factor in args.q_factor:
                q = int(round(factor * m))
                sample = choose_sample(args.n, centres, q, np.random.default_rng(1)) if q else None
                before = load()
                t0 = time.perf_counter()
                model = fit_nystrom_pcg(X, y[:, None], gamma, lam * args.n, centres=centres,
                                        sample=sample, bias=False, tol=args.tol,
                                        max_iter=args.max_iter, workers=args.workers,
                                        progress=60.0)
                wall = time.perf_counter() - t0
                det = model.details
                record(part="iterations", shape=shape, n=args.n, d=X.shape[1], m=m, q=q,
                       gamma=gamma, lam=lam, tol=args.tol, max_iter=args.max_iter,
                       iterations=det["iterations"], residual=float(det["residual"].max()),
                       converged=det["converged"], passes=det["passes"],
                       jitter=det["jitter"],
                       history=[float(h) for h in det["history"].max(axis=1)],
                       seconds=det["seconds"], wall=wall, workers=args.workers,
                       load_before=before, load_after=load())


def report(args):
    recs = list(C.read_jsonl(RAW)) if (RAW.exists() or Path(str(RAW) + ".gz").exists()) else []
    lines = ["# The large-m Nyström solver: time per iteration and iterations",
             "", "Generated by `studies/falkon_speed.py report` from "
             "`falkon_speed_raw.jsonl.gz`. Machine: 2 cores shared with other work; the "
             "load (1-minute average) is given beside every timing.", ""]
    speed = [r for r in recs if r["part"] == "speed"]
    if speed:
        lines += ["## Time per iteration against one streamed pass", "",
                  "Synthetic data, d = 10, γ = 0.05, α/n = 1e-6. Median over repeats of "
                  "interleaved runs (seconds). *floor* = the fused pass K_nmᵀ(K_nm v); "
                  "*apply + cross* = the two products as separate streamed passes.", "",
                  "| n | m | threads | apply | cross | apply + cross | fused pass (floor) "
                  "| one iteration | iteration / floor | iteration / (apply + cross) "
                  "| preconditioner | load |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        keys = sorted({(r["n"], r["m"], r["workers"] or 0) for r in speed})
        for n, m, w in keys:
            rs = [r for r in speed if (r["n"], r["m"], r["workers"] or 0) == (n, m, w)]
            med = {k: float(np.median([r["seconds"][k] for r in rs]))
                   for k in rs[0]["seconds"]}
            both = med["apply"] + med["cross"]
            loads = [x for r in rs for x in (r["load_before"][0], r["load_after"][0])]
            lines.append(
                f"| {n} | {m} | {w or 'default'} | {med['apply']:.2f} | {med['cross']:.2f} | "
                f"{both:.2f} | {med['normal']:.2f} | {med['iteration']:.2f} | "
                f"{med['iteration'] / med['normal']:.2f} | {med['iteration'] / both:.2f} | "
                f"{med['preconditioner']:.1f} | {min(loads):.1f}–{max(loads):.1f} |")
        lines.append("")
    its = [r for r in recs if r["part"] == "iterations"]
    if its:
        lines += ["## Iterations to a relative residual of 1e-6", "",
                  "Relative residual of the normal equations in w (the stopping rule), "
                  "explicit on exit. Seconds: the preconditioner (kernel block K_mm and "
                  "three m³ factorisations), the right-hand side pass, the iterations "
                  "(each one fused pass plus O(m²) solves, and the explicit check).", "",
                  "*q*: rows sampled besides the centres for the preconditioner's Gram "
                  "(0: the centres alone, FALKON's form).", "",
                  "| data | n | d | m | q | γ | α/n | iterations | residual | seconds per iteration "
                  "| preconditioner s | total s | peak RSS GB | load |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in sorted(its, key=lambda r: (r["n"], r["shape"], r["m"], r.get("q", 0))):
            s = r["seconds"]
            per = s["iterations"] / max(1, r["iterations"] + 1)
            lines.append(
                f"| {r['shape']} | {r['n']} | {r['d']} | {r['m']} | {r.get('q', 0)} | "
                f"{r['gamma']:.3g} | "
                f"{r['lam']:.2g} | {r['iterations']}{'' if r['converged'] else ' (cap)'} | "
                f"{r['residual']:.1e} | {per:.1f} | {s['preconditioner']:.0f} | "
                f"{r['wall']:.0f} | {r['peak_rss_gb']:.2f} | "
                f"{r['load_before'][0]:.1f}–{r['load_after'][0]:.1f} |")
        lines.append("")
        lines += ["Residual after 10, 20, 40, … iterations:", ""]
        for r in sorted(its, key=lambda r: (r["n"], r["shape"], r["m"], r.get("q", 0))):
            h = r["history"]
            marks = [k for k in (10, 20, 40, 80, 160) if k <= len(h)]
            lines.append(f"- {r['shape']}, n = {r['n']}, m = {r['m']}, q = {r.get('q', 0)}: "
                         + ", ".join(
                f"{k}: {h[k - 1]:.1e}" for k in marks))
        lines.append("")
    C.write_report(REPORT, lines)


def main(argv=None):
    p, sub = C.command_parser(__doc__)
    s = sub.add_parser("speed")
    s.add_argument("--n", type=int, default=200_000)
    s.add_argument("--m", type=int, nargs="+", default=[1000, 5000, 20000])
    s.add_argument("--repeats", type=int, default=3)
    s.add_argument("--k1", type=int, default=2)
    s.add_argument("--k2", type=int, default=5)
    s.add_argument("--workers", type=int, default=None)
    i = sub.add_parser("iterations")
    i.add_argument("--n", type=int, default=1_000_000)
    i.add_argument("--shape", nargs="+", default=["synthetic", "protein", "cadata"])
    i.add_argument("--m", type=int, nargs="+", default=[10_000])
    i.add_argument("--q-factor", type=float, nargs="+", default=[1.0],
                   help="rows sampled for the preconditioner besides the centres, per centre "
                        "(0: the centres alone, FALKON's form)")
    i.add_argument("--tol", type=float, default=1e-6)
    i.add_argument("--max-iter", type=int, default=300)
    i.add_argument("--workers", type=int, default=None)
    C.run_command(p, sub, argv, report, speed=run_speed, iterations=run_iterations)


if __name__ == "__main__":
    main()
