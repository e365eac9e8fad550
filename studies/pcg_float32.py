"""The Nyström machine's preconditioner in float32: FALKON's β form against the solver's
w form, on the same data, centres, sample rows, γ and α.

The solver (:mod:`kernelselect.solvers._pcg`) defines its model through T, the float64
Cholesky factor of K_mm + δI (δ = m·2⁻⁵²), and iterates in w = Tβ; its factors T and A
therefore stay in float64: an m × m array of doubles (3.2 GB at m = 2·10⁴) and about
3m³ flops (T, the sample rows' features, A). In the β form of FALKON (Rudi, Carratino
& Rosasco, NeurIPS 2017),

    (K_nmᵀK_nm + αK_mm)β = K_nmᵀy,

the products are exact (float64 passes) and the factors only precondition, so they may
be rounded: here T (TᵀT = K_mm + δ₃₂I, δ₃₂ = m·2⁻²³) and A (AᵀA = (TTᵀ + Φ_SᵀΦ_S)/(m + q)
+ λI, the solver's estimate with its q = m sample rows S) are computed and applied in
float32, and conjugate gradients run on β in float64 with the preconditioner
B·Bᵀ, B = T⁻¹A⁻¹/√n, in the flexible (Polak–Ribière) form, since a float32 solve is
linear only to its rounding. The residual is the float64 one of the normal equations in
β, updated each iteration and checked by an explicit product at the end.

Recorded, against the solver's fit (default tolerance 1e-7) of the same model: the
seconds of each preconditioner (float64 as the solver builds it, float32 here), the
iterations and seconds of each solve, the relative residual of the β equations
reached, the largest difference of the two machines' predictions on 10⁴ test rows
(relative to the spread of y) and both test NMSE. The residual history of the β form
gives the iterations it needs for each tolerance.

One thread; ``fit_scale.py``'s data (d = 10, y = sin(2·Xw) + 0.1ε); γ and α/n as the
default selection chose them at 2·10⁵ rows (0.2131, 10⁻⁶) unless given.

    python studies/pcg_float32.py run --n 50000 --centres 4000
    python studies/pcg_float32.py run --n 200000 --centres 20000 --preconditioner-only
    python studies/pcg_float32.py solver --n 50000 --centres 10000
    python studies/pcg_float32.py passes --n 20000 --centres 2000 --gamma 0.02 --mu 1e-8
    python studies/pcg_float32.py report

``solver``: the solver itself (``nystrom_pcg``) with ``precision="float64"``, forced
``"float32"`` and ``"auto"`` on the same data, centres, q = m sample rows, γ and α/n
(X ~ N(0, I_d), y = sin(2·Xw) + 0.1ε, ``fit_scale.py``'s data at d = 10): iterations,
whether ``tol`` was met, seconds, the precision ``auto`` kept, test NMSE and the
largest prediction difference from float64's; and what the rule reads, the pivots of
the float32 factor of K_mm + δ₃₂I (the smallest over δ₃₂, the share below 10δ₃₂), with
the share of K_mm's eigenvalues below δ₃₂ where m ≤ 4000.
"""

import argparse
import math
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from scipy.linalg import blas, lapack

import _common as C

RAW = C.RESULTS / "pcg_float32_raw.jsonl"
REPORT = C.RESULTS / "pcg_float32.md"


def preconditioner32(cond, n, alpha, sample):
    """(T, A) in float32 (upper factors) and the seconds taken; ``sample`` the extra
    rows (shifted and scaled as the centres)."""
    from kernelselect import lowlevel

    clock = time.perf_counter()
    m = cond.centres.shape[0]
    K = lowlevel.kernel_block(cond.centres, cond.centres, cond.gamma, kernel=cond.kernel)
    T = np.asfortranarray(K, dtype=np.float32)
    del K
    T[np.diag_indices(m)] += np.float32(m * 2.0 ** -23)
    T, info = lapack.spotrf(T, lower=0, clean=1, overwrite_a=1)
    assert info == 0, info
    G, info = lapack.slauum(T.copy(order="F"), lower=0, overwrite_c=1)   # upper of T Tᵀ
    assert info == 0, info
    rows = m
    if sample is not None:
        for start in range(0, sample.shape[0], 2048):
            Kb = lowlevel.kernel_block(sample[start:start + 2048], cond.centres, cond.gamma,
                                       kernel=cond.kernel)
            Pt = blas.strsm(1.0, T, np.asfortranarray(Kb.T, dtype=np.float32), lower=0,
                            trans_a=1, overwrite_b=1)              # Φ_bᵀ = T⁻ᵀK_bmᵀ
            G = blas.ssyrk(1.0, Pt, beta=1.0, c=G, trans=0, lower=0, overwrite_c=1)
        rows += sample.shape[0]
    G /= np.float32(rows)
    G[np.diag_indices(m)] += np.float32(alpha / n)
    A, info = lapack.spotrf(G, lower=0, clean=1, overwrite_a=1)
    assert info == 0, info
    return T, A, time.perf_counter() - clock


