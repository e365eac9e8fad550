"""Does a last Nyström level of n/2 landmarks choose as well as the exact window, faster?

On training sets of 400 < n ≤ 3200 rows the automatic levels (100, 200, 400, 800
landmarks) can reach a level whose double would exceed n/2 landmarks without being
settled; the defaults then evaluate the exact kernel matrix on the window around the
last best γ (``_policy.LAST_LEVEL = "exact"``). The alternative, ``"half"``, runs a
last Nyström level of min(n/2, MAX_LANDMARKS) landmarks on that window instead, and
stops there.

Protocol: the training and test halves of the defaults study (``defaults_quality.py``:
its records with n_train > ``--min-n``, the same caps, seeds and splits), both rules
timed one after the other in the same process (one thread), then scored as that study
scores: test accuracy (binary, multi-class) or test MSE / training variance
(regression) of kernel ridge regression refitted at the chosen (γ, α). The rules take
the same path until the exact window would start, so ``"half"`` is run only on the sets
where ``"exact"`` reached it; on the others both choices are the same by construction
(the report counts them as Δ = 0 and says how many there are).

Usage
-----
    python studies/speed_exact_region.py --splits 0
    python studies/speed_exact_region.py --report
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import _common as C  # noqa: E402

QUALITY = C.RESULTS / "defaults_quality_raw.jsonl.gz"
RAW = C.RESULTS / "speed_exact_region_raw.jsonl"
REPORT = C.RESULTS / "speed_exact_region.md"


def select(Xtr, ytr, seed, rule):
    import kernelselect
    from kernelselect import _policy

    _policy.LAST_LEVEL = rule
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            res = kernelselect.select_kernel(Xtr, ytr, random_state=seed)
            seconds = time.perf_counter() - t0
    finally:
        _policy.LAST_LEVEL = "exact"
    levels = [dict(approximation=lv.get("approximation"), seconds=lv.get("seconds"),
                   n_gammas=len(lv.get("gammas", [])), stable=lv.get("stable"))
              for lv in res.details.get("auto", {}).get("levels", []) if "approximation" in lv]
    return dict(rule=rule, gamma=res.best_gamma, alpha=res.best_alpha, seconds=seconds,
                approximation=res.details.get("approximation"), levels=levels)


def run(args):
    with gzip.open(QUALITY, "rt") as fh:
        quality = [json.loads(x) for x in fh if x.strip()]
    cv = {(r["dataset"], r["split"]): r["score"] for r in quality if r["method"] == "cv"}
    splits = {int(s) for s in args.splits.split(",")}
    todo = [r for r in quality if r["method"] == "defaults" and r["n_train"] > args.min_n
            and r["split"] in splits
            and (args.datasets is None or r["dataset"] in args.datasets.split(","))]
    done = {(r["dataset"], r["split"], r["cap"]) for r in C.read_jsonl(RAW)}
    for r in sorted(todo, key=lambda r: (r["n_train"], r["dataset"])):
        if (r["dataset"], r["split"], args.cap) in done:
            continue
        data = C.load_data(r["dataset"])
        Xtr, ytr, Xte, yte, _, seed = C.capped_half_split(r["dataset"], r["task"], data,
                                                          r["split"], args.cap, args.test_cap)
        rec = dict(dataset=r["dataset"], task=r["task"], split=r["split"], cap=args.cap,
                   n_train=int(Xtr.shape[0]), cv_score=cv.get((r["dataset"], r["split"]))
                   if args.cap == 1000 else None, load_before=os.getloadavg()[0])
        runs = [select(Xtr, ytr, seed, "exact")]
        if any(lv["approximation"] == "exact" for lv in runs[0]["levels"]):
            runs.append(select(Xtr, ytr, seed, "half"))
        rec["load_after"] = os.getloadavg()[0]
        for x in runs:
            x["score"] = C.test_score(Xtr, ytr, Xte, yte, r["task"], x["gamma"], x["alpha"])
        rec["runs"] = runs
        C.log(r["dataset"], rec["n_train"], *[f"{x['rule']} {x['approximation']} "
                                             f"{x['seconds']:.2f} s {x['score']:.4f}"
                                             for x in runs])
        with open(RAW, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def report():
    recs = {}
    for r in C.read_jsonl(RAW):
        recs[(r["dataset"], r["split"], r["cap"])] = r
    recs = sorted(recs.values(), key=lambda r: (r["cap"], r["n_train"], r["dataset"], r["split"]))
    C.write_archive(RAW, recs, separators=(",", ":"))
    lines = ["# The exact window against a last Nyström level of n/2 landmarks", "",
             "`studies/speed_exact_region.py` (raw records: `speed_exact_region_raw.jsonl.gz`; "
             "protocol in its docstring). One thread; both rules in the same process, one "
             "after the other. Δ score: `half` − `exact` (accuracy in pp, higher is better; "
             "regression NMSE, lower is better).", ""]
    for cap in sorted({r["cap"] for r in recs}):
        part = [r for r in recs if r["cap"] == cap]
        loads = [v for r in part for v in (r["load_before"], r["load_after"])]
        lines += [f"## Training sets capped at {cap} rows ({len(part)} sets and splits; "
                  f"load {min(loads):.1f}–{max(loads):.1f})", "",
                  "| task | sets | reach the exact window | mean Δ score (all) | "
                  "mean Δ score (those reaching it) | worst Δ | time exact (s, sum) | "
                  "time half (s, sum) |", "|---|---:|---:|---:|---:|---|---:|---:|"]
        for task in ("binary", "multiclass", "regression"):
            rows = [r for r in part if r["task"] == task]
            if not rows:
                continue
            reg = task == "regression"
            scale, fmt = (1.0, "{:+.4f}") if reg else (100.0, "{:+.2f}")
            deltas, reached, t_ex, t_half = [], [], 0.0, 0.0
            for r in rows:
                ex = r["runs"][0]
                half = r["runs"][-1]
                d = (half["score"] - ex["score"]) * scale
                deltas.append((d, r["dataset"]))
                if len(r["runs"]) > 1:
                    reached.append(d)
                t_ex += ex["seconds"]
                t_half += half["seconds"]
            worst = max(deltas) if reg else min(deltas)
            lines.append(f"| {task} | {len(rows)} | {len(reached)} | "
                         f"{fmt.format(np.mean([d for d, _ in deltas]))} | "
                         f"{fmt.format(np.mean(reached)) if reached else '–'} | "
                         f"{worst[1]} {fmt.format(worst[0])} | {t_ex:.1f} | {t_half:.1f} |")
        lines += ["", "| dataset | split | n_train | exact: last level, s, score | "
                  "half: last level, s, score | exact window's share of the exact rule's time |"
                  " (γ, α) exact → half |", "|---|---:|---:|---|---|---:|---|"]
        for r in part:
            if len(r["runs"]) < 2:
                continue
            ex, half = r["runs"]
            share = sum(lv["seconds"] or 0 for lv in ex["levels"]
                        if lv["approximation"] == "exact") / ex["seconds"]
            lines.append(f"| {r['dataset']} | {r['split']} | {r['n_train']} | "
                         f"{ex['approximation']}, {ex['seconds']:.2f}, {ex['score']:.4f} | "
                         f"{half['approximation']}, {half['seconds']:.2f}, {half['score']:.4f} | "
                         f"{share:.0%} | ({ex['gamma']:.3g}, {ex['alpha']:.3g}) → "
                         f"({half['gamma']:.3g}, {half['alpha']:.3g}) |")
        lines.append("")
    REPORT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--splits", default="0")
    p.add_argument("--datasets", default=None)
    p.add_argument("--min-n", type=int, default=400)
    p.add_argument("--cap", type=int, default=1000)
    p.add_argument("--test-cap", type=int, default=10000)
    p.add_argument("--report", action="store_true")
    a = p.parse_args()
    if a.report:
        report()
    else:
        run(a)


if __name__ == "__main__":
    main()
