"""Rebuild docs/reproductions.md and its figures from the raw study records.

    python studies/report.py

reads studies/results/paper000_raw.jsonl[.gz] and paper003_raw.jsonl[.gz] (whatever
exists: the tables state how many repeats each cell has) and writes
docs/reproductions.md, docs/repro_paper000_curves.png, docs/repro_paper000_time.png,
docs/repro_paper003_curves.png and docs/repro_paper003_time.png. ``--archive`` first
folds the plain jsonl files into their committed .gz archives.
"""

import argparse
import json
from pathlib import Path

import numpy as np

import _common as C
import paper_numbers as P
from notes import CAP_MEASURED, CAP_UNMEASURED, EXPLANATIONS, INTRO, NOTES, SECTION_TEXT

DOCS = C.REPO / "docs"
RAW000 = C.RESULTS / "paper000_raw.jsonl"
RAW003 = C.RESULTS / "paper003_raw.jsonl"

LABEL000 = {
    "random_c1": "C1(v) (paper eq. 4)", "random_kta": "C2(v) = KTA(v) (eq. 5)",
    "random_eloo": "C3(v̂) (built on eq. 6)", "random_mmd": "MMD(v̄)",
    "random_kta_row": "KTA(Z) (row estimator)", "random_kta_row_2g": "KTA row estimator at γ, 2γ",
    "random_mmd_row": "MMD row estimator", "random_c1_rff": "C1 on Z̃Z̃ᵀ",
    "kta": "KTA (exact, streaming)", "mmd": "MMD-B (exact, streaming)",
    "c1": "C1(K) (exact, dense)", "eloo": "ELOO (exact, dense)",
    "nystrom_eloo": "ELOO on Nyström (c = 200)", "nystrom_gcv": "GCV on Nyström (c = 200)",
    "default": "earlier select_kernel defaults (ree on Nyström; this γ grid, α = 1)",
    "defaults": "select_kernel(X, y): the current defaults", "cv": "5-fold CV (LSSVM)",
}
ORDER000 = list(LABEL000)
MIN_Z = 3          # repeats below which no z statistic is given
#: why a Table 1 cell has no run
_DENSE_NA = ("NA: needs (K + αI)⁻¹, which the streaming operator cannot give, and the dense "
             "route does not fit the time at this size; measured costs below the tables")
NOT_RUN = {("adult", "c1"): _DENSE_NA, ("adult", "eloo"): _DENSE_NA,
           ("w8a", "c1"): _DENSE_NA, ("w8a", "eloo"): _DENSE_NA,
           ("w8a", "kta"): "not run: about two streamed passes over K per γ (one pass's measured "
                           "cost is in the table below) × 15 γ did not fit beside the other runs",
           ("w8a", "mmd"): "not run, as KTA"}
LABEL003 = {"sm": "SM (r = 3)", "cv": "5-fold CV", "eloo": "ELOO", "ckta": "CKTA", "fsm": "FSM",
            "er": "ER"}
GAMMAS000 = 2.0 ** np.arange(-8, 7)
GAMMAS003 = 1.0 / (2.0 * 2.0 ** np.arange(-15, 16))
DS000 = ["mushrooms", "coil2000", "penbased", "adult", "w8a"]
DS003 = ["heart", "ionosphere", "liver-disorders", "wdbc", "breast-w", "australian",
         "german.numer", "a1a"]


def fmt(v, f="{:.2f}"):
    if v is None or isinstance(v, str) or (isinstance(v, float) and not np.isfinite(v)):
        return v if isinstance(v, str) and v else "—"
    return f.format(v)


def note_for(table, ds, method):
    return NOTES.get((table, ds, method)) or NOTES.get((table, ds, "*")) \
        or NOTES.get((table, "*", method))


# --------------------------------------------------------------------------- paper 000