def solve_beta(rows, alpha, T, A, tol, max_iter):
    """Flexible PCG on (K_nmᵀK_nm + αK_mm)β = K_nmᵀy with z = B(Bᵀr) in float32."""
    from kernelselect import lowlevel

    n = rows.n
    cond = rows.cond
    sqrt_n = math.sqrt(n)
    clock = time.perf_counter()
    Kmm = lowlevel.kernel_block(cond.centres, cond.centres, cond.gamma, kernel=cond.kernel)

    def precondition(R):
        V = blas.strsm(1.0, T, np.asfortranarray(R, dtype=np.float32), lower=0, trans_a=1)
        V = blas.strsm(1.0, A, V, lower=0, trans_a=1)           # Bᵀr·√n
        V = blas.strsm(1.0, A, V, lower=0, trans_a=0)
        V = blas.strsm(1.0, T, V, lower=0, trans_a=0)           # B Bᵀ r · n
        return np.asarray(V, dtype=np.float64) / n

    def H(P):
        return rows.normal(np.ascontiguousarray(P)) + alpha * (Kmm @ P)

    KtY, _, _ = rows.cross_targets()
    b = KtY[:, 1:]
    b_norm = np.linalg.norm(b, axis=0)
    beta = np.zeros_like(b)
    r = b.copy()
    z = precondition(r)
    p = z.copy()
    rz = np.einsum("ij,ij->j", r, z)
    history = []
    setup = time.perf_counter() - clock
    clock = time.perf_counter()
    it = 0
    while it < max_iter:
        q = H(p)
        a = rz / np.einsum("ij,ij->j", p, q)
        beta += a * p
        r_old = r
        r = r - a * q
        it += 1
        history.append(float(np.max(np.linalg.norm(r, axis=0) / b_norm)))
        if history[-1] <= tol:
            break
        z = precondition(r)
        rz_new = np.einsum("ij,ij->j", r, z)
        pr = np.einsum("ij,ij->j", z, r - r_old) / rz
        rz = rz_new
        p = z + np.maximum(pr, 0.0) * p
    seconds = time.perf_counter() - clock
    explicit = float(np.max(np.linalg.norm(b - H(beta), axis=0) / b_norm))
    return beta, it, history, explicit, setup, seconds


def predict(cond, beta, X):
    from kernelselect import lowlevel

    Xc = np.ascontiguousarray((X - cond.shift) * cond.scale)
    return lowlevel.kernel_block(Xc, cond.centres, cond.gamma, kernel=cond.kernel) @ beta


def preconditioners(args, X, Y, alpha, centres, sample, load):
    """The two preconditioners alone (the solver's float64 one, then float32)."""
    from kernelselect.solvers import _pcg

    rows, _, S = _pcg.streamed_rows(X, Y, args.gamma, centres, sample, "gaussian", 1)
    clock = time.perf_counter()
    P = _pcg.NystromPreconditioner(rows.cond, args.n, alpha, S, centred=False)
    seconds64 = time.perf_counter() - clock
    del P
    S32 = np.ascontiguousarray((S - rows.cond.shift) * rows.cond.scale)
    _, _, seconds32 = preconditioner32(rows.cond, args.n, alpha, S32)
    load.append([round(v, 2) for v in os.getloadavg()])
    rec = {"kind": "preconditioner", "n": args.n, "m": args.centres, "q": int(sample.size),
           "gamma": args.gamma, "mu": args.mu, "load": load, "seconds64": seconds64,
           "seconds32": seconds32}
    C.append_record(RAW, rec)
    C.log(rec)


