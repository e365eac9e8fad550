"""Precision: would float32 feature blocks in the streamed passes keep the chosen point?

The streamed Nyström passes spend their time on the feature blocks F_b = exp(−γ S_b)
and their products: the first pass P_b = F_b A (A the rotation of an ill-conditioned
landmark Gram matrix), G += P_bᵀP_b and H += P_bᵀY_b; the second Q_b = F_b M and the
row sums of Q_b² against the α path. The candidate: form F_b (from the float64
distances S_b), P_b and Q_b in float32 and add each block's products into float64
accumulators (G, H and the second pass's row reductions stay float64; so do the
eigendecompositions, the transforms and every criterion). Single precision halves the
bytes the products move and doubles the SIMD width.

This script swaps the two pass functions of ``kernelselect.operators.streaming_lowrank``
for float32 versions inside the process (``--precision float32``; the package itself is
unchanged) and records, on the training halves of the defaults study (its sets, splits,
caps and seeds, above 400 rows), each selection's (γ, α), the criterion value at it and
the time, and on cadata rows at n = 2·10⁴ the time of both passes; ``--report``
compares the two precisions: choices kept, relative change of the criterion value,
time.

Usage
-----
    python studies/speed_float32.py --precision float64 --cap 1000
    python studies/speed_float32.py --precision float32 --cap 1000
    python studies/speed_float32.py --precision float64 --cap 10000 --splits 0,1,2 \
        --datasets a9a,cadata,htru2,pol,protein,w8a       # the sets above 15 000 rows
    python studies/speed_float32.py --passes 20000        # both precisions, interleaved
    python studies/speed_float32.py --passes 1000000 --repeats 1
    python studies/speed_float32.py --report
"""

import argparse
import os
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import _common as C  # noqa: E402

RAW = C.RESULTS / "speed_float32_raw.jsonl"
REPORT = C.RESULTS / "speed_float32.md"


# --------------------------------------------------------------------------- float32 passes


#: entries of exp(−γS) below e^TINY_EXPONENT (4e−18) are set to 0. Products of two
#: float32 values below about 1e−19 fall under its smallest normal number (1.2e−38),
#: and subnormal results are handled in microcode at many times the cost: the first
#: versions of this study (the squaring chain; then a floor at 1e−30 instead of 0)
#: took 3× the float64 time at n = 10⁶, where the wide end of the γ grid makes most
#: kernel values that small. Next to a diagonal of 1 such entries change no float32 sum.
TINY_EXPONENT = -40.0


def _exp32(gammas, S32, i, out, chain):
    """exp(−γ_i S) in float32 into ``out``, with entries below e^TINY_EXPONENT set to 0
    (a fresh exponential per γ: the squaring chain would make subnormals again)."""
    np.multiply(S32, np.float32(-gammas[i]), out=out)
    tiny = out < TINY_EXPONENT
    np.exp(out, out=out)
    out[tiny] = 0.0
    return out


def _blocks32(fmap, Xb, yb, values):
    from kernelselect.operators._feature_maps import block_rows
    from kernelselect.operators._row_passes import _sub_blocks, probe_basis

    for a, b in _sub_blocks(Xb.shape[0], block_rows(fmap.width)):
        S32 = fmap.shared(Xb[a:b]).astype(np.float32)
        yield b - a, S32, np.empty(S32.shape, dtype=np.float32), probe_basis(yb[a:b], values)


def first_pass32(fmap, Xb, yb, values, rotations):
    """The first pass with float32 blocks, float64 sums (see the module docstring)."""
    from scipy.linalg.blas import ssyrk

    from kernelselect.operators._row_passes import _symmetric

    ng = fmap.gammas.size
    G, H = [None] * ng, [None] * ng
    rot32 = [None if r is None else r.astype(np.float32) for r in rotations]
    for _, S32, F, Yb in _blocks32(fmap, Xb, yb, values):
        chain = [None, 0]
        Y32 = Yb.astype(np.float32)
        for i in range(ng):
            _exp32(fmap.gammas, S32, i, F, chain)
            P = F if rot32[i] is None else F @ rot32[i]
            g = ssyrk(1.0, P.T).astype(np.float64)          # upper triangle of PᵀP
            h = (P.T @ Y32).astype(np.float64)
            G[i] = g if G[i] is None else G[i] + g
            H[i] = h if H[i] is None else H[i] + h
    return [None if g is None else _symmetric(g) for g in G] + H