def collect000(records):
    """dataset → method → {repeat: (accuracy %, seconds, note, n_fit)}"""
    out = {}
    for r in records:
        if r.get("quick"):
            continue
        for m, v in r["methods"].items():
            if v["accuracy"] is None:
                continue
            cell = out.setdefault(r["dataset"], {}).setdefault(m, {})
            cell[r["repeat"]] = (100.0 * v["accuracy"], v["seconds"], v.get("note"), r["n_fit"],
                                 r["n_train"], r.get("load"), v["index"], v)
    return out


def table1(data, lines, flagged):
    for ds in DS000:
        cells = data.get(ds, {})
        if not cells:
            lines.append(f"### {ds}\n\nNo records yet.\n")
            continue
        any_cell = next(iter(cells.values()))
        n_train = next(iter(any_cell.values()))[4]
        n_fit = next(iter(any_cell.values()))[3]
        loads = [v[5] for c in cells.values() for v in c.values() if v[5] is not None]
        head = f"### {ds} (n_train = {n_train}"
        head += f"; final LSSVM trained on a {n_fit}-row subsample)" if n_fit < n_train else ")"
        lines.append(head + "\n")
        means = {m: np.mean([v[0] for v in c.values()]) for m, c in cells.items()}
        table_methods = [m for m in ORDER000 if m in cells]
        best = max((m for m in table_methods if len(cells[m]) >= MIN_Z), key=lambda m: means[m],
                   default=None)
        lines.append("| criterion | ours: accuracy % (sd) | repeats | z vs best | log₂ γ chosen "
                     "(median) | ours: s / selection | paper: accuracy % | paper: s | note |")
        lines.append("|---|---|---|---|---|---|---|---|---|")
        for m in table_methods:
            c = cells[m]
            acc = np.array([v[0] for v in c.values()])
            sec = np.median([v[1] for v in c.values()])
            z = None
            if best is not None and m != best:
                common = sorted(set(c) & set(cells[best]))
                if len(common) >= MIN_Z:
                    z = C.z_statistic([cells[best][k][0] for k in common], [c[k][0] for k in common])
            pap = P.P000_T1.get(ds, {}).get(m, "missing")
            pacc, ptime = ("NA", "NA") if pap is None else (("", "") if pap == "missing" else pap)
            note = c[next(iter(c))][2] or ""
            sd = acc.std(ddof=1) if acc.size > 1 else np.nan
            zs = "best" if m == best else fmt(z)
            if z is not None and np.isfinite(z) and z > 1.64:
                zs += " *"
            if m == "defaults":
                lg = round(float(np.median([np.log2(v[7]["gamma"]) for v in c.values()])), 1)
                note = defaults_note(c, n_train)
            else:
                lg = np.median([np.log2(GAMMAS000[v[6]]) for v in c.values()])
            lines.append(f"| {LABEL000[m]} | {acc.mean():.2f} ({fmt(sd)}) | {acc.size} | {zs} | "
                         f"{lg:g} | {sec:.2f} | {fmt(pacc) if pacc != 'NA' else 'NA'} | "
                         f"{fmt(ptime, '{:.0f}') if ptime != 'NA' else 'NA'} | {note} |")
            if isinstance(pacc, float):
                tol = max(sd if np.isfinite(sd) else 0.0, 0.5)
                if abs(acc.mean() - pacc) > tol:
                    flagged.append(("000/T1", ds, m, acc.mean(), pacc, tol))
        for m in ORDER000:
            if m in cells:
                continue
            why = NOT_RUN.get((ds, m)) or NOT_RUN.get(("*", m)) or "not run in the time available"
            pap = P.P000_T1.get(ds, {}).get(m, "missing")
            pacc, ptime = ("NA", "NA") if pap is None else (("—", "—") if pap == "missing" else pap)
            lines.append(f"| {LABEL000[m]} | NA | 0 | | | | {fmt(pacc)} | "
                         f"{fmt(ptime, '{:.0f}')} | {why} |")
        lines.append("")
        if loads:
            lines.append(f"Load average during these runs: {min(loads):.1f}–{max(loads):.1f} "
                         "(2 cores).\n")