def run(args):
    from threadpoolctl import threadpool_limits

    sys.path.insert(0, str(C.REPO / "studies"))
    from fit_scale import synthetic

    from kernelselect.solvers import _pcg

    Xtr, ytr = synthetic(args.n)
    Xte, yte = synthetic(10_000, seed=1)
    ybar = ytr.mean()
    Y = (ytr - ybar)[:, None]
    alpha = args.mu * args.n
    rng = np.random.default_rng(0)
    centres = _pcg.choose_centres(args.n, args.centres, rng)
    sample = _pcg.choose_sample(args.n, centres, int(args.centres * _pcg.SAMPLE_PER_CENTRE), rng)
    load = [[round(v, 2) for v in os.getloadavg()]]
    if args.preconditioner_only:
        with threadpool_limits(1):
            preconditioners(args, Xtr, Y, alpha, centres, sample, load)
        return
    with threadpool_limits(1):
        rows, Z, S = _pcg.streamed_rows(Xtr, Y, args.gamma, centres, sample, "gaussian", 1)
        clock = time.perf_counter()
        sol = _pcg.nystrom_pcg(rows, alpha, bias=False, sample=S)
        ref_seconds = time.perf_counter() - clock
        ref_pred = predict(rows.cond, sol.coef, Xte)[:, 0] + ybar
        rows32, _, _ = _pcg.streamed_rows(Xtr, Y, args.gamma, centres, sample, "gaussian", 1)
        S32 = np.ascontiguousarray((S - rows32.cond.shift) * rows32.cond.scale)
        T, A, pre32 = preconditioner32(rows32.cond, args.n, alpha, S32)
        beta, its, history, explicit, setup, seconds = solve_beta(rows32, alpha, T, A,
                                                                  args.tol, args.max_iter)
        pred = predict(rows32.cond, beta, Xte)[:, 0] + ybar
    load.append([round(v, 2) for v in os.getloadavg()])
    spread = float(np.std(ytr))
    rec = {"n": args.n, "m": args.centres, "q": int(sample.size), "gamma": args.gamma,
           "mu": args.mu, "tol": args.tol, "load": load,
           "w64": {"iterations": int(sol.iterations), "seconds": sol.seconds,
                   "total": ref_seconds, "residual_w": float(np.max(sol.residual)),
                   "nmse": float(np.mean((ref_pred - yte) ** 2) / np.var(yte))},
           "beta32": {"iterations": its, "preconditioner": pre32, "setup": setup,
                      "iterations_seconds": seconds, "residual_beta": explicit,
                      "history": history,
                      "nmse": float(np.mean((pred - yte) ** 2) / np.var(yte))},
           "max_prediction_difference": float(np.max(np.abs(pred - ref_pred)) / spread)}
    C.append_record(RAW, rec)
    C.log({k: v for k, v in rec.items() if k not in ("w64", "beta32")},
          rec["w64"]["iterations"], round(rec["w64"]["seconds"]["preconditioner"], 1),
          its, round(pre32, 1), rec["max_prediction_difference"])


def solver_data(n, d, seed=0):
    sys.path.insert(0, str(C.REPO / "studies"))
    from fit_scale import D, synthetic

    if d == D:
        return synthetic(n, seed=seed)
    rng = np.random.default_rng(seed)
    w = np.random.default_rng(12345).standard_normal(d) / np.sqrt(d)
    X = rng.standard_normal((n, d))
    return X, np.sin(2.0 * X @ w) + 0.1 * rng.standard_normal(n)


def pivot_shares(cond, m):
    """(smallest pivot / δ₃₂, share of pivots below 10δ₃₂, share of eigenvalues of K_mm
    below δ₃₂ or None) of the float32 factor the solver's rule reads."""
    from kernelselect import lowlevel
    from kernelselect.solvers import _pcg

    F, jitter = _pcg.factor_centres(cond, _pcg.jitter_for(m), single=True)
    pivots = _pcg.pivot_ratios(F, jitter)
    del F
    eig = None
    if m <= 4000:
        K = lowlevel.kernel_block(cond.centres, cond.centres, cond.gamma, kernel=cond.kernel)
        eig = float(np.mean(np.linalg.eigvalsh(K) < jitter))
    return float(pivots.min()), float(np.mean(pivots < 10.0)), eig


