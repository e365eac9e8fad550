"""Where does ``select_kernel(X, y)`` spend its time, level by level, against its floor?

For each size n (a seeded subsample of cadata, features and target standardised, as
``defaults_speed.py``; a synthetic regression set when cadata is not there), a fresh
interpreter runs ``select_kernel(X, y, random_state=0)`` under each thread setting
(``one``: OMP/OPENBLAS_NUM_THREADS=1 and workers=1; ``default``: nothing set), the
settings interleaved repeat after repeat so that a change of machine load hits them
alike. The seconds of every level (``details["auto"]["levels"]``) and the γ it
evaluated are recorded, and in the same interpreter, on the same rows, the floors of
each Nyström level of m landmarks are timed on one thread:

* ``floor`` (the kernel-block floor): the kernel block C = K(X, Z) (n × m, the
  compiled kernel) plus one m × m eigendecomposition (``eigh``, W = K(Z, Z)) per γ —
  what any Nyström level must do for each γ it evaluates;
* ``eloo_floor`` (the leave-one-out floor): that, plus what the leave-one-out error
  of a rank-m stand-in cannot avoid on top: the Gram matrix CᵀC (n·m² flops,
  ``dsyrk``), the rows of the eigenvectors Q = C·M (2·n·m² flops, one gemm) for the
  diagonal of the hat matrix, and the second m × m eigendecomposition (of VᵀV).

The table gives per level and n: γ evaluated, seconds, seconds per γ, and the ratios
time / floor and time / eloo_floor. The 1-minute load average is recorded before
and after each run: on a shared machine it is part of the result. On an idle machine
the ``default`` rows measure the threads; under load the policy runs one thread and
the two settings should agree.

Usage
-----
    python studies/speed_profile.py --sizes 1000,3000,10000 --repeats 1 --label NAME
    python studies/speed_profile.py --report

Raw records are appended to results/speed_profile_raw.jsonl; ``--report`` adds them to
the archive kept in the repository (results/speed_profile_raw.jsonl.gz) and removes the
plain file. The runs labelled "before" and "after" were taken on the shared 2-core
machine at load 4.5–14; "ba656d4, idle" at load 0.7–0.9, where the default-thread rows
show what the second core gains.
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RAW = HERE / "results" / "speed_profile_raw.jsonl"
REPORT = HERE / "results" / "speed_profile.md"
SETTINGS = ("one", "default")


def data(n, seed=0):
    """(X, y): n seeded cadata rows standardised on themselves, or a synthetic set."""
    sys.path.insert(0, str(HERE))
    import _common as C
    try:
        d = C.load_data("cadata")
        idx = np.random.default_rng(seed).choice(d.X.shape[0], size=n, replace=False)
        X, = C.standardise(d.X[idx])
        y = d.y[idx]
        name = "cadata"
    except FileNotFoundError:
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((n, 8))
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        name = "synthetic"
    return np.ascontiguousarray(X, dtype=np.float64), (y - y.mean()) / y.std(), name


def _best_of(fn, repeats=3):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def floors(X, m, gamma):
    """Seconds of the floor pieces at m landmarks on one thread (best of 3)."""
    import scipy.linalg
    from scipy.linalg.blas import dsyrk
    from kernelselect.lowlevel import kernel_block
    from kernelselect.utils._threads import one_blas_thread

    Z = X[np.random.default_rng(1).choice(X.shape[0], size=m, replace=False)]
    with one_blas_thread():
        C = kernel_block(X, Z, gamma, workers=1)
        W = kernel_block(Z, Z, gamma, workers=1) + 1e-3 * np.eye(m)
        M = np.linalg.qr(np.random.default_rng(2).standard_normal((m, m)))[0]
        t_block = _best_of(lambda: kernel_block(X, Z, gamma, workers=1))
        t_eigh = _best_of(lambda: scipy.linalg.eigh(W, driver="evd"))
        t_gram = _best_of(lambda: dsyrk(1.0, C.T))
        t_rows = _best_of(lambda: C @ M)
    return dict(block=t_block, eigh=t_eigh, gram=t_gram, rows=t_rows,
                floor=t_block + t_eigh, eloo_floor=t_block + 2 * t_eigh + t_gram + t_rows)


def child(n, setting, label):
    """One measurement in this interpreter; prints one JSON record."""
    import warnings
    import kernelselect

    X, y, name = data(n)
    workers = 1 if setting == "one" else None
    load0 = os.getloadavg()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        res = kernelselect.select_kernel(X, y, random_state=0, workers=workers)
        total = time.perf_counter() - t0
    load1 = os.getloadavg()
    levels = []
    for lv in res.details["auto"]["levels"]:
        if "approximation" not in lv:
            continue
        stand_in = lv["approximation"]
        m = (int(stand_in.split("=")[1].rstrip(")")) if stand_in.startswith("nystrom")
             else None)
        rec = dict(approximation=stand_in, m=m, n_gammas=len(lv["gammas"]),
                   seconds=float(lv["seconds"]))
        if m is not None:
            rec.update(floors(X, m, float(np.median(lv["gammas"]))))
        levels.append(rec)
    print(json.dumps(dict(n=n, data=name, setting=setting, total=total,
                          best_gamma=res.best_gamma, best_alpha=res.best_alpha,
                          levels=levels, load_before=load0, load_after=load1,
                          cores=os.cpu_count(), commit=_commit(), label=label,
                          time=time.strftime("%Y-%m-%d %H:%M:%S"))))


def _commit():
    try:
        return subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        return None


def run(sizes, repeats, label):
    RAW.parent.mkdir(parents=True, exist_ok=True)
    for r in range(repeats):
        for n in sizes:
            for setting in SETTINGS:
                env = dict(os.environ)
                for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
                    env.pop(k, None)
                    if setting == "one":
                        env[k] = "1"
                out = subprocess.run([sys.executable, __file__, "--child", str(n), setting, label],
                                     env=env, capture_output=True, text=True, check=True)
                line = out.stdout.strip().splitlines()[-1]
                with RAW.open("a") as fh:
                    fh.write(line + "\n")
                rec = json.loads(line)
                print(f"n={n} {setting}: {rec['total']:.2f} s, load {rec['load_before'][0]:.1f}",
                      file=sys.stderr, flush=True)


def report():
    """The report from the archive (``.jsonl.gz``) and the records appended since
    (``.jsonl``), which are then archived together."""
    archive = RAW.with_suffix(".jsonl.gz")
    text = gzip.decompress(archive.read_bytes()).decode() if archive.exists() else ""
    if RAW.exists():
        text += RAW.read_text()
    recs = [json.loads(x) for x in text.splitlines() if x.strip()]
    lines = ["# Where the defaults spend their time, per level, against the floor", "",
             "Produced by `studies/speed_profile.py` (see its docstring for the floors). "
             "Median over repeats; `floor` = kernel block C = K(X, Z) + one m × m eigh per γ, "
             "`eloo floor` = floor + CᵀC (syrk) + C·M (gemm) + a second eigh, all timed on "
             "one thread on the same rows in the same interpreter.", "",
             "`eloo floor/floor` is the least time/floor any exact leave-one-out "
             "evaluation of the level can reach.", "",
             "| code | n | threads | level | γ | s | s/γ | time/floor | time/eloo floor | "
             "eloo floor/floor | total s | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    labels = list(dict.fromkeys(r.get("label", r.get("commit")) for r in recs))
    keys = sorted({(r["n"], r["setting"], r.get("label", r.get("commit"))) for r in recs},
                  key=lambda k: (labels.index(k[2]), k[0], k[1] != "one"))
    for n, setting, label in keys:
        group = [r for r in recs if r["n"] == n and r["setting"] == setting
                 and r.get("label", r.get("commit")) == label]
        total = float(np.median([r["total"] for r in group]))
        load = f"{min(r['load_before'][0] for r in group):.1f}–" \
               f"{max(r['load_after'][0] for r in group):.1f}"
        for i, lv in enumerate(group[0]["levels"]):
            same = [g["levels"][i] for g in group if len(g["levels"]) > i
                    and g["levels"][i]["approximation"] == lv["approximation"]]
            s = float(np.median([x["seconds"] for x in same]))
            ng = lv["n_gammas"]
            if lv["m"] is not None:
                fl = float(np.median([x["floor"] for x in same])) * ng
                ef = float(np.median([x["eloo_floor"] for x in same])) * ng
                ratios = f"{s / fl:.1f} | {s / ef:.2f} | {ef / fl:.1f}"
            else:
                ratios = "– | – | –"
            lines.append(f"| {label} | {n} | {setting} | {lv['approximation']} | {ng} | {s:.3f} | "
                         f"{s / ng:.3f} | {ratios} | {total:.2f} | {load} |")
    REPORT.write_text("\n".join(lines) + "\n")
    sys.path.insert(0, str(HERE))
    import _common as C
    C.write_archive(archive, recs)
    if RAW.exists():
        RAW.unlink()                                # archived: read once, not twice
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        import kernelselect.selection  # noqa: F401  (imports are not timed)
        child(int(sys.argv[2]), sys.argv[3], sys.argv[4])
        sys.exit(0)
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="1000,3000,10000")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--label", default="this version", help="names the code in the report")
    p.add_argument("--report", action="store_true")
    a = p.parse_args()
    if not a.report:
        run([int(s) for s in a.sizes.split(",")], a.repeats, a.label)
    report()
