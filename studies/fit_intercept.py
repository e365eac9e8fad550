"""The refit's constant term chosen by the final model's leave-one-out.

For every set and training size n: a 50/50 split (``_common.half_split``: features
standardised, the target centred and scaled on the training half; the training half
subsampled to n rows, the test half capped at 2·10⁴ rows; the rows of
``fit_default``), then

- ``KernelSelectionCV(random_state=split).fit(X, y)`` with no other argument: its test
  NMSE and seconds, the refit's centres m, α, constant term (ȳ with the rest left to
  the kernel, "mean", or an unpenalised bias, "bias") and each form's smallest
  leave-one-out error;
- *exact*: exact KRR at the selection's (γ, α) in both forms (y − ȳ with ȳ added back;
  the LSSVM's bias), one single-threaded in-place Cholesky each (n ≤ ``--exact-max``);
- *peer*: scikit-learn ``Nystroem(n_components=m, gamma=γ) + RidgeCV(alphas=logspace(−10,
  2, 25))`` at the default's m (``--peer``; its ``fit_intercept=True`` is the unpenalised
  bias on centred features).

``gammas``: on one set, the leave-one-out machine of the default's m and candidates at
γ times each ``--factors`` value (α and form by leave-one-out): each form's smallest
error and the test NMSE of the choice, to see whether the selected γ limits the model.

One JSON line per (set, n, split) in ``results/fit_intercept_raw.jsonl`` (the ``gammas``
lines with part "gammas"); ``report`` writes ``results/fit_intercept.md``.

    python studies/fit_intercept.py run --sets pol cadata protein --n 10000 20000
    python studies/fit_intercept.py run --sets protein --n 20000 --loo-flops 3e12
    python studies/fit_intercept.py gammas --set pol --factors 0.25 0.5 2
    python studies/fit_intercept.py report
"""

import os
import time

import numpy as np

import _common as C
from fit_centres import exact_fit
from fit_default import TEST_CAP, default_fit, nmse
from fit_loo import peer

RAW = C.RESULTS / "fit_intercept_raw.jsonl"
REPORT = C.RESULTS / "fit_intercept.md"


def _plain(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, dict):
        return {a: _plain(b) for a, b in v.items()}
    return v


def run_one(name, n_cap, split, args, suffix=""):
    rec, sel, Xtr, ytr, Xte, yte = default_fit(name, n_cap, split)
    rec["part"] += suffix
    n = Xtr.shape[0]
    refit = sel.selection_.details["refit"]
    rec["refit"] = {k: _plain(v) for k, v in refit.items()}
    gamma, alpha = float(sel.best_params_["gamma"]), float(sel.best_params_["alpha"])
    rec.update(gamma=gamma, alpha=alpha, lam=alpha / n)
    C.log(name, n, "default", rec["default_nmse"], refit.get("intercept_form"),
          refit.get("intercept_loo"), refit["n_centres"], rec["default_seconds"])
    scaler = sel.best_estimator_[0]
    Ztr, Zte = scaler.transform(Xtr), scaler.transform(Xte)
    ybar = float(ytr.mean())
    if n <= args.exact_max:
        rec["exact"] = {}
        for form, bias in (("mean", False), ("bias", True)):
            t0 = time.perf_counter()
            f = exact_fit(Ztr, ytr - ybar, gamma, alpha, bias=bias)
            rec["exact"][form] = {"nmse": nmse(f(Zte) + ybar, yte),
                                  "seconds": time.perf_counter() - t0}
            C.log(name, n, "exact", form, rec["exact"][form])
    m = refit["n_centres"]
    if args.peer and m is not None:
        rec["peer"] = peer(Ztr, ytr, Zte, yte, gamma, m, split)
        C.log(name, n, "peer", rec["peer"])
    rec["load_after"] = [round(v, 2) for v in os.getloadavg()]
    C.append_record(RAW, rec)
    C.log(rec)


def run(args):
    suffix = ""
    if args.loo_flops:              # another budget for the leave-one-out route
        from kernelselect.models import _nystrom_loo

        _nystrom_loo.LOO_FLOPS = args.loo_flops
        suffix = f", LOO_FLOPS={args.loo_flops:g}"
    done = C.done_keys(RAW)
    for name in args.sets:
        for n in args.n:
            if (name, args.split, f"n={n}{suffix}") not in done:
                run_one(name, n, args.split, args, suffix)