def solver(args):
    from threadpoolctl import threadpool_limits

    from kernelselect import lowlevel
    from kernelselect.solvers import _pcg

    Xtr, ytr = solver_data(args.n, args.d)
    Xte, yte = solver_data(10_000, args.d, seed=1)
    ybar = ytr.mean()
    Y = (ytr - ybar)[:, None]
    alpha = args.mu * args.n
    rng = np.random.default_rng(0)
    centres = _pcg.choose_centres(args.n, args.centres, rng)
    sample = _pcg.choose_sample(args.n, centres, min(args.centres, args.n - args.centres), rng)
    load = [[round(v, 2) for v in os.getloadavg()]]
    runs, preds = {}, {}
    precisions = ["float64", "float32"] + (["auto"] if args.centres > _pcg.FLOAT32_MIN_CENTRES
                                           else [])
    with threadpool_limits(args.threads):
        for precision in precisions:
            rows, _, S = _pcg.streamed_rows(Xtr, Y, args.gamma, centres, sample, "gaussian",
                                            args.threads)
            clock = time.perf_counter()
            sol = _pcg.nystrom_pcg(rows, alpha, bias=args.bias, sample=S, precision=precision,
                                   max_iter=args.max_iter)
            total = time.perf_counter() - clock
            Xc = np.ascontiguousarray((Xte - rows.cond.shift) * rows.cond.scale)
            pred = lowlevel.kernel_block(Xc, rows.cond.centres, rows.cond.gamma) @ sol.coef[:, 0]
            preds[precision] = pred + sol.intercept[0] + ybar
            runs[precision] = {
                "factors": sol.factors, "iterations": int(sol.iterations),
                "converged": bool(sol.converged), "residual": float(np.max(sol.residual)),
                "seconds": sol.seconds, "total": total,
                "nmse": float(np.mean((preds[precision] - yte) ** 2) / np.var(yte))}
            C.log(precision, runs[precision]["factors"], sol.iterations, sol.converged,
                  round(total, 1))
        shares = pivot_shares(rows.cond, args.centres)
    load.append([round(v, 2) for v in os.getloadavg()])
    spread = float(np.std(ytr))
    for precision in precisions[1:]:
        runs[precision]["max_prediction_difference"] = float(
            np.max(np.abs(preds[precision] - preds["float64"])) / spread)
    rec = {"kind": "solver", "n": args.n, "m": args.centres, "d": args.d, "q": int(sample.size),
           "gamma": args.gamma, "mu": args.mu, "bias": bool(args.bias), "threads": args.threads,
           "min_pivot": shares[0], "pivots_below_10": shares[1], "eigenvalues_below": shares[2],
           "runs": runs, "load": load}
    if args.note:
        rec["note"] = args.note
    C.append_record(RAW, rec)
    C.log({k: v for k, v in rec.items() if k != "runs"})


def passes(args):
    """The solve with its kernel values in float32 in the passes (emulated: K_nm formed
    in float64, rounded to float32 and multiplied in float64; the right-hand side and the
    factors float64), against the float64 solve of the same model: accuracy only."""
    from kernelselect import lowlevel
    from kernelselect.solvers import _pcg
    from kernelselect.solvers._rows import NystromRows

    Xtr, ytr = solver_data(args.n, args.d)
    Xte, yte = solver_data(10_000, args.d, seed=1)
    Y = (ytr - ytr.mean())[:, None]
    rng = np.random.default_rng(0)
    centres = _pcg.choose_centres(args.n, args.centres, rng)
    sample = _pcg.choose_sample(args.n, centres, _pcg.sample_rows(args.n, args.centres, args.d),
                                rng)
    rows, _, S = _pcg.streamed_rows(Xtr, Y, args.gamma, centres, sample, "gaussian", None)
    cond = rows.cond
    # the kernel values a float32 pass would compute, held as float64 for the products
    K32 = lowlevel.kernel_block(np.ascontiguousarray((Xtr - cond.shift) * cond.scale),
                                cond.centres, cond.gamma).astype(np.float32).astype(np.float64)

    class Rounded(NystromRows):
        def normal(self, V):
            self.passes += 1
            return K32.T @ (K32 @ V)

    Kte = lowlevel.kernel_block(np.ascontiguousarray((Xte - cond.shift) * cond.scale),
                                cond.centres, cond.gamma)
    load = [[round(v, 2) for v in os.getloadavg()]]
    runs, preds = {}, {}
    for name, kind in (("float64", NystromRows), ("float32 values", Rounded)):
        sol = _pcg.nystrom_pcg(kind(Xtr, Y, cond), args.mu * args.n, bias=False, sample=S,
                               precision="float64", max_iter=args.max_iter)
        preds[name] = Kte @ sol.coef[:, 0] + ytr.mean()
        runs[name] = {"iterations": int(sol.iterations), "converged": bool(sol.converged),
                      "residual": float(np.max(sol.residual)),
                      "nmse": float(np.mean((preds[name] - yte) ** 2) / np.var(yte))}
        C.log(name, runs[name])
    load.append([round(v, 2) for v in os.getloadavg()])
    shares = pivot_shares(cond, args.centres)
    rec = {"kind": "passes", "n": args.n, "m": args.centres, "d": args.d,
           "gamma": args.gamma, "mu": args.mu, "min_pivot": shares[0], "runs": runs,
           "max_prediction_difference": float(
               np.max(np.abs(preds["float32 values"] - preds["float64"])) / np.std(ytr)),
           "load": load}
    C.append_record(RAW, rec)
    C.log({k: v for k, v in rec.items() if k != "runs"})