def result_json(name):
    """A study's small JSON result in studies/results, or None before it was made."""
    path = C.RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def pass_seconds(r):
    """One streamed pass over K: the slower of the two measured (kernel_sums, kernel_matvec)."""
    return max(r["pass_sums_s"], r["pass_matvec_s"])


def c1_cost(lines):
    """The measured cost of exact C1(K)/ELOO on the large sets (studies/c1_cost.py)."""
    res = result_json("c1_cost.json")
    if res is None:
        return
    lines.append("**Exact C1(K) and ELOO on adult and w8a** (`python studies/c1_cost.py "
                 "--dense` on adult, without `--dense` on w8a; first repeat's training half, "
                 "γ = 2^{}, α = 1). Both are functions of (K + αI)⁻¹: "
                 "C1(K) = (α²/n) yᵀK_α⁻²y + (σ²/n) tr(K K_α⁻¹), and ELOO needs diag K_α⁻¹ "
                 "too. The exact streaming operator, which never holds K, gives only power "
                 "moments (Pᵀ K^r P for probe columns P, tr K^r for r ≤ 2), and "
                 "`select_kernel` refuses `c1` on it (\"it needs 'spectral', which "
                 "Exact(method='streaming') does not provide\"). Measured:\n"
                 .format(next(iter(res.values()))["log2_gamma"]))
    lines.append("| data set | n_train | d | one streamed pass over K (s; the slower of "
                 "kernel_sums and kernel_matvec) | CG iterations for one solve K_α x = y, on "
                 "2000 / 4000-row subsamples | dense c1 + eloo, one γ (s) | load |")
    lines.append("|---|---|---|---|---|---|---|")
    for ds in DS000:
        r = res.get(ds)
        if r is None:
            continue
        it = r["cg_iterations"]
        dense = r.get("dense_c1_eloo_one_gamma_s")
        dense_s = (f"{dense:.0f} (load {r['dense_load']:.1f}); 8n² = "
                   f"{8 * r['n_train'] ** 2 / 1e9:.1f} GB per n × n array" if dense else
                   f"not run (8n² = {8 * r['n_train'] ** 2 / 1e9:.1f} GB per n × n array)")
        lines.append(f"| {ds} | {r['n_train']} | {r['d']} | "
                     f"{pass_seconds(r):.1f} | "
                     f"{it.get('2000')} / {it.get('4000')} | {dense_s} | "
                     f"{r['load_during_passes']:.1f} |")
    lines.append("")
    text = ["A streamed route pays one pass over K per conjugate-gradient iteration, and the "
            "iteration count grows with n (the subsample counts above are lower bounds), so "
            "the first term of C1(K), yᵀK_α⁻²y, costs at least"]
    parts = []
    for ds, r in ((ds, res[ds]) for ds in DS000 if ds in res):
        it, pas = r["cg_iterations"]["4000"], pass_seconds(r)
        parts.append(f"{it} × {pas:.0f} s = {it * pas / 60:.0f} min per γ on {ds} "
                     f"({15 * it * pas / 3600:.0f} h for the grid)")
    text.append(" and ".join(parts) + ";")
    text.append("the exact trace term tr(K K_α⁻¹) needs n such solves (" + ", ".join(
        f"{r['n_train'] * r['cg_iterations']['4000'] * pass_seconds(r) / 86400:.0f} days per γ "
        f"on {ds}" for ds, r in ((ds, res[ds]) for ds in DS000 if ds in res))
        + "), or n probe columns per pass, which is the dense matrix again. Exact C1(K) by "
        "streaming is out of reach.")
    dense = {ds: r for ds, r in res.items() if r.get("dense_c1_eloo_one_gamma_s")}
    for ds, r in dense.items():
        t = r["dense_c1_eloo_one_gamma_s"]
        gib = 3 * 8 * r["n_train"] ** 2 / 2 ** 30
        text.append(f"The dense route (K, a Cholesky factor of K + αI and its inverse: three "
                    f"n × n arrays, {gib:.1f} GiB, which the library's default 4 GiB memory "
                    f"limit refuses; raised to {r.get('max_bytes_env')} for this measurement) "
                    f"took {t / 60:.0f} min for c1 and eloo at one γ on {ds} (load "
                    f"{r['dense_load']:.1f}), i.e. {15 * t / 3600:.1f} h for the 15 γ of one "
                    "repeat;")
        for other, rr in res.items():
            if other != ds:
                ratio = (rr["n_train"] / r["n_train"]) ** 3
                text.append(f"{other} has {ratio:.1f}× the flops (about "
                            f"{15 * ratio * t / 3600:.0f} h per repeat) and "
                            f"{3 * 8 * rr['n_train'] ** 2 / 1e9:.0f} GB of arrays.")
    text.append("Both cells therefore stay NA; the stand-ins that are feasible at these "
                "sizes (C1 on Z̃Z̃ᵀ, ELOO on Nyström) are in the table.")
    lines.append(" ".join(text) + "\n")


