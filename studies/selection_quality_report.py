"""The report of the selection-quality study: the markdown tables and the PNG, built
from the raw records that ``selection_quality.py`` writes (nothing is run here).

Usage
-----
    python studies/selection_quality_report.py                       # studies/results
    python studies/selection_quality_report.py --out-dir studies/results/selection_quality_mu0.005
    python studies/selection_quality_report.py --out-dir DIR --note "a paragraph on coverage"
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

import _common as C

RAW = "selection_quality_raw.jsonl"


# --------------------------------------------------------------------------- summaries


def read_records(out_dir):
    """Every raw record in ``out_dir``: the gzipped archive, then the plain file."""
    return C.read_jsonl(Path(out_dir) / RAW)


def _mean(values):
    values = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.mean(values)) if values else None


def _median(values):
    values = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.median(values)) if values else None


def _f(value, fmt="{:.3f}"):
    return "–" if value is None else fmt.format(value)


def summarise(records):
    """Per (dataset, method): means over splits; then per method over datasets."""
    by = {}
    for r in records:
        if r["method"].startswith("error/"):
            continue
        by.setdefault((r["dataset"], r["method"]), []).append(r)
    per = {}
    for (ds, method), rs in by.items():
        per[(ds, method)] = dict(
            task=rs[0]["task"], n_train=rs[0]["n_train"], splits=len(rs),
            score=_mean([r.get("score") for r in rs]),
            spearman=_mean([r.get("spearman") for r in rs]),
            within=_mean([None if r.get("within_one") is None else float(r["within_one"])
                          for r in rs]),
            time=_median([r.get("time") for r in rs]),
            time_ree=_median([r.get("time_ree") for r in rs]),
            peak=_mean([r.get("peak_mb") for r in rs]),
            n_used=rs[0].get("n_used"),
        )
    return per


def method_order(methods):
    def key(m):
        if "/" not in m:
            return (0, ["oracle", "cv", "median"].index(m) if m in ("oracle", "cv", "median") else 9, m)
        c, a = m.split("/")
        order = ["exact", "nystrom", "rff", "mcm", "random_mcm"]
        return (1, c, order.index(a) if a in order else 9)
    return sorted(methods, key=key)


def summary_sentences(per, datasets, methods):
    """Plain statements computed from the numbers (which criteria select well)."""
    out = ["## Summary (computed from the tables above)", ""]
    for task, scale, unit, tol_good, tol_bad in (("binary", 100.0, "pp", -1.0, -3.0),
                                                  ("regression", 1.0, "NMSE", 0.02, 0.1)):
        good, bad = [], []
        for m in methods:
            if "/" not in m:
                continue
            deltas = [per[(ds, m)]["score"] - per[(ds, "cv")]["score"] for ds in datasets
                      if (ds, m) in per and (ds, "cv") in per and per[(ds, m)]["task"] == task
                      and per[(ds, m)]["score"] is not None]
            if not deltas:
                continue
            dm = scale * float(np.mean(deltas))
            if task == "regression":
                dm = -dm  # positive = worse NMSE; flip so that "higher is better" below
            if dm >= (tol_good if task == "binary" else -tol_good):
                good.append(f"{m} ({dm:+.2f})" if task == "binary" else f"{m} ({-dm:+.3f})")
            elif dm <= (tol_bad if task == "binary" else -tol_bad):
                bad.append(f"{m} ({dm:+.2f})" if task == "binary" else f"{m} ({-dm:+.3f})")
        if task == "binary":
            out.append(f"- Binary, within 1 pp of 5-fold CV on average: {', '.join(good) or 'none'}.")
            out.append(f"- Binary, more than 3 pp worse than CV: {', '.join(bad) or 'none'}.")
        else:
            out.append(f"- Regression, NMSE at most 0.02 above CV's on average (NMSE − CV NMSE): "
                       f"{', '.join(good) or 'none'}.")
            out.append(f"- Regression, NMSE more than 0.1 above CV's: {', '.join(bad) or 'none'}.")
    faithful, unfaithful = [], []
    for m in methods:
        if "/" not in m or m.endswith("/exact"):
            continue
        sp = [per[(ds, m)]["spearman"] for ds in datasets
              if (ds, m) in per and per[(ds, m)]["spearman"] is not None]
        if not sp:
            continue
        med = float(np.median(sp))
        (faithful if med >= 0.9 else unfaithful if med < 0.5 else []).append(f"{m} ({med:.2f})")
    out.append(f"- Approximations with median Spearman ≥ 0.9 against their exact criterion: "
               f"{', '.join(faithful) or 'none'}.")
    out.append(f"- Median Spearman < 0.5 (the curve does not follow the exact one): "
               f"{', '.join(unfaithful) or 'none'}.")
    out.append("")
    return out


# --------------------------------------------------------------------------- report


def previous_note(path):
    """The note paragraph of an earlier report at ``path`` (between the coverage line
    and the protocol paragraph), so that rebuilding the report keeps it."""
    if not path.exists():
        return None
    paras = path.read_text().split("\n\n")
    for i, para in enumerate(paras[:-1]):
        if "\nCoverage: " in para and not paras[i + 1].startswith("Protocol: "):
            return paras[i + 1]
    return None


def write_report(records, out_dir, args_text, note=None):
    mus = sorted({r.get("mu", 1e-3) for r in records})
    if len(mus) != 1:
        raise ValueError(f"{out_dir}: records for several μ {mus}; one report per μ")
    mu = mus[0]
    per = summarise(records)
    datasets = sorted({ds for ds, _ in per})
    methods = method_order({m for _, m in per})
    lines = ["# Selection quality of the kernel selection criteria", ""]
    n_splits = sorted({r["split"] for r in records})
    lines += [
        f"Generated by `studies/selection_quality_report.py {args_text}` from the raw records"
        " of every run written to this folder.",
        f"Coverage: {len(datasets)} datasets ({', '.join(datasets)}), splits "
        f"{', '.join(map(str, n_splits))} (not every dataset need have every split; the"
        " per-dataset table gives the count).",
        "",
        *([note, ""] if note else []),
        "Protocol: 50/50 train/test splits, features standardised on the training half,"
        " Gaussian kernel, 15 γ = γ₀·2^k (k = −7…7, γ₀ the median heuristic), ridge"
        f" α = μ·n with μ = {mu:g}. Score = test accuracy of exact KRR on ±1 labels"
        " (binary, higher is better) or test MSE / training variance of y (regression,"
        " lower is better), KRR trained with the chosen γ. Spearman and 'within ±1' compare"
        " each criterion's γ-curve/choice with the exact criterion on the same rows"
        " (random_X, random_X_row… against exact X). CV = scikit-learn 5-fold GridSearchCV(KernelRidge)."
        " See the docstring of selection_quality.py for caps and subsamples.",
        "",
        "Approximations run with their defaults: Nystroem(n_landmarks=min(n, 200)) — on"
        " training sets of at most 200 rows it *is* the exact matrix —, RFF(n_features=200),"
        " MCM() and RandomMCM(n_features=100). Times are wall-clock seconds on a shared"
        " 2-core machine that was running other jobs: compare"
        " ratios within one run only.",
        "",
    ]
    for task, label, better in (("binary", "accuracy", "higher"), ("regression", "NMSE", "lower")):
        tds = [ds for ds in datasets if any(per.get((ds, m), {}).get("task") == task for m in methods)]
        if not tds:
            continue
        lines += [f"## {task.capitalize()} datasets ({len(tds)}): test {label}, {better} is better", ""]
        lines += ["| method | datasets | mean score | mean Δ vs CV | median Spearman | "
                  "datasets with Spearman ≥ 0.9 | within ±1 step | median time (s) | ree-only time (s) |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for m in methods:
            rows = [(ds, per[(ds, m)]) for ds in tds if (ds, m) in per]
            if not rows:
                continue
            deltas = []
            for ds, p in rows:
                cv = per.get((ds, "cv"))
                if cv and p["score"] is not None and cv["score"] is not None:
                    deltas.append(p["score"] - cv["score"])
            sp = [p["spearman"] for _, p in rows if p["spearman"] is not None]
            good = f"{sum(s >= 0.9 for s in sp)}/{len(sp)}" if sp else "–"
            scale = 100.0 if task == "binary" else 1.0
            fmt = "{:+.2f} pp" if task == "binary" else "{:+.3f}"
            lines.append(
                f"| {m} | {len(rows)} | {_f(_mean([p['score'] for _, p in rows]), '{:.4f}')} | "
                f"{_f(None if not deltas else scale * float(np.mean(deltas)), fmt)} | "
                f"{_f(_median(sp), '{:.2f}')} | {good} | "
                f"{_f(_mean([p['within'] for _, p in rows]), '{:.2f}')} | "
                f"{_f(_median([p['time'] for _, p in rows]), '{:.3g}')} | "
                f"{_f(_median([p['time_ree'] for _, p in rows]), '{:.3g}')} |")
        lines.append("")

    lines += summary_sentences(per, datasets, methods)

    # per-dataset view of the main contenders
    key_methods = [m for m in ("oracle", "cv", "median", "ree/exact", "ree/nystrom", "ree/mcm",
                               "kta/exact", "eloo/exact", "gcv/exact") if any((ds, m) in per for ds in datasets)]
    lines += ["## Per dataset (mean test score over splits; time in s)", "",
              "| dataset | task | n_train | splits | " + " | ".join(key_methods) +
              " | CV time (n_cv) | ree/nystrom time |",
              "|---|---|---:|---:|" + "---:|" * len(key_methods) + "---:|---:|"]
    for ds in datasets:
        anyp = next(p for (d_, _), p in per.items() if d_ == ds)
        cells = [_f(per[(ds, m)]["score"], "{:.4f}") if (ds, m) in per else "–" for m in key_methods]
        cv = per.get((ds, "cv"))
        ny = per.get((ds, "ree/nystrom"))
        lines.append(f"| {ds} | {anyp['task']} | {anyp['n_train']} | {anyp['splits']} | "
                     + " | ".join(cells)
                     + f" | {_f(cv and cv['time'], '{:.3g}')} ({cv and cv['n_used']}) | "
                     f"{_f(ny and ny['time_ree'], '{:.3g}')} |")
    lines.append("")

    big = [ds for ds in datasets
           if any(p.get("peak") is not None for (d_, _), p in per.items() if d_ == ds)]
    if big:
        lines += ["## Full-size runs of the approximate criteria", "",
                  "Datasets whose training half exceeds the exact cap: every approximate"
                  " criterion of an approximation evaluated together on all n_train rows"
                  " (15 γ); peak memory by tracemalloc.", "",
                  "| dataset | n_train | approximation | time all criteria (s) | ree only (s) | peak MB | CV time (s) on n_cv |",
                  "|---|---:|---|---:|---:|---:|---:|"]
        for ds in big:
            seen = set()
            for (d_, m), p in sorted(per.items()):
                if d_ != ds or p.get("peak") is None:
                    continue
                approx = m.split("/")[1]
                if approx in seen:
                    continue
                seen.add(approx)
                cv = per.get((ds, "cv"))
                lines.append(f"| {ds} | {p['n_train']} | {approx} | {_f(p['time'], '{:.3g}')} | "
                             f"{_f(p['time_ree'], '{:.3g}')} | {_f(p['peak'], '{:.0f}')} | "
                             f"{_f(cv and cv['time'], '{:.3g}')} on {cv and cv['n_used']} |")
        lines.append("")
    errors = [r for r in records if r["method"].startswith("error/")]
    if errors:
        lines += ["## Failures", ""]
        grouped = {}
        for r in errors:
            grouped.setdefault((r["approximation"], r["error"]), set()).add(r["dataset"])
        for (approx, error), names in sorted(grouped.items()):
            lines.append(f"- {approx} on {len(names)} datasets ({', '.join(sorted(names))}): {error}")
        lines.append("")
    (Path(out_dir) / "selection_quality.md").write_text("\n".join(lines))
    plot(per, datasets, methods, Path(out_dir) / "selection_quality.png")


def plot(per, datasets, methods, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    crit_methods = [m for m in methods if "/" in m]
    crits = sorted({m.split("/")[0] for m in crit_methods})
    approxes = [a for a in ("exact", "nystrom", "rff", "mcm", "random_mcm")
                if any(m.endswith("/" + a) for m in crit_methods)]
    heat_approxes = [a for a in approxes if a != "exact"]  # exact is 1 by definition
    heat_crits = [c for c in crits if any(f"{c}/{a}" in crit_methods for a in heat_approxes)]
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2))
    # (a) median Spearman vs exact
    grid = np.full((len(heat_crits), len(heat_approxes)), np.nan)
    for i, c in enumerate(heat_crits):
        for j, a in enumerate(heat_approxes):
            vals = [per[(ds, f"{c}/{a}")]["spearman"] for ds in datasets
                    if (ds, f"{c}/{a}") in per and per[(ds, f"{c}/{a}")]["spearman"] is not None]
            if vals:
                grid[i, j] = np.median(vals)
    ax = axes[0]
    im = ax.imshow(grid, vmin=-1, vmax=1, cmap="RdBu", aspect="auto")
    ax.set_xticks(range(len(heat_approxes)), heat_approxes, rotation=30)
    ax.set_yticks(range(len(heat_crits)), heat_crits)
    for i in range(len(heat_crits)):
        for j in range(len(heat_approxes)):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if abs(grid[i, j]) > 0.6 else "black")
    fig.colorbar(im, ax=ax, fraction=0.046)
    ax.set_title("median Spearman vs exact criterion")
    # (b) accuracy gap to CV on binary sets
    ax = axes[1]
    width = 0.8 / max(len(approxes), 1)
    for j, a in enumerate(approxes):
        gaps = []
        for c in crits:
            d = [100 * (per[(ds, f"{c}/{a}")]["score"] - per[(ds, "cv")]["score"])
                 for ds in datasets if (ds, f"{c}/{a}") in per and (ds, "cv") in per
                 and per[(ds, "cv")]["task"] == "binary"
                 and per[(ds, f"{c}/{a}")]["score"] is not None]
            gaps.append(np.mean(d) if d else np.nan)
        ax.bar(np.arange(len(crits)) + j * width, gaps, width, label=a)
    for ref, style in (("median", "--"), ("oracle", ":")):
        d = [100 * (per[(ds, ref)]["score"] - per[(ds, "cv")]["score"]) for ds in datasets
             if (ds, ref) in per and (ds, "cv") in per and per[(ds, "cv")]["task"] == "binary"]
        if d:
            ax.axhline(np.mean(d), color="k", ls=style, lw=1, label=f"{ref} heuristic" if ref == "median" else ref)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(np.arange(len(crits)) + 0.4 - width / 2, crits, rotation=45)
    ax.set_ylabel("test accuracy − CV accuracy (pp), mean over binary sets")
    ax.set_title("selection quality (binary)")
    ax.legend(fontsize=7)
    # (c) time vs n_train
    ax = axes[2]
    for m, marker in (("cv", "o"), ("ree/exact", "s"), ("ree/nystrom", "^"), ("ree/mcm", "v"),
                      ("ree/rff", "D")):
        pts = [(per[(ds, m)]["n_used"] or per[(ds, m)]["n_train"],
                per[(ds, m)]["time_ree"] if m != "cv" else per[(ds, m)]["time"])
               for ds in datasets if (ds, m) in per]
        pts = [(x, y) for x, y in pts if y is not None]
        if pts:
            x, y = zip(*pts)
            ax.scatter(x, y, marker=marker, label=m, s=18)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows used by the method")
    ax.set_ylabel("selection time over 15 γ (s)")
    ax.set_title("time (C_ree alone; CV: 5-fold grid search)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir", default=str(C.RESULTS),
                        help="folder holding the raw records; the report is written there")
    parser.add_argument("--note", help="a paragraph for the top of the report (coverage, mode); "
                        "default: the note of the report already in --out-dir")
    args = parser.parse_args(argv)
    out_dir = Path(args.out_dir)
    records = read_records(out_dir)
    if not records:
        parser.error(f"no records in {out_dir / RAW}[.gz]; run selection_quality.py first")
    note = args.note if args.note is not None else previous_note(out_dir / "selection_quality.md")
    shown = os.path.relpath(out_dir.resolve(), C.REPO) if out_dir.resolve().is_relative_to(C.REPO) \
        else str(out_dir)
    write_report(records, out_dir, f"--out-dir {shown}", note)
    C.log(f"wrote {out_dir / 'selection_quality.md'} and .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
