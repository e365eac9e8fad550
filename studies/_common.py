"""Shared pieces of the reproduction studies: data, splits, the final classifier,
timed selection calls, raw-record files and the significance tests.

Data are found in ``$KERNELSELECT_DATA`` or, by default, in ``../shared/data`` beside
the repository (the same rule as the benchmarks).
"""

import gzip
import json
import os
import sys
import time
import zlib
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("KERNELSELECT_DATA", REPO.parent / "shared" / "data"))
RESULTS = REPO / "studies" / "results"


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- data

#: How each multiclass or oversized set is made into the binary problem a table uses.
#: ``rows``: keep the first rows only; ``positive``: one-vs-rest with this class code.
PREPARATION = {
    "a9a": {"rows": 32561,
            "why": "the first 32561 rows = LIBSVM a9a's training file, the 'adult (32561, 123)' "
                   "of paper 000 (the stored file appends the 16281-row test file)"},
    "penbased": {"positive": 0,
                 "why": "one-vs-rest: digit 0 (+1) against the other nine digits (−1); paper 000 "
                        "does not say how it made the 10-class set binary"},
}


def load(name):
    """(X, y) with y in {−1, +1}, prepared as :data:`PREPARATION` says."""
    from kernelselect.datasets import load_npz

    path = DATA / f"{name}.npz"
    if not path.exists():
        raise FileNotFoundError(f"{path} not found; set KERNELSELECT_DATA to the folder "
                                "holding the shared datasets.")
    d = load_npz(path)
    X, y = np.asarray(d.X, dtype=np.float64), np.asarray(d.y, dtype=np.float64)
    prep = PREPARATION.get(name, {})
    if "rows" in prep:
        X, y = X[:prep["rows"]], y[:prep["rows"]]
    if "positive" in prep:
        y = np.where(y == prep["positive"], 1.0, -1.0)
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"{name}: {classes.size} classes after preparation; add it to PREPARATION.")
    y = np.where(y == classes[1], 1.0, -1.0)
    return X, y


def split(n, train_fraction, name, repeat):
    """Seeded random train/test indices (``default_rng([repeat, crc32(name)])``)."""
    rng = np.random.default_rng([repeat, zlib.crc32(name.encode())])
    perm = rng.permutation(n)
    k = int(round(train_fraction * n))
    return np.sort(perm[:k]), np.sort(perm[k:]), rng


def minmax(Xtr, Xte):
    """Scale every feature to [0, 1] on the training part (LIBSVM's usual scaling;
    constant features become 0). The test part uses the same map, unclipped."""
    lo, hi = Xtr.min(axis=0), Xtr.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (Xtr - lo) / span, (Xte - lo) / span


def subsample(rng, n, cap):
    return np.arange(n) if n <= cap else np.sort(rng.choice(n, size=cap, replace=False))


# --------------------------------------------------------------------------- models


class TestAccuracy:
    """Test accuracy of the LSSVM with bias (ridge α) trained at a given γ, computed
    once per γ on demand. ``fit_rows`` restricts the training rows (a cap)."""

    def __init__(self, Xtr, ytr, Xte, yte, alpha, fit_rows=None):
        rows = np.arange(Xtr.shape[0]) if fit_rows is None else fit_rows
        self.X, self.y = Xtr[rows], ytr[rows]
        self.Xte, self.yte = Xte, yte
        self.alpha = alpha
        self.cache = {}
        self.seconds = 0.0

    def __call__(self, gamma):
        import kernelselect

        key = float(gamma)
        if key not in self.cache:
            t0 = time.perf_counter()
            model = kernelselect.fit_lssvm(self.X, self.y, key, alpha=self.alpha)
            f = np.asarray(model.decision_function(self.Xte)).reshape(-1)
            self.cache[key] = float(np.mean(np.where(f >= 0, 1.0, -1.0) == self.yte))
            self.seconds += time.perf_counter() - t0
        return self.cache[key]


def timed_select(X, y, gammas, alpha, criterion, approximation, seed, **params):
    """One ``select_kernel`` call: (chosen γ index per criterion, curves, seconds)."""
    import kernelselect

    t0 = time.perf_counter()
    # the protocol fixes the feature scaling (minmax) and the grid: no re-standardising
    res = kernelselect.select_kernel(X, y, gammas=gammas, alphas=(alpha,), criterion=criterion,
                                     approximation=approximation, random_state=seed,
                                     standardize=False, **params)
    seconds = time.perf_counter() - t0
    chosen = {c: (None if res.best[c]["index"] is None else int(res.best[c]["index"][0]))
              for c in res.criteria}
    curves = {c: [None if not np.isfinite(v) else float(f"{v:.6g}")
                  for v in np.asarray(res.curves[c])[:, 0]] for c in res.criteria}
    return chosen, curves, seconds


def timed_cv(X, y, gammas, alpha, seed, machine="lssvm", approximation="exact"):
    """5-fold CV error over γ: (chosen γ index, curve, seconds)."""
    import kernelselect

    t0 = time.perf_counter()
    res = kernelselect.cross_validate_grid(X, y, gammas=gammas, alphas=[alpha], machine=machine,
                                           loss="error", approximation=approximation, cv=5,
                                           random_state=seed)
    seconds = time.perf_counter() - t0
    curve = np.asarray(res.curves["cv"])[:, 0]
    return int(np.argmin(curve)), [float(f"{v:.6g}") for v in curve], seconds


# --------------------------------------------------------------------------- records


def append_record(path, record):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.write(json.dumps(record, separators=(",", ":")) + "\n")


def read_records(path):
    """Records of ``path`` (plain jsonl, appended while a study runs) and of
    ``path.gz`` (the committed archive); later lines win on the same key."""
    path = Path(path)
    out = {}
    for p, opener in ((Path(str(path) + ".gz"), gzip.open), (path, open)):
        if not p.exists():
            continue
        with opener(p, "rt") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:     # a line cut short by an interrupted run
                    continue
                out[(rec["dataset"], rec["repeat"], rec.get("part", ""))] = rec
    return list(out.values())


def archive(path):
    """Write every record of ``path`` (and its archive) into ``path.gz``, sorted."""
    recs = sorted(read_records(path), key=lambda r: (r["dataset"], r.get("part", ""), r["repeat"]))
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs)
    with open(str(path) + ".gz", "wb") as raw:   # mtime 0: the same records, the same bytes
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
            fh.write(text.encode())
    return len(recs)


def done_keys(path):
    return {(r["dataset"], r["repeat"], r.get("part", "")) for r in read_records(path)}


# --------------------------------------------------------------------------- statistics


def paired_t(a, b):
    """Paper 003's paired t statistic for "A better than B": d_i = B_i − A_i (test
    errors), t = mean(d) / (sd(d)/√N) with the sample standard deviation; A is
    significantly better when t > 1.676 (one-sided 5 %, 49 degrees of freedom).
    None when fewer than two pairs; +inf/−inf when every difference is equal and non-zero."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = b - a
    if d.size < 2:
        return None
    sd = d.std(ddof=1)
    if sd == 0:
        return 0.0 if d.mean() == 0 else float(np.sign(d.mean()) * np.inf)
    return float(d.mean() / (sd / np.sqrt(d.size)))


def z_statistic(best, other):
    """Paired z statistic of accuracies over repeats, best − other: z = mean(d)/(sd(d)/√R),
    d_r = acc_best,r − acc_other,r; z > 1.64 means the other method is significantly
    worse at the one-sided 5 % level (normal approximation, as paper 000 uses after
    Cawley & Talbot 2007; with few repeats it is only indicative)."""
    return paired_t(other, best)
