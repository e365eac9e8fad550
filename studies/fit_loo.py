"""The final Nyström model's ridge by its own exact leave-one-out, and the centres it needs.

For every set and training size n: a 50/50 split (``_common.half_split``: features
standardised, the target centred and scaled on the training half; the training half
subsampled to n rows, the test half capped at 2·10⁴ rows), then

- ``KernelSelectionCV(random_state=split).fit(X, y)`` with no other argument: the
  default (where the exact fit does not run, the Nyström machine with m centres whose
  α is chosen among the selection's candidates by the final model's exact
  leave-one-out error, within the route's budget); its test NMSE, seconds and refit;
- *selected α*: the same machine (same m, same centres) at the selection's α, by
  conjugate gradients (the previous default);
- *exact*: exact KRR at the selection's (γ, α) (the refit's model with the exact kernel:
  y − ȳ, ȳ added back): by the library's exact fit (``approximation="exact"``, timed,
  n ≤ ``--library-exact-max``), else one single-threaded in-place Cholesky;
- *peer*: scikit-learn ``Nystroem(n_components=m, gamma=γ) + RidgeCV(alphas=logspace(−10,
  2, 25))`` on the same standardised rows, at the default's m;
- *more centres*: the leave-one-out machine at m = ⌈c·d_eff⌉ for each ``--factors`` c
  (d_eff the selection's effective dimension at its choice), with the peer at that m
  when ``--peer-all``.

One JSON line per (set, n, split) in ``results/fit_loo_raw.jsonl``; ``report`` writes
``results/fit_loo.md``.

    python studies/fit_loo.py run --sets protein cadata pol --n 10000 20000 --factors 3 4
    python studies/fit_loo.py report
"""

import math
import os
import time

import numpy as np

import _common as C
from fit_centres import exact_fit
from fit_default import EXACT_MAX, TEST_CAP, default_fit, nmse  # the same rows, caps, score

RAW = C.RESULTS / "fit_loo_raw.jsonl"
REPORT = C.RESULTS / "fit_loo.md"


def peer(Ztr, ytr, Zte, yte, gamma, m, split):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import RidgeCV

    t0 = time.perf_counter()
    feats = Nystroem(gamma=gamma, n_components=m, random_state=split).fit(Ztr)
    ridge = RidgeCV(alphas=np.logspace(-10, 2, 25)).fit(feats.transform(Ztr), ytr)
    seconds = time.perf_counter() - t0
    return {"m": m, "nmse": nmse(ridge.predict(feats.transform(Zte)), yte),
            "alpha": float(ridge.alpha_), "seconds": seconds}


def machine(Ztr, ytr, Zte, yte, gamma, alpha, recipe, split):
    from kernelselect import KernelRidgeRegressor

    t0 = time.perf_counter()
    reg = KernelRidgeRegressor(gamma=gamma, alpha=alpha, approximation=recipe,
                               random_state=split, fit_intercept="mean").fit(Ztr, ytr)
    seconds = time.perf_counter() - t0
    return {"nmse": nmse(reg.predict(Zte), yte), "seconds": seconds,
            "alpha": float(reg.alpha_), "approximation": reg.approximation_,
            "m": reg.n_centres_, "n_iter": reg.n_iter_,
            "alpha_rule": reg.model_.details.get("alpha_rule")}


