"""Paper 000, Table 2: test accuracy of the random-feature ridge model itself at the γ
each Table 2 criterion selected, beside the exact LSSVM's accuracy that the table
reports.

The paper's 5-CV-RFF trains ridge regression on the D random Fourier features; if its
Table 2 accuracies are that model's, they should be close to the numbers this script
measures, and far below the exact LSSVM's. For every repeat of the ``table2`` records
in ``studies/results/paper000_raw.jsonl[.gz]`` (the same partition and scaling) and
every criterion and D there, it fits ``fit_krr(..., alpha=1, approximation=RFF(D))``
(ridge on D random Fourier features, no bias, as the CV it scores) on the whole
training half at the selected γ and records the sign accuracy on the test half.

Output: ``studies/results/t2_rff_model.json``, read by ``studies/report.py``.

    python studies/t2_rff_model.py [--datasets mushrooms,coil2000,penbased]
"""

import argparse
import json
from pathlib import Path

import numpy as np

import _common as C
from repro_paper000 import ALPHA, DATASETS, GAMMAS, OUT as RAW000

OUT = C.RESULTS / "t2_rff_model.json"


def main(argv=None):
    import kernelselect

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="mushrooms,coil2000,penbased")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    recs = [r for r in C.read_records(RAW000) if r.get("part") == "table2" and not r.get("quick")]
    results = {}
    for name in args.datasets.split(","):
        X, y = C.load(DATASETS[name])
        per = {}
        for r in sorted((r for r in recs if r["dataset"] == name), key=lambda r: r["repeat"]):
            tr, te, _ = C.split(X.shape[0], 0.5, DATASETS[name], r["repeat"])
            Xtr, Xte = C.minmax(X[tr], X[te])
            for key, m in sorted(r["methods"].items()):
                dd = int(key.rsplit("_D", 1)[1])
                model = kernelselect.fit_krr(Xtr, y[tr], GAMMAS[m["index"]], alpha=ALPHA,
                                             approximation=kernelselect.RFF(n_features=dd),
                                             random_state=r["repeat"])
                f = np.asarray(model.decision_function(Xte)).reshape(-1)
                per.setdefault(key, []).append(
                    round(100.0 * float(np.mean(np.where(f >= 0, 1.0, -1.0) == y[te])), 3))
        results[name] = per
        C.log(f"{name}: " + ", ".join(f"{k} {np.mean(v):.2f} ({len(v)})" for k, v in per.items()))
    Path(args.out).write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