def gammas(args):
    """The leave-one-out machine at the default's m and candidates for γ times each
    factor, on the rows of the recorded default run of ``--set``."""
    from kernelselect import KernelRidgeRegressor, NystroemPCG, Standardizer

    base = [r for r in C.read_records(RAW) if r["dataset"] == args.set
            and r.get("part") == f"n={args.n}"][0]
    data = C.load_data(args.set)
    X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y, dtype=np.float64)
    Xtr, ytr, Xte, yte, rng = C.half_split(X, y, "regression", args.set, base["split"])
    tr = C.subsample(rng, Xtr.shape[0], args.n)
    te = C.subsample(rng, Xte.shape[0], TEST_CAP)
    scaler = Standardizer().fit(Xtr[tr])
    Ztr, Zte, ytr, yte = scaler.transform(Xtr[tr]), scaler.transform(Xte[te]), ytr[tr], yte[te]
    m = base["refit"]["n_centres"]
    candidates = np.asarray(base["refit"]["loo"]["alphas"], dtype=np.float64)
    rec = {"dataset": args.set, "repeat": base["split"], "part": "gammas", "n": args.n,
           "m": m, "gamma": base["gamma"], "load_before": [round(v, 2) for v in os.getloadavg()],
           "rows": []}
    for factor in args.factors:
        t0 = time.perf_counter()
        reg = KernelRidgeRegressor(
            gamma=base["gamma"] * factor, alpha=base["alpha"], fit_intercept="mean",
            random_state=base["split"],
            approximation=NystroemPCG(n_centres=m, loo_alphas=candidates,
                                      loo_intercept=True)).fit(Ztr, ytr)
        d = reg.model_.details
        row = {"factor": factor, "nmse": nmse(reg.predict(Zte), yte), "alpha": reg.alpha_,
               "form": reg.intercept_form_, "seconds": time.perf_counter() - t0,
               "loo": {f: float(np.min(v.mean(axis=1))) for f, v in d["loo_forms"].items()}}
        rec["rows"].append(row)
        C.log(args.set, row)
    rec["load_after"] = [round(v, 2) for v in os.getloadavg()]
    C.append_record(RAW, rec)


def _f(v, fmt=".4f"):
    return "—" if v is None else format(v, fmt)


def _earlier(r):
    """The exact model ("mean" form) and the peer at the same m from ``fit_loo``'s
    records of the same rows, split, (γ, α): (exact, peer), None where absent. Both
    are deterministic functions of these, so they are not run again."""
    from fit_loo import RAW as LOO_RAW

    m = r["refit"]["n_centres"]
    for old in C.read_records(LOO_RAW):
        if (old["dataset"], old["n"], old["split"]) != (r["dataset"], r["n"], r["split"]) \
                or old["gamma"] != r["gamma"] or old["alpha"] != r["alpha"]:
            continue
        peers = [old.get("peer")] + [it.get("peer") for it in old.get("more", [])]
        peer_m = [p["nmse"] for p in peers if p and p["m"] == m]
        return (old.get("exact") or {}).get("nmse"), (peer_m[0] if peer_m else None)
    return None, None