def _its(run):
    """A run's iterations, marked * when it did not meet tol."""
    return f"{run['iterations']}{'' if run['converged'] else '*'}"


def report(args):
    recs = C.read_jsonl(RAW)
    lines = C.report_head(
        "The Nyström machine's preconditioner in float32",
        "Generated by `studies/pcg_float32.py report`. The solver's w form (float64 "
        "factors, its default tolerance 1e-7 on the w residual) against FALKON's β form "
        "with float32 factors and float64 products (flexible PCG to the relative β "
        "residual `tol`), same data, centres, q = m sample rows, γ and α, one thread. "
        "Prediction difference: the largest over 10⁴ test rows, relative to std(y).",
        [("n", "r"), ("m", "r"), ("α/n", "r"), ("β tol", "r"),
         ("preconditioner s float64 / float32", "r"),
         ("iterations w64 / β32", "r"), ("iteration s w64 / β32", "r"),
         ("β residual reached (explicit)", "r"), ("β32 iterations to 1e-5 / 1e-6", "r"),
         ("prediction difference", "r"), ("test NMSE w64 / β32", "r"), ("load", "l")])
    for r in recs:
        if r.get("kind") in ("preconditioner", "solver", "passes"):
            continue
        w, b = r["w64"], r["beta32"]
        hist = np.array(b["history"])

        def first(t):
            hit = np.nonzero(hist <= t)[0]
            return str(int(hit[0]) + 1) if hit.size else "—"

        lines.append(
            f"| {r['n']} | {r['m']} | {r['mu']:.3g} | {r['tol']:.0e} | "
            f"{w['seconds']['preconditioner']:.1f} / {b['preconditioner']:.1f} | "
            f"{w['iterations']} / {b['iterations']} | "
            f"{w['seconds']['iterations']:.1f} / {b['iterations_seconds']:.1f} | "
            f"{b['residual_beta']:.2e} | {first(1e-5)} / {first(1e-6)} | "
            f"{r['max_prediction_difference']:.2e} | {w['nmse']:.4f} / {b['nmse']:.4f} | "
            f"{r['load'][0][0]} → {r['load'][1][0]} |")
    solved = [r for r in recs if r.get("kind") == "solver"]
    if solved:
        lines += ["", "The solver itself (`solver`): float64 factors, forced float32 factors and "
                  "`precision=\"auto\"` on the same model; q = m sample rows, tol 1e-7. "
                  "Pivots: of the float32 factor of K_mm + δ₃₂I, over δ₃₂ = m·2⁻²³ (the "
                  "smallest; the share below 10); eigenvalues: the share of K_mm's below "
                  "δ₃₂. Iterations marked * did not meet tol. Difference: the largest "
                  "over 10⁴ test rows from float64's predictions, relative to std(y).", "",
                  "| n | m | d | γ | α/n | bias | smallest pivot / δ₃₂ | pivots < 10δ₃₂ | "
                  "eigenvalues < δ₃₂ | auto kept | iterations f64 / f32 | preconditioner s "
                  "f64 / f32 | whole solve s f64 / f32 / auto | difference f32 | test NMSE "
                  "f64 / f32 | threads | load |",
                  "|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"
                  "---:|---|"]
        for r in solved:
            a, b = r["runs"]["float64"], r["runs"]["float32"]
            auto = r["runs"].get("auto")


            eig = "—" if r["eigenvalues_below"] is None else f"{r['eigenvalues_below']:.2f}"
            kept = auto["factors"] if auto else "— (m ≤ 8192: float64)"
            auto_s = f"{auto['total']:.1f}" if auto else "—"
            lines.append(
                f"| {r['n']} | {r['m']} | {r['d']} | {r['gamma']:g} | {r['mu']:.0e} | "
                f"{'yes' if r['bias'] else 'no'} | {r['min_pivot']:.2f} | "
                f"{r['pivots_below_10']:.3f} | {eig} | {kept} | {_its(a)} / {_its(b)} | "
                f"{a['seconds']['preconditioner']:.1f} / {b['seconds']['preconditioner']:.1f}"
                f" | {a['total']:.1f} / {b['total']:.1f} / {auto_s} | "
                f"{b['max_prediction_difference']:.1e} | {a['nmse']:.4f} / {b['nmse']:.4f} | "
                f"{r['threads']} | {r['load'][0][0]} → {r['load'][1][0]} |")
    emulated = [r for r in recs if r.get("kind") == "passes"]
    if emulated:
        lines += ["", "Float32 kernel values in the passes (`passes`): the solve (no bias, "
                  "tol 1e-7, the rule's sample rows, float64 factors) with the kernel "
                  "values of its normal passes rounded to float32 and multiplied in "
                  "float64, against the float64 solve; an emulation of a float32 pass's "
                  "accuracy, not its speed (K_nm is held). Pivots as above. Iterations "
                  "marked * did not meet tol.", "",
                  "| n | m | γ | α/n | smallest pivot / δ₃₂ | iterations f64 / f32 values "
                  "| difference | test NMSE f64 / f32 values | load |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in emulated:
            a, b = r["runs"]["float64"], r["runs"]["float32 values"]


            lines.append(
                f"| {r['n']} | {r['m']} | {r['gamma']:g} | {r['mu']:.0e} | "
                f"{r['min_pivot']:.2f} | {_its(a)} / {_its(b)} | "
                f"{r['max_prediction_difference']:.1e} | {a['nmse']:.4f} / {b['nmse']:.4f} | "
                f"{r['load'][0][0]} → {r['load'][1][0]} |")
        lines += ["", "- Where K_mm keeps its float32 pivots well above the rounding (the "
                  "default's γ at these sizes), float32 kernel values leave the solve and "
                  "the model as they are; with a wide kernel and a tiny ridge they move "
                  "the predictions by 0.22 and 0.37 of std(y), and the solve may not "
                  "converge: a float32 pass needs the float32 factors' guard (the smallest "
                  "pivot against the rounding), which keeps float64 at the default's 2·10⁵ "
                  "rows (`fit_scale.md`: its factors stayed float64), so it would not "
                  "shorten that fit."]
    pre = [r for r in recs if r.get("kind") == "preconditioner"]
    if pre:
        lines += ["", "The preconditioners alone (`--preconditioner-only`):", "",
                  "| n | m | q | float64 s | float32 s | ratio | m × m array float64 / "
                  "float32 GB | load |", "|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in pre:
            gb = r["m"] ** 2 * 8 / 1e9
            lines.append(f"| {r['n']} | {r['m']} | {r['q']} | {r['seconds64']:.1f} | "
                         f"{r['seconds32']:.1f} | {r['seconds32'] / r['seconds64']:.2f} | "
                         f"{gb:.2f} / {gb / 2:.2f} | {r['load'][0][0]} → {r['load'][1][0]} |")
    lines += C.note_lines(recs, lambda r: f"n = {r['n']}, m = {r['m']}")
    C.write_report(REPORT, lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("--n", type=int, default=50_000)
    r.add_argument("--centres", type=int, default=4000)
    r.add_argument("--gamma", type=float, default=0.2131)
    r.add_argument("--mu", type=float, default=1e-6)
    r.add_argument("--tol", type=float, default=1e-7)
    r.add_argument("--max-iter", type=int, default=200)
    r.add_argument("--preconditioner-only", action="store_true",
                   help="time the two preconditioners alone (no solve)")
    v = sub.add_parser("solver")
    v.add_argument("--n", type=int, default=50_000)
    v.add_argument("--centres", type=int, default=10_000)
    v.add_argument("--d", type=int, default=10)
    v.add_argument("--gamma", type=float, default=0.2131)
    v.add_argument("--mu", type=float, default=1e-6)
    v.add_argument("--bias", action="store_true")
    v.add_argument("--max-iter", type=int, default=300)
    v.add_argument("--threads", type=int, default=1)
    e = sub.add_parser("passes", help="float32 kernel values in the passes, emulated")
    e.add_argument("--n", type=int, default=20_000)
    e.add_argument("--centres", type=int, default=2000)
    e.add_argument("--d", type=int, default=10)
    e.add_argument("--gamma", type=float, default=0.2131)
    e.add_argument("--mu", type=float, default=1e-6)
    e.add_argument("--max-iter", type=int, default=300)
    v.add_argument("--note", default=None)
    sub.add_parser("report")
    args = parser.parse_args(argv)
    {"run": run, "solver": solver, "passes": passes, "report": report}[args.what](args)


if __name__ == "__main__":
    main()
