"""What exact C1(K) (and ELOO) would cost on paper 000's two large sets, adult (a9a) and
w8a, measured at one γ on the first repeat's training half.

C1(K) = (α²/n) yᵀK_α⁻²y + (σ²/n) tr(K K_α⁻¹) and ELOO need K_α⁻¹ = (K + αI)⁻¹, which is
not a power moment of K: the library's streaming exact operator gives Pᵀ K^r P and
tr K^r (r ≤ 2) only, so ``select_kernel`` refuses ``c1`` on it. This script records

* the refusal (the library's message);
* the seconds of one streamed pass over K (``kernel_sums``: diagonal and ‖K‖_F²;
  ``kernel_matvec`` with one probe) at the full training size: the unit any
  streamed route pays;
* the conjugate-gradient iterations that one solve K_α x = y needs at that γ
  (relative residual 10⁻⁸), counted on seeded subsamples of 2000 and 4000 rows with
  the dense K (a streamed solve at full size pays one pass per iteration; the count
  grows with n, so the subsample counts are lower bounds);
* with ``--dense``, the seconds of the library's exact dense route for c1 + eloo at
  that γ on adult (one Cholesky factorisation and inverse of the 16280 × 16280
  K + αI; 3 × 2.1 GB).

Output: ``studies/results/c1_cost.json``, read by ``studies/report.py``.

    python studies/c1_cost.py --datasets w8a
    KERNELSELECT_MAX_BYTES=8G python studies/c1_cost.py --datasets adult --dense
"""

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

import _common as C
from repro_paper000 import ALPHA, DATASETS

LOG2_GAMMA = -4            # the middle of the γ range the exact KTA/MMD-B chose on adult
OUT = C.RESULTS / "c1_cost.json"


def training_half(paper_name):
    X, y = C.load(DATASETS[paper_name])
    tr, te, _ = C.split(X.shape[0], 0.5, DATASETS[paper_name], 0)
    Xtr, _ = C.minmax(X[tr], X[te])
    return np.ascontiguousarray(Xtr), y[tr]


def cg_iterations(K, alpha, y, tol=1e-8, max_iter=20000):
    """Plain conjugate gradients on (K + αI) x = y from x = 0: iterations to
    ‖r‖ ≤ tol‖y‖."""
    x = np.zeros_like(y)
    r = y.copy()
    p = r.copy()
    rr = r @ r
    stop = tol * tol * (y @ y)
    for it in range(1, max_iter + 1):
        q = K @ p + alpha * p
        a = rr / (p @ q)
        x += a * p
        r -= a * q
        rr_new = r @ r
        if rr_new <= stop:
            return it
        p = r + (rr_new / rr) * p
        rr = rr_new
    return None


def measure(paper_name, dense):
    import kernelselect
    from kernelselect import lowlevel

    Xtr, ytr = training_half(paper_name)
    n, d = Xtr.shape
    gamma = 2.0 ** LOG2_GAMMA
    out = {"n_train": n, "d": d, "log2_gamma": LOG2_GAMMA, "alpha": ALPHA}
    try:
        kernelselect.select_kernel(Xtr, ytr, gammas=[gamma], alphas=(ALPHA,), criterion="c1",
                                   approximation=kernelselect.Exact(method="streaming"),
                                   standardize=False)
        out["streaming_refusal"] = None
    except (ValueError, TypeError) as exc:
        out["streaming_refusal"] = str(exc)
    t0 = time.perf_counter()
    lowlevel.kernel_sums(Xtr, gamma)
    out["pass_sums_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    lowlevel.kernel_matvec(Xtr, ytr.reshape(-1, 1), gamma)
    out["pass_matvec_s"] = round(time.perf_counter() - t0, 2)
    out["load_during_passes"] = round(os.getloadavg()[0], 2)
    rng = np.random.default_rng(0)
    out["cg_iterations"] = {}
    for m in (2000, 4000):
        rows = np.sort(rng.choice(n, size=m, replace=False))
        K = lowlevel.kernel_block(Xtr[rows], Xtr[rows], gamma)
        out["cg_iterations"][str(m)] = cg_iterations(np.asarray(K), ALPHA, ytr[rows].copy())
        del K
    if dense:
        # three n × n arrays exceed the library's default 4 GiB limit: run with
        # KERNELSELECT_MAX_BYTES raised (recorded here)
        out["max_bytes_env"] = os.environ.get("KERNELSELECT_MAX_BYTES")
        t0 = time.perf_counter()
        res = kernelselect.select_kernel(
            Xtr, ytr, gammas=[gamma], alphas=(ALPHA,), criterion=["c1", "eloo"],
            approximation=kernelselect.Exact(method="dense", max_dense=n), standardize=False)
        out["dense_c1_eloo_one_gamma_s"] = round(time.perf_counter() - t0, 1)
        out["dense_load"] = round(os.getloadavg()[0], 2)
        out["dense_values"] = {c: float(np.asarray(res.curves[c])[0, 0]) for c in res.criteria}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="adult,w8a")
    ap.add_argument("--dense", action="store_true",
                    help="also time the dense c1 + eloo at the one γ (adult only; 6.4 GB)")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    path = Path(args.out)
    results = json.loads(path.read_text()) if path.exists() else {}
    for name in args.datasets.split(","):
        C.log(f"{name}: measuring")
        results[name] = measure(name, args.dense and name == "adult")
        path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        C.log(f"{name}: {results[name]}")


if __name__ == "__main__":
    main()