def table2_rff(lines):
    """Accuracy of the random-feature ridge model itself at the selected γ
    (studies/t2_rff_model.py), beside the paper's Table 2."""
    res = result_json("t2_rff_model.json")
    if res is None:
        return
    lines.append("The random-feature model itself: test accuracy % of ridge regression (α = 1, "
                 "no bias) on the same D random Fourier features, fitted on the whole training "
                 "half at the γ each criterion selected (`python studies/t2_rff_model.py`), "
                 "mean over the repeats above; the paper's Table 2 value in brackets.\n")
    lines.append("| data set | D | KTA(v) | KTA(Z) | 5-CV-RFF | repeats |")
    lines.append("|---|---|---|---|---|---|")
    for ds in DS000:
        if ds not in res:
            continue
        for dd in (100, 500):
            keys = [f"kta_v_D{dd}", f"kta_z_D{dd}", f"cv_rff_D{dd}"]
            if not all(k in res[ds] for k in keys):
                continue
            pap = P.P000_T2[dd].get(ds)
            cells = []
            for k, short in zip(keys, ("kta_v", "kta_z", "cv_rff")):
                cell = f"{np.mean(res[ds][k]):.2f}"
                if pap:
                    cell += f" ({pap[short][0]:.2f})"
                cells.append(cell)
            lines.append(f"| {ds} | {dd} | " + " | ".join(cells)
                         + f" | {min(len(res[ds][k]) for k in keys)} |")
    lines.append("")


def defaults_note(cells, n_train):
    """What the default selection did over the repeats: approximation, α, grid edges."""
    runs = [v[7] for v in cells.values()]
    approx = sorted({r["approximation"] for r in runs})
    rel = np.median([np.log10(r["alpha"] / n_train) for r in runs])
    edges = sum(bool(r["edge_warnings"]) for r in runs)
    crit = sorted({r["note"].split()[0] for r in runs})
    return (f"{', '.join(crit)} on {', '.join(approx)}; median log₁₀(α/n) {rel:.1f}; "
            f"grid-edge warning on {edges} of {len(runs)}; γ is on standardised features "
            "(not this grid's scale); LSSVM refit at the selected (γ, α)")