def report(args):
    recs = sorted(C.read_records(RAW), key=lambda r: (r["dataset"], r["n"], r["repeat"]))
    lines = ["# The refit's constant term by the final model's leave-one-out", "",
             "Generated by `studies/fit_intercept.py report` from `fit_intercept_raw.jsonl.gz`. "
             "50/50 splits, training half subsampled to n rows; test NMSE. *default*: "
             "`KernelSelectionCV(random_state=split)` with no other argument; *form*: the "
             "refit's constant term (mean: ȳ, the rest left to the kernel; bias: "
             "unpenalised) and each form's smallest leave-one-out error; *exact*: exact "
             "KRR at the selection's (γ, α) in each form; *peer*: scikit-learn "
             "`Nystroem(n_components=m) + RidgeCV` at the same m (— : not run; where this study "
             "did not run them, the exact model's and the peer's values come from "
             "`fit_loo_raw.jsonl.gz`, the same rows, split, (γ, α) and m, both deterministic "
             "in these). *default / exact (form)*: against the exact model in the chosen "
             "form where it ran, else in the ȳ form. "
             "Seconds on a 2-core machine shared with other work (1-minute load average "
             "before → after).", "",
             "| set | n | m | α/n | form | LOO mean | LOO bias | default | exact mean | "
             "exact bias | peer | default / exact (form) | default / peer | default s | "
             "load |",
             "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in recs:
        if r.get("part") == "gammas":
            continue
        f = r["refit"]
        loo = f.get("intercept_loo") or {}
        ex = dict(r.get("exact") or {})
        form = f.get("intercept_form")
        pe = (r.get("peer") or {}).get("nmse")
        old_exact, old_peer = _earlier(r)
        if "mean" not in ex and old_exact is not None:
            ex["mean"] = {"nmse": old_exact, "earlier": True}
        if pe is None and old_peer is not None:
            pe = old_peer
        ex_same = (ex.get(form) or ex.get("mean") or {}).get("nmse")
        budget = r["part"].partition(", ")[2]
        lines.append(
            f"| {r['dataset']}{f' ({budget})' if budget else ''} | {r['n']} | {f['n_centres'] or '—'} | {f['alpha'] / r['n']:.1e} | "
            f"{form} ({f.get('intercept_rule')}) | {_f(loo.get('mean'))} | {_f(loo.get('bias'))} | "
            f"{r['default_nmse']:.4f} | {_f((ex.get('mean') or {}).get('nmse'))} | "
            f"{_f((ex.get('bias') or {}).get('nmse'))} | {_f(pe)} | "
            f"{'—' if ex_same is None else format(r['default_nmse'] / ex_same, '.3f')} | "
            f"{'—' if pe is None else format(r['default_nmse'] / pe, '.3f')} | "
            f"{r['default_seconds']:.0f} | {r['load_before'][0]} → {r['load_after'][0]} |")
    sweeps = [r for r in recs if r.get("part") == "gammas"]
    for r in sweeps:
        lines += ["", f"{r['dataset']}, n = {r['n']}, m = {r['m']}: the leave-one-out machine "
                  f"at γ = factor × {r['gamma']:.4g} (α and form by leave-one-out; load "
                  f"{r['load_before'][0]} → {r['load_after'][0]}):", "",
                  "| factor | LOO mean | LOO bias | form | α | test NMSE | seconds |",
                  "|---:|---:|---:|---|---:|---:|---:|"]
        for row in r["rows"]:
            lines.append(f"| {row['factor']} | {row['loo']['mean']:.4f} | "
                         f"{row['loo']['bias']:.4f} | {row['form']} | {row['alpha']:.3g} | "
                         f"{row['nmse']:.4f} | {row['seconds']:.0f} |")
    lines += ["", "Notes. On pol the leave-one-out chose the bias by a wide margin (0.0410 against "
              "0.0720), and the test error followed: 0.0409 against the ȳ form's 0.0799 at "
              "the same m (`fit_loo.md`), below the peer's 0.0421 and below the exact "
              "model at the selected (γ, α) in either form (LSSVM 0.0435, ȳ 0.0692). The "
              "gap to the peer was the constant term, not γ and not the Nyström "
              "approximation: the peer's RidgeCV fits an unpenalised intercept on centred "
              "features, the same model as the bias form. On cadata the two forms tie "
              "(0.2317 both; the ȳ form kept, at the same test error as before). On "
              "protein at n = 2·10⁴ both forms together (2.6·10¹² flops) exceed the route's "
              "budget of 2·10¹²; the refit keeps ȳ with α by leave-one-out. With a budget "
              "of 3·10¹² the leave-one-out chose the bias (0.3850 against 0.3868) and the "
              "test error moved from 0.3873 to 0.3863, for 184 s against 79 s for the whole "
              "default fit (selection included); the budget was left at 2·10¹².", ""]
    C.write_report(REPORT, lines)


def main(argv=None):
    p, sub = C.command_parser(__doc__)
    r = sub.add_parser("run")
    r.add_argument("--sets", nargs="+", default=["pol", "cadata", "protein"])
    r.add_argument("--n", type=int, nargs="+", default=[10_000, 20_000])
    r.add_argument("--split", type=int, default=0)
    r.add_argument("--exact-max", type=int, default=12_000)
    r.add_argument("--peer", action="store_true")
    r.add_argument("--loo-flops", type=float, default=None,
                   help="the leave-one-out route's budget (default: the library's)")
    g = sub.add_parser("gammas")
    g.add_argument("--set", default="pol")
    g.add_argument("--n", type=int, default=10_000)
    g.add_argument("--factors", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0])
    C.run_command(p, sub, argv, report, run=run, gammas=gammas)


if __name__ == "__main__":
    main()
