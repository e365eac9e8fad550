"""Does a faster code path keep the defaults' choices?

Runs ``select_kernel(X, y, random_state=seed)`` on the training halves of the defaults
study (``defaults_quality.py``: the data sets and splits of its records, the same caps
and seeds) with two versions of the package — the installed one and, with
``--code DIR``, a checkout whose ``kernelselect`` package (with its compiled modules)
sits in DIR — saving each version's choices (γ, α) and the criterion value of every
level; ``--compare A B`` counts identical choices and the largest relative difference
of the values at the chosen point. Since the test score is a function of (γ, α), sets
with identical choices keep their defaults-study scores exactly; with ``--score`` each
choice's test score is recorded as well (KRR refitted at (γ, α), the defaults study's
scorer), and ``--compare`` gives the mean change per task (accuracy in percentage
points, NMSE) and the change on each set whose choice moved.

Only training sets above ``--min-n`` rows are run by default (400: below it the
exact path decides, which the speed work does not touch).

Usage
-----
    python studies/speed_choices.py --label main --code /path/to/main/pkg
    python studies/speed_choices.py --label new
    python studies/speed_choices.py --compare main new
    python studies/speed_choices.py --label new --cap 1000 --splits 0 --score
"""

import argparse
import json
import os
import sys

import numpy as np

import _common as C



def out_path(label):
    return C.RESULTS / f"speed_choices_{label}.json"


def use_code(path):
    """Import ``kernelselect`` from ``path`` instead of the installed (editable) one."""
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "MesonpyMetaFinder"]
    sys.path.insert(0, str(path))


def compare(a, b):
    ra = {(r["dataset"], r["split"]): r for r in json.loads(out_path(a).read_text())["records"]}
    rb = {(r["dataset"], r["split"]): r for r in json.loads(out_path(b).read_text())["records"]}
    keys = sorted(set(ra) & set(rb))
    same = [k for k in keys if np.isclose(ra[k]["gamma"], rb[k]["gamma"], rtol=1e-12)
            and np.isclose(ra[k]["alpha"], rb[k]["alpha"], rtol=1e-12)]
    rel = [abs(rb[k]["value"] - ra[k]["value"]) / max(abs(ra[k]["value"]), 1e-300)
           for k in same if ra[k]["value"] is not None]
    bit = sum(ra[k]["value"] == rb[k]["value"] for k in same)
    summary = dict(compared=len(keys), identical_choice=len(same), bit_identical_value=bit,
                   max_value_rel_diff=max(rel) if rel else None,
                   different=[list(k) for k in keys if k not in same],
                   score_change=_score_change(ra, rb, keys),
                   seconds={a: float(np.sum([ra[k]["seconds"] for k in keys])),
                            b: float(np.sum([rb[k]["seconds"] for k in keys]))})
    print(json.dumps(summary, indent=1))
    return summary


def _score_change(ra, rb, keys):
    """Mean test-score change b − a per task over the sets both scored (accuracy in
    percentage points, NMSE as is) and the change on every set whose choice moved."""
    keys = [k for k in keys if ra[k].get("score") is not None
            and rb[k].get("score") is not None]
    out = {}
    for task in sorted({ra[k]["task"] for k in keys}):
        unit = 1.0 if task == "regression" else 100.0
        diffs = {k: unit * (rb[k]["score"] - ra[k]["score"]) for k in keys
                 if ra[k]["task"] == task}
        out[task] = dict(sets=len(diffs), mean=float(np.mean(list(diffs.values()))),
                         moved={f"{k[0]}/{k[1]}": v for k, v in diffs.items()
                                if (ra[k]["gamma"], ra[k]["alpha"])
                                != (rb[k]["gamma"], rb[k]["alpha"])})
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--min-n", type=int, default=400)
    p.add_argument("--splits", default="0,1,2,3,4")
    p.add_argument("--datasets", default=None)
    p.add_argument("--cap", type=int, default=2000)
    p.add_argument("--test-cap", type=int, default=10000)
    p.add_argument("--label", default="new")
    p.add_argument("--code", default=None)
    p.add_argument("--compare", nargs=2, default=None)
    p.add_argument("--score", action="store_true",
                   help="also record each choice's test score (KRR refitted at it)")
    a = p.parse_args()
    if a.compare:
        compare(*a.compare)
        return
    if a.code:
        use_code(a.code)
    import kernelselect

    recs = C.defaults_study_halves({int(s) for s in a.splits.split(",")},
                                   a.datasets.split(",") if a.datasets else None, a.min_n)
    out = []
    load0 = os.getloadavg()
    for r, Xtr, ytr, Xte, yte, seed in C.capped_halves(recs, a.cap, a.test_cap):
        seconds, res = C.timed_defaults(Xtr, ytr, seed)
        levels = [lv for lv in res.details.get("auto", {}).get("levels", []) if "value" in lv]
        out.append(dict(dataset=r["dataset"], split=r["split"], n_train=r["n_train"],
                        gamma=res.best_gamma, alpha=res.best_alpha,
                        value=levels[-1]["value"] if levels else None,
                        level_values=[lv["value"] for lv in levels],
                        approximation=res.details.get("approximation"), seconds=seconds,
                        task=r["task"],
                        score=C.test_score(Xtr, ytr, Xte, yte, r["task"], res.best_gamma,
                                           res.best_alpha) if a.score else None))
        C.log(a.label, r["dataset"], r["split"], res.details.get("approximation"),
              f"{seconds:.2f} s")
    out_path(a.label).write_text(json.dumps(dict(
        label=a.label, code=a.code or kernelselect.__file__, load_before=load0,
        load_after=os.getloadavg(), records=out), indent=1) + "\n")


if __name__ == "__main__":
    main()