def table2(data, lines, flagged):
    lines.append("| data set | D | KTA(v) % | s | KTA(Z) % | s | 5-CV-RFF % | s | repeats "
                 "| paper KTA(v) | paper KTA(Z) | paper 5-CV-RFF |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for ds in DS000:
        cells = data.get(ds, {})
        for dd in (100, 500):
            keys = [f"kta_v_D{dd}", f"kta_z_D{dd}", f"cv_rff_D{dd}"]
            if not all(k in cells for k in keys):
                continue
            row = [ds, str(dd)]
            for k in keys:
                acc = [v[0] for v in cells[k].values()]
                row += [f"{np.mean(acc):.2f} ({fmt(np.std(acc, ddof=1) if len(acc) > 1 else None)})",
                        f"{np.median([v[1] for v in cells[k].values()]):.2f}"]
            row.append(str(min(len(cells[k]) for k in keys)))
            pap = P.P000_T2[dd].get(ds)
            for k, short in zip(keys, ("kta_v", "kta_z", "cv_rff")):
                if pap:
                    row.append(f"{pap[short][0]:.2f} ({pap[short][1]:.1f} s)")
                    ours = np.mean([v[0] for v in cells[k].values()])
                    sd = np.std([v[0] for v in cells[k].values()], ddof=1) if len(cells[k]) > 1 else 0
                    tol = max(sd, 0.5)
                    if abs(ours - pap[short][0]) > tol:
                        flagged.append(("000/T2", ds, f"{short}_D{dd}", ours, pap[short][0], tol))
                else:
                    row.append("—")
            lines.append("| " + " | ".join(row) + " |")
    lines.append("")


# --------------------------------------------------------------------------- paper 003


def collect003(records):
    out = {}
    for r in records:
        out.setdefault(r["dataset"], []).append(r)
    for v in out.values():
        v.sort(key=lambda r: r["repeat"])
    return out


def errors003(recs, m):
    return np.array([r["methods"][m]["error"] for r in recs], dtype=float)


def table003(data, lines, flagged):
    cols = P.P003_COLS
    lines.append("Test error % (mean ± sd over the partitions run); **bold** = lowest mean of "
                 "ours, ≈ = not significantly worse than it (paired t ≤ 1.676); paper's value "
                 "in brackets.\n")
    lines.append("| data set | n | partitions | " + " | ".join(LABEL003[c] for c in cols)
                 + " | oracle |")
    lines.append("|---|---|---|" + "---|" * (len(cols) + 1))
    wins = {c: [0, 0] for c in cols if c != "sm"}
    paper_rows = {}
    for ds, recs in _sets003(data):
        errs = {c: errors003(recs, c) for c in cols}
        means = {c: np.nanmean(e) for c, e in errs.items()}
        best = min(cols, key=lambda c: means[c])
        cells = []
        for c in cols:
            e = errs[c]
            s = f"{means[c]:.2f} ± {np.nanstd(e, ddof=1) if e.size > 1 else 0:.2f}"
            if c == best:
                s = f"**{s}**"
            else:
                t = C.paired_t(errs[best], e)
                if t is not None and t <= 1.676:
                    s = f"≈ {s}"
            pap = P.P003_T2[ds][cols.index(c)]
            s += f" ({pap[0]:.2f} ± {pap[1]:.2f})"
            cells.append(s)
            if abs(means[c] - pap[0]) > pap[1]:
                flagged.append(("003/T2", ds, c, means[c], pap[0], pap[1]))
        oracle = np.mean([100.0 * (1 - max(r["test_accuracy"])) for r in recs])
        lines.append(f"| {ds} | {recs[0]['n_train']} | {len(recs)} | " + " | ".join(cells)
                     + f" | {oracle:.2f} |")
        for c in wins:
            t_better = C.paired_t(errs["sm"], errs[c])
            t_worse = C.paired_t(errs[c], errs["sm"])
            wins[c][0] += int(t_better is not None and t_better > 1.676)
            wins[c][1] += int(t_worse is not None and t_worse > 1.676)
        paper_rows[ds] = recs
    lines.append("")
    for alias, ours in P.P003_ALIASES.items():
        if ours in data:
            pap = P.P003_T2[alias]
            for c, p in zip(cols, pap):
                mean = np.nanmean(errors003(data[ours], c))
                if abs(mean - p[0]) > p[1]:
                    flagged.append(("003/T2", f"{ours} (paper's {alias} row)", c, mean, p[0], p[1]))
            lines.append(f"The paper's row *{alias}* is the same data as *{ours}*: "
                         + ", ".join(f"{LABEL003[c]} {p[0]:.2f} ± {p[1]:.2f}"
                                     for c, p in zip(cols, pap)) + ".")
    lines.append("")
    lines.append("SM against each other criterion with the paper's paired t-test (t > 1.676), "
                 f"over the {len(paper_rows)} data sets run:\n")
    lines.append("| SM vs | SM significantly better on | significantly worse on |")
    lines.append("|---|---|---|")
    for c, (b, w) in wins.items():
        lines.append(f"| {LABEL003[c]} | {b} | {w} |")
    lines.append("")
    return paper_rows


def _sets003(data):
    """(data set, its records) of the sets of Li et al.'s tables that have records."""
    for ds in DS003:
        recs = data.get(ds)
        if recs:
            yield ds, recs


def _head003(lines, cols, last):
    lines.append("| data set | " + " | ".join(LABEL003[c] for c in cols) + f" | {last} |")
    lines.append("|---|" + "---|" * (len(cols) + 1))


def chosen003(data, lines):
    cols = P.P003_COLS
    lines.append("Median log₂ γ selected by each criterion, and the median log₂ γ of the lowest "
                 "test error on the grid (oracle):\n")
    _head003(lines, cols, "oracle")
    for ds, recs in _sets003(data):
        cells = [f"{np.median([np.log2(GAMMAS003[r['methods'][c]['index']]) for r in recs]):g}"
                 for c in cols]
        orc = np.median([np.log2(GAMMAS003[int(np.argmax(r["test_accuracy"]))]) for r in recs])
        lines.append(f"| {ds} | " + " | ".join(cells) + f" | {orc:g} |")
    lines.append("")


def table3(data, lines):
    cols = P.P003_COLS
    lines.append("Median seconds per partition (the whole 31-kernel selection); paper's time in "
                 "brackets (the paper does not say whether its times are per partition or totals).\n")
    _head003(lines, cols, "load")
    for ds, recs in _sets003(data):
        cells = []
        for c in cols:
            s = np.median([r["methods"][c]["seconds"] for r in recs])
            cells.append(f"{s:.3f} ({P.P003_T3[ds][cols.index(c)]:.2f})")
        loads = [r["load"] for r in recs if r.get("load") is not None]
        lines.append(f"| {ds} | " + " | ".join(cells)
                     + f" | {min(loads):.1f}–{max(loads):.1f} |")
    lines.append("")


# --------------------------------------------------------------------------- figures


def _norm(curve, direction):
    c = np.array([np.nan if v is None else v for v in curve], dtype=float)
    if direction == "max":
        c = -c
    ok = np.isfinite(c)
    if ok.sum() < 2 or np.ptp(c[ok]) == 0:
        return np.full_like(c, np.nan)
    return (c - np.nanmin(c)) / np.ptp(c[ok])


def _pyplot():
    """matplotlib.pyplot on the file-only Agg backend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(plt, fig, path, dpi=90):
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def plot003_curves(data, path):
    plt = _pyplot()

    from kernelselect.criteria import get_criterion

    sets = [ds for ds in DS003 if ds in data]
    if not sets:
        return False
    logg = np.log2(1.0 / (2.0 * 2.0 ** np.arange(-15, 16)))
    fig, axes = plt.subplots(2, 4, figsize=(16, 7), sharex=True)
    for ax, ds in zip(axes.flat, sets):
        recs = data[ds]
        for c in P.P003_COLS:
            direction = "min" if c == "cv" else get_criterion(c).direction
            curves = np.array([_norm(r["methods"][c]["curve"], direction) for r in recs])
            ax.plot(logg, np.nanmean(curves, axis=0), label=LABEL003[c])
        err = np.mean([1 - np.array(r["test_accuracy"]) for r in recs], axis=0)
        ax.plot(logg, (err - err.min()) / max(np.ptp(err), 1e-12), "k--", lw=2,
                label="test error")
        ax.set_title(ds)
        ax.set_xlabel("log₂ γ")
    for ax in axes.flat[len(sets):]:
        ax.axis("off")
    axes.flat[0].set_ylabel("scaled criterion (0 = best)")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle("Paper 003 protocol: criterion curves (mean over partitions, each scaled to "
                 "[0, 1] with 0 at its best) against the LSSVM's test error")
    _save(plt, fig, path)
    return True


def plot003_time(data, path):
    plt = _pyplot()

    sets = [ds for ds in DS003 if ds in data]
    if not sets:
        return False
    fig, ax = plt.subplots(figsize=(7, 5))
    for c in P.P003_COLS:
        err = [np.mean(errors003(data[ds], c)) for ds in sets]
        sec = [np.median([r["methods"][c]["seconds"] for r in data[ds]]) for ds in sets]
        perr = [P.P003_T2[ds][P.P003_COLS.index(c)][0] for ds in sets]
        psec = [P.P003_T3[ds][P.P003_COLS.index(c)] for ds in sets]
        h = ax.scatter(np.mean(sec), np.mean(err), s=80, label=f"{LABEL003[c]} (ours)")
        ax.scatter(np.mean(psec), np.mean(perr), s=80, marker="x", color=h.get_facecolor()[0],
                   label=f"{LABEL003[c]} (paper)")
    ax.set_xscale("log")
    ax.set_xlabel("seconds per selection (mean over data sets)")
    ax.set_ylabel("test error % (mean over data sets)")
    ax.set_title(f"Paper 003 protocol, {len(sets)} data sets: error against time")
    ax.legend(fontsize=7, ncol=2)
    _save(plt, fig, path)
    return True


def plot000_curves(records, path):
    plt = _pyplot()

    from kernelselect.criteria import get_criterion

    show = ["random_kta", "random_kta_row", "kta", "random_c1", "c1", "random_eloo", "cv"]
    per = {}
    for r in records:
        if r.get("quick"):
            continue
        for m, v in r["methods"].items():
            if m in show and v.get("curve"):
                direction = "min" if m == "cv" else get_criterion(m).direction
                per.setdefault(r["dataset"], {}).setdefault(m, []).append(_norm(v["curve"], direction))
    sets = [ds for ds in DS000 if ds in per]
    if not sets:
        return False
    logg = np.arange(-8, 7)
    fig, axes = plt.subplots(1, len(sets), figsize=(4 * len(sets), 3.8), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, ds in zip(axes, sets):
        for m in show:
            if m in per[ds]:
                ax.plot(logg, np.nanmean(per[ds][m], axis=0), label=LABEL000[m],
                        ls="--" if m == "cv" else "-", lw=2 if m == "cv" else 1)
        ax.set_title(ds)
        ax.set_xlabel("log₂ γ")
    axes[0].set_ylabel("scaled criterion (0 = best)")
    axes[0].legend(fontsize=7)
    fig.suptitle("Paper 000 protocol: criterion curves (mean over repeats, scaled to [0, 1], 0 = best)")
    _save(plt, fig, path)
    return True


def plot000_time(data, path):
    plt = _pyplot()

    sets = [ds for ds in DS000 if ds in data]
    if not sets:
        return False
    colours = plt.get_cmap("tab20")
    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    for ax, ds in zip(axes.flat, sets):
        for i, m in enumerate(ORDER000):
            if m not in data[ds]:
                continue
            c = data[ds][m]
            col = colours(i % 20)
            ax.scatter(np.median([v[1] for v in c.values()]), np.mean([v[0] for v in c.values()]),
                       s=45, color=col, marker="o" if i < 10 else "s")
            pap = P.P000_T1.get(ds, {}).get(m)
            if pap:
                ax.scatter(pap[1], pap[0], marker="x", s=60, color=col)
        ax.set_xscale("log")
        ax.set_title(ds)
        ax.set_xlabel("seconds per selection")
        ax.set_ylabel("test accuracy %")
    legend_ax = axes.flat[-1]
    legend_ax.axis("off")
    for i, m in enumerate(ORDER000):
        legend_ax.scatter([], [], color=colours(i % 20), marker="o" if i < 10 else "s", label=LABEL000[m])
    legend_ax.scatter([], [], color="k", marker="x", label="paper's value (same colour)")
    legend_ax.legend(loc="center", fontsize=8, ncol=2)
    for ax in axes.flat[len(sets):-1]:
        ax.axis("off")
    fig.suptitle("Paper 000 protocol: test accuracy against selection time (dots/squares: ours, "
                 "crosses: paper; mean accuracy, median time over repeats)")
    _save(plt, fig, path, dpi=80)
    return True


# --------------------------------------------------------------------------- main


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--archive", action="store_true",
                    help="fold the plain jsonl records into the .gz archives first")
    args = ap.parse_args(argv)
    if args.archive:
        for p in (RAW000, RAW003):
            if p.exists() or Path(str(p) + ".gz").exists():
                C.log(f"{p.name}.gz: {C.archive(p)} records")
    rec000 = C.read_records(RAW000)
    rec003 = C.read_records(RAW003)
    d000 = collect000(rec000)
    d003 = collect003(rec003)
    flagged = []
    lines = [INTRO, ""]
    lines.append("## Paper 000, Table 1: randomised MCM criteria against the classic ones\n")
    lines.append(SECTION_TEXT["000/T1"])
    table1(d000, lines, flagged)
    c1_cost(lines)
    if plot000_time(d000, DOCS / "repro_paper000_time.png"):
        lines.append("![accuracy against time](repro_paper000_time.png)\n")
    if plot000_curves(rec000, DOCS / "repro_paper000_curves.png"):
        lines.append("![criterion curves](repro_paper000_curves.png)\n")
    lines.append(SECTION_TEXT["000/T1/after"])
    lines.append("## Paper 000, Table 2: KTA(v) against KTA(Z) and 5-fold CV on random features\n")
    lines.append(SECTION_TEXT["000/T2"])
    table2(d000, lines, flagged)
    table2_rff(lines)
    lines.append(SECTION_TEXT["000/T2/after"])
    lines.append("## Paper 003, Table 2: SM against CV, ELOO, CKTA, FSM and ER\n")
    lines.append(SECTION_TEXT["003/T2"])
    table003(d003, lines, flagged)
    chosen003(d003, lines)
    if plot003_curves(d003, DOCS / "repro_paper003_curves.png"):
        lines.append("![criterion curves](repro_paper003_curves.png)\n")
    lines.append(SECTION_TEXT["003/T2/after"])
    lines.append("## Paper 003, Table 3: run times\n")
    lines.append(SECTION_TEXT["003/T3"])
    table3(d003, lines)
    if plot003_time(d003, DOCS / "repro_paper003_time.png"):
        lines.append("![error against time](repro_paper003_time.png)\n")
    lines.append("## Deviations from the papers\n")
    lines.append("Every cell whose mean differs from the paper's by more than the paper's standard "
                 "deviation (paper 003) or, since paper 000 reports none, by more than our "
                 "standard deviation over the repeats and at least 0.5 points (paper 000), with "
                 "the explanation or *unexplained*.\n")
    lines.append("| table | data set | method | ours | paper | tolerance | explanation |")
    lines.append("|---|---|---|---|---|---|---|")
    used = []
    for table, ds, m, ours, pap, tol in flagged:
        key = m.rsplit("_D", 1)[0] if table == "000/T2" else m
        label = note_for(table, ds, key)
        if label and label not in used:
            used.append(label)
        why = f"[{label}]" if label else "unexplained"
        lines.append(f"| {table} | {ds} | {m} | {ours:.2f} | {pap:.2f} | {tol:.2f} | {why} |")
    lines.append("")
    explanations = dict(EXPLANATIONS)
    ff = result_json("full_fit.json")
    if ff is not None:
        explanations["CAP"] += CAP_MEASURED.format(
            log2_gamma=ff["log2_gamma"], capped_n=ff["capped"]["n_fit"],
            capped=ff["capped"]["accuracy"], full_n=ff["full"]["n_fit"],
            full=ff["full"]["accuracy"])
    else:
        explanations["CAP"] += CAP_UNMEASURED
    for label in used:
        lines.append(f"* **[{label}]** {explanations[label]}.")
    lines.append("")
    lines.append(SECTION_TEXT["end"])
    (DOCS / "reproductions.md").write_text("\n".join(lines) + "\n")
    C.log(f"docs/reproductions.md: {len(rec000)} paper-000 records, {len(rec003)} paper-003 "
          f"records, {len(flagged)} deviations listed")


if __name__ == "__main__":
    main()