def second_pass32(fmap, Xb, yb, values, plan):
    """The second pass with float32 blocks Q_b = F_b M; the α sums in float64 (the
    package's own ``row_reductions``)."""
    from kernelselect.operators._row_passes import row_reductions

    out = [None] * sum(len(reqs) for _, _, reqs in plan)
    for _, S32, F, Yb in _blocks32(fmap, Xb, yb, values):
        slot, chain = 0, [None, 0]
        for i, Mu, reqs in plan:
            _exp32(fmap.gammas, S32, i, F, chain)
            Qb32 = F @ Mu.astype(np.float32)
            Q2 = (Qb32 * Qb32).astype(np.float64)
            for part in row_reductions(Qb32.astype(np.float64), Q2, Yb, reqs):
                out[slot] = part if out[slot] is None else out[slot] + part
                slot += 1
    return out


def use_precision(precision):
    from kernelselect.operators import _row_passes as RP
    from kernelselect.operators import streaming_lowrank as SL

    if precision == "float32":
        SL.first_pass, SL.second_pass = first_pass32, second_pass32
    else:
        SL.first_pass, SL.second_pass = RP.first_pass, RP.second_pass


# --------------------------------------------------------------------------- runs


def choices(precision, cap, splits, datasets=None):
    use_precision(precision)
    halves = C.defaults_study_halves(splits, datasets)
    for r, Xtr, ytr, Xte, yte, seed in C.capped_halves(halves, cap, 10000):
        seconds, res = C.timed_defaults(Xtr, ytr, seed)
        levels = [lv for lv in res.details.get("auto", {}).get("levels", []) if "value" in lv]
        C.append_record(RAW, dict(
            kind="choice", precision=precision, cap=cap, dataset=r["dataset"],
            task=r["task"], split=r["split"], n=int(Xtr.shape[0]), gamma=res.best_gamma,
            alpha=res.best_alpha, value=levels[-1]["value"] if levels else None,
            approximation=res.details.get("approximation"), seconds=seconds,
            score=C.test_score(Xtr, ytr, Xte, yte, r["task"], res.best_gamma, res.best_alpha),
            load=os.getloadavg()[0]))
        C.log(precision, r["dataset"], r["split"], f"{seconds:.2f} s")


def passes(n, repeats):
    """Both precisions interleaved on n rows: one selection each, the seconds of its
    first and second passes. Up to cadata's size, cadata rows and the defaults;
    beyond, the level of ``speed_million.py`` (synthetic, d = 10, 200 landmarks, α = 1,
    eloo and gcv)."""
    import kernelselect
    from kernelselect.operators import _row_passes as RP

    if n <= 20640:
        d = C.load_data("cadata")
        idx = np.random.default_rng(0).choice(d.X.shape[0], size=n, replace=False)
        X, = C.standardise(d.X[idx])
        y, extra = d.y[idx], {}
    else:
        import streaming_scale as S
        X, y = S.synthetic(n)
        extra = dict(criterion=S.CRITERIA, alphas=[1.0],
                     approximation=kernelselect.Nystroem(n_landmarks=200))
    spent = {}
    original = RP.ArrayRows.reduce

    def timed(self, fn, fmap, *args):
        t0 = time.perf_counter()
        out = original(self, fn, fmap, *args)
        name = fn.__name__.removesuffix("32")
        spent[name] = spent.get(name, 0.0) + time.perf_counter() - t0
        return out

    RP.ArrayRows.reduce = timed
    for rep in range(repeats):
        for precision in ("float64", "float32") if rep % 2 == 0 else ("float32", "float64"):
            use_precision(precision)
            spent.clear()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                res = kernelselect.select_kernel(X, y, random_state=0, workers=1, **extra)
                seconds = time.perf_counter() - t0
            C.append_record(RAW, dict(kind="passes", precision=precision, n=n, repeat=rep,
                                      seconds=seconds, first=spent.get("first_pass"),
                                      second=spent.get("second_pass"),
                                      gamma=res.best_gamma, alpha=res.best_alpha,
                                      load=os.getloadavg()[0]))
            C.log(precision, n, f"{seconds:.2f} s", spent)
    RP.ArrayRows.reduce = original


# --------------------------------------------------------------------------- report


def _key(r):
    if r["kind"] == "choice":
        return r["kind"], r["precision"], r["cap"], r["dataset"], r["split"]
    return r["kind"], r["precision"], r["n"], r["repeat"]