def run_one(name, n_cap, split, args):
    from kernelselect import NystroemPCG

    rec, sel, Xtr, ytr, Xte, yte = default_fit(name, n_cap, split)
    n = Xtr.shape[0]
    refit = sel.selection_.details["refit"]
    rec["refit"] = {k: (v.tolist() if isinstance(v, np.ndarray) else
                        {a: b.tolist() for a, b in v.items()} if isinstance(v, dict) else v)
                    for k, v in refit.items()}
    gamma, alpha = float(sel.best_params_["gamma"]), float(sel.best_params_["alpha"])
    d_eff = sel.selection_.details.get("refit_effective_dimension")
    rec.update(gamma=gamma, alpha=alpha, lam=alpha / n, d_eff=d_eff)
    scaler = sel.best_estimator_[0]
    Ztr, Zte = scaler.transform(Xtr), scaler.transform(Xte)
    ybar = float(ytr.mean())
    if n <= args.library_exact_max:
        rec["exact"] = machine(Ztr, ytr, Zte, yte, gamma, alpha, "exact", split)
        rec["exact"]["how"] = "library"
    elif n <= EXACT_MAX:
        t0 = time.perf_counter()
        f = exact_fit(Ztr, ytr - ybar, gamma, alpha, bias=False)
        rec["exact"] = {"nmse": nmse(f(Zte) + ybar, yte), "how": "one-thread cholesky",
                        "seconds": time.perf_counter() - t0}
    m = refit["n_centres"]
    if m is not None:
        rec["selected_alpha"] = machine(Ztr, ytr, Zte, yte, gamma, alpha,
                                        NystroemPCG(n_centres=m), split)
        candidates = np.asarray(sel.selection_.alphas, dtype=np.float64)
        # the default's refit alone, timed beside the exact fit and the selected-α one
        rec["refit_alone"] = machine(Ztr, ytr, Zte, yte, gamma, alpha,
                                     NystroemPCG(n_centres=m, loo_alphas=candidates), split)
        rec["peer"] = peer(Ztr, ytr, Zte, yte, gamma, m, split)
        rec["more"] = []
        for c in args.factors:
            mc = int(min(n, 20_000, math.ceil(c * d_eff))) if d_eff else None
            if mc is None or mc <= m:
                continue
            item = machine(Ztr, ytr, Zte, yte, gamma, alpha,
                           NystroemPCG(n_centres=mc, loo_alphas=candidates), split)
            item["factor"] = c
            if args.peer_all:
                item["peer"] = peer(Ztr, ytr, Zte, yte, gamma, mc, split)
            rec["more"].append(item)
            C.log(name, n, "factor", c, item)
    rec["load_after"] = [round(v, 2) for v in os.getloadavg()]
    C.append_record(RAW, rec)
    C.log(rec)


def run(args):
    if args.loo_flops:
        from kernelselect.models import _nystrom_loo

        _nystrom_loo.LOO_FLOPS = args.loo_flops
    done = C.done_keys(RAW)
    for name in args.sets:
        for n in args.n:
            for split in range(args.splits):
                if (name, split, f"n={n}") not in done:
                    run_one(name, n, split, args)


def peer_more(args):
    """The peer at the "more centres" m of the records that lack it."""
    for r in C.read_records(RAW):
        if r["dataset"] not in args.sets:
            continue
        for it in r.get("more", []):
            if "peer" in it or it["factor"] not in args.factors:
                continue
            data = C.load_data(r["dataset"])
            X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y, dtype=np.float64)
            Xtr, ytr, Xte, yte, rng = C.half_split(X, y, "regression", r["dataset"], r["split"])
            tr = C.subsample(rng, Xtr.shape[0], int(r["part"][2:]))
            te = C.subsample(rng, Xte.shape[0], TEST_CAP)
            from kernelselect import Standardizer

            scaler = Standardizer().fit(Xtr[tr])
            it["peer"] = peer(scaler.transform(Xtr[tr]), ytr[tr], scaler.transform(Xte[te]),
                              yte[te], r["gamma"], it["m"], r["split"])
            C.log(r["dataset"], r["n"], it["factor"], it["peer"])
            C.append_record(RAW, r)


def _f(v, fmt=".4f"):
    return "—" if v is None else format(v, fmt)


def report(args):
    recs = sorted(C.read_records(RAW), key=lambda r: (r["dataset"], r["n"], r["split"]))
    lines = ["# The final model's α by its own leave-one-out, and the centres it needs", "",
             "Generated by `studies/fit_loo.py report` from `fit_loo_raw.jsonl.gz`. 50/50 "
             "splits, training half subsampled to n rows; test NMSE. *default*: "
             "`KernelSelectionCV(random_state=split)` with no other argument (its refit: m "
             "centres, α by the final model's leave-one-out among the selection's "
             "candidates); *selected α*: the same machine at the selection's α (the previous "
             "default); *exact*: exact KRR at the selection's (γ, α); *peer*: scikit-learn "
             "`Nystroem(n_components=m) + RidgeCV` at the same m. Seconds on a 2-core "
             "machine shared with other work (1-minute load average before → after).", "",
             "| set | n | m | d_eff | selected α/n | final α/n | default | selected α | exact "
             "| peer | default / exact | default / peer | default s | exact s | peer s | load |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in recs:
        f = r["refit"]
        ex = (r.get("exact") or {}).get("nmse")
        pe = (r.get("peer") or {}).get("nmse")
        old = (r.get("selected_alpha") or {}).get("nmse")
        lines.append(
            f"| {r['dataset']} | {r['n']} | {f['n_centres'] or '—'} | {_f(r.get('d_eff'), '.0f')} | "
            f"{r['lam']:.1e} | {f['alpha'] / r['n']:.1e} | {r['default_nmse']:.4f} | "
            f"{_f(old)} | {_f(ex)} | {_f(pe)} | "
            f"{'—' if ex is None else format(r['default_nmse'] / ex, '.3f')} | "
            f"{'—' if pe is None else format(r['default_nmse'] / pe, '.3f')} | "
            f"{r['default_seconds']:.0f} | {_f((r.get('exact') or {}).get('seconds'), '.0f')} | "
            f"{_f((r.get('peer') or {}).get('seconds'), '.0f')} | "
            f"{r['load_before'][0]} → {r['load_after'][0]} |")
    more = [(r, it) for r in recs for it in r.get("more", [])]
    if more:
        lines += ["", "More centres (the leave-one-out machine at m = ⌈c·d_eff⌉):", "",
                  "| set | n | c | m | final α/n | NMSE | / exact | peer at m | seconds |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r, it in more:
            ex = (r.get("exact") or {}).get("nmse")
            lines.append(
                f"| {r['dataset']} | {r['n']} | {it['factor']} | {it['m']} | "
                f"{it['alpha'] / r['n']:.1e} | {it['nmse']:.4f} | "
                f"{'—' if ex is None else format(it['nmse'] / ex, '.3f')} | "
                f"{_f((it.get('peer') or {}).get('nmse'))} | {it['seconds']:.0f} |")
    lines += ["", "Notes. The runs predate the centres rule's factor 3: their *default* column is "
              "the refit at m = max(√n·ln n, 2·d_eff) with α chosen by leave-one-out; the "
              "*more centres* rows at c = 3 are the refit the default now gives (same "
              "centres, same candidates). Choosing α on the final model moved protein from "
              "5.0 % to 3.0 % above the exact model at the same m (the previous default, "
              "*selected α*, and the peer's 0.3966 against 0.3969); three times d_eff "
              "brought it to 0.5 % (0.3873, peer at that m 0.3903) and cadata to 0.2 % below "
              "the exact model (peer 0.2208). On pol (third set, n = 7500) neither the "
              "exact model at the selected (γ, α) (0.0692) nor the Nyström refit (0.0880, "
              "0.0799 at 3·d_eff) comes near the peer (0.0454, 0.0421): the gap is not the "
              "Nyström approximation (the exact model has it too) and stays open. The "
              "exact fit at n = 10⁴ through the library refused (its dense path stops at "
              "8000 rows), so no exact-window timing at 10⁴ is recorded; at n = 2·10⁴ a "
              "one-thread Cholesky took 526 s against 204 s for the leave-one-out refit at "
              "m = 3684.", ""]
    C.write_report(REPORT, lines)


def main(argv=None):
    p, sub = C.command_parser(__doc__)
    r = sub.add_parser("run")
    r.add_argument("--sets", nargs="+", default=["protein", "cadata", "pol"])
    r.add_argument("--n", type=int, nargs="+", default=[10_000, 20_000])
    r.add_argument("--splits", type=int, default=1)
    r.add_argument("--factors", type=float, nargs="*", default=[])
    r.add_argument("--peer-all", action="store_true")
    r.add_argument("--library-exact-max", type=int, default=10_000)
    r.add_argument("--loo-flops", type=float, default=None,
                   help="the leave-one-out route's budget (default: the library's)")
    q = sub.add_parser("peer")
    q.add_argument("--sets", nargs="+", default=["protein"])
    q.add_argument("--factors", type=float, nargs="+", default=[3.0])
    sub.add_parser("report")
    args = p.parse_args(argv)
    {"run": run, "peer": peer_more, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