def report():
    latest = {}                                 # a rerun replaces its record
    for r in C.read_jsonl(RAW):
        latest[_key(r)] = r
    recs = list(latest.values())
    lines = [
        "# Precision: float32 feature blocks in the streamed passes",
        "",
        "`studies/speed_float32.py` (raw records: `speed_float32_raw.jsonl.gz`; the "
        "candidate and protocol in its docstring). One thread; the float32 passes are "
        "swapped in for the study only.",
        "",
    ]
    choice = [r for r in recs if r["kind"] == "choice"]
    for cap in sorted({r["cap"] for r in choice}):
        by = {}
        for r in choice:
            if r["cap"] == cap:
                by.setdefault((r["dataset"], r["split"]), {})[r["precision"]] = r
        pairs = [v for v in by.values() if len(v) == 2]
        if not pairs:                               # one precision recorded so far
            continue
        same = [v for v in pairs if v["float32"]["gamma"] == v["float64"]["gamma"]
                and v["float32"]["alpha"] == v["float64"]["alpha"]]
        rel = [abs(v["float32"]["value"] - v["float64"]["value"])
               / max(abs(v["float64"]["value"]), 1e-300) for v in same
               if v["float64"]["value"] is not None]
        moved = [v for v in pairs if v not in same]
        t64 = sum(v["float64"]["seconds"] for v in pairs)
        t32 = sum(v["float32"]["seconds"] for v in pairs)
        lines += [
            f"## Training halves capped at {cap} rows ({len(pairs)} sets and splits)",
            "",
            f"- choice kept: {len(same)} of {len(pairs)}; the criterion value at a kept "
            f"choice moved by at most {max(rel) if rel else 0:.1e} (relative)",
            f"- time: {t32:.1f} s in float32 against {t64:.1f} s in float64 "
            f"({t32 / t64:.2f}×; the two runs minutes apart, not interleaved: the timed "
            f"comparison is the passes table below)",
        ]
        for task in sorted({v["float64"]["task"] for v in pairs}):
            unit = 1.0 if task == "regression" else 100.0
            diffs = [unit * (v["float32"]["score"] - v["float64"]["score"])
                     for v in pairs if v["float64"]["task"] == task]
            word = "NMSE" if task == "regression" else "pp"
            lines.append(f"- {task}: mean test-score change {np.mean(diffs):+.4f} {word} "
                         f"over {len(diffs)} (float32 − float64)")
        if moved:
            lines += ["", "| dataset | split | (γ, α) float64 → float32 | score float64 → "
                      "float32 |", "|---|---:|---|---|"]
            for v in moved:
                a, b = v["float64"], v["float32"]
                lines.append(f"| {a['dataset']} | {a['split']} | ({a['gamma']:.4g}, "
                             f"{a['alpha']:.3g}) → ({b['gamma']:.4g}, {b['alpha']:.3g}) | "
                             f"{a['score']:.4f} → {b['score']:.4f} |")
        lines.append("")
    timing = [r for r in recs if r["kind"] == "passes"]
    if timing:
        lines += ["## The passes, one thread (median of the repeats; cadata rows up to its "
                  "20 640, beyond that the synthetic level of `speed_million.py`)", "",
                  "| n | precision | repeats | selection (s) | first passes (s) | second "
                  "passes (s) | same (γ, α) | load |", "|---:|---|---:|---:|---:|---:|---|---|"]
        for n in sorted({r["n"] for r in timing}):
            group = [r for r in timing if r["n"] == n]
            same = len({(r["gamma"], r["alpha"]) for r in group}) == 1
            for precision in ("float64", "float32"):
                g = [r for r in group if r["precision"] == precision]
                loads = [r["load"] for r in g]
                lines.append(
                    f"| {n} | {precision} | {len(g)} | "
                    f"{np.median([r['seconds'] for r in g]):.2f} | "
                    f"{np.median([r['first'] for r in g]):.2f} | "
                    f"{np.median([r['second'] for r in g]):.2f} | {'yes' if same else 'no'} | "
                    f"{min(loads):.1f}–{max(loads):.1f} |")
        lines.append("")
    REPORT.write_text("\n".join(lines))
    C.write_archive(RAW, recs)
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--precision", choices=("float64", "float32"))
    p.add_argument("--cap", type=int, default=1000)
    p.add_argument("--splits", default="0,1,2,3,4")
    p.add_argument("--datasets", default=None,
                   help="comma-separated names (default: every set of the defaults study)")
    p.add_argument("--passes", type=int, default=None, help="time the passes at this n")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--report", action="store_true")
    a = p.parse_args()
    if a.passes:
        passes(a.passes, a.repeats)
    elif a.precision:
        choices(a.precision, a.cap, {int(s) for s in a.splits.split(",")},
                None if a.datasets is None else set(a.datasets.split(",")))
    report()


if __name__ == "__main__":
    main()
