"""Calibrated probabilities and prediction intervals from the closed-form leave-one-out.

Classification, every binary set shipped with ``kernelselect.datasets``, two splits
(``_common.capped_half_split``: 50/50, features standardised on the training half, at
most 1000 training and 2000 test rows):

- *ours*: ``KernelSelectionClassifier(random_state=split)``, ``predict_proba`` (softmax /
  Platt on the refit machine's leave-one-out decision values);
- *Platt with intercept*: σ(a·f + b) on the same values (ours has b = 0);
- *isotonic*: isotonic regression on the same leave-one-out values (the alternative
  method), probabilities clipped to [10⁻⁶, 1 − 10⁻⁶] so that log-loss stays finite;
- *in-sample Platt*: the same sigmoid fitted on the training decision values (what the
  leave-one-out replaces);
- *SVC*: scikit-learn ``SVC(probability=True)`` at the (C, γ) of a 3-fold
  ``GridSearchCV`` over C ∈ 2^{−3, −1, …, 11}, γ ∈ 2^{−11, −9, …, 1}.

Log-loss, expected calibration error (top-label, 10 equal-width bins), agreement of
argmax predict_proba with predict; seconds of fit, predict, predict_proba.

Regression, every regression set shipped, the same splits: ``KernelSelectionRegressor
(random_state=split)`` with ``predict_interval(coverage=0.9)`` (jackknife+ on these
exact machines, and the jackknife beside it); split conformal with the same estimator
(fit on a seeded 75 %, |residual| quantile of the other 25 %); MAPIE's jackknife+
(``CrossConformalRegressor(method="plus")``, leave-one-out up to 400 rows, 10-fold CV+
beyond) at the refit machine's fixed (γ, α) when MAPIE is installed. Test coverage and
mean width.

``large``: the Nyström conjugate-gradient machine at n = 2·10⁴ (protein): (γ, α) from a
selection on 2000 rows, ``KernelRidgeRegressor(approximation="nystrom-pcg")`` on all n,
90 % jackknife intervals on 2·10⁴ test rows; with ``--binary SET`` the LSSVM's
``predict_proba`` the same way (htru2, n = 1.2·10⁴).

    python studies/uncertainty_quality.py run
    python studies/uncertainty_quality.py large --n 20000
    python studies/uncertainty_quality.py large --binary htru2 --n 12000
    python studies/uncertainty_quality.py report
"""

import argparse
import gzip
import json
import os
import time
import warnings

import numpy as np

import _common as C

RAW = C.RESULTS / "uncertainty_quality_raw.jsonl.gz"
OUT = C.RESULTS / "uncertainty_quality.md"
CAP, TEST_CAP = 1000, 2000
SVC_C = 2.0 ** np.arange(-3, 12, 2)
SVC_GAMMA = 2.0 ** np.arange(-11, 2, 2)


def ece(P, y_codes, bins=10):
    """Top-label expected calibration error: Σ_b (n_b/n)·|accuracy_b − confidence_b|."""
    conf = P.max(axis=1)
    hit = (P.argmax(axis=1) == y_codes).astype(float)
    edges = np.linspace(0.0, 1.0, bins + 1)
    idx = np.clip(np.digitize(conf, edges[1:-1]), 0, bins - 1)
    total = 0.0
    for b in range(bins):
        sel = idx == b
        if sel.any():
            total += sel.mean() * abs(hit[sel].mean() - conf[sel].mean())
    return float(total)


def log_loss(P, y_codes):
    return float(-np.mean(np.log(np.clip(P[np.arange(len(y_codes)), y_codes], 1e-300, None))))


def timed(f, *args, **kw):
    t = time.perf_counter()
    out = f(*args, **kw)
    return out, time.perf_counter() - t


def machine_times(est, Xtr, ytr, Xte, method):
    """The refit machine of a selection estimator alone, fitted afresh at its
    parameters: (machine, scaled Xtr, scaled Xte, seconds of fit, of predict, of
    ``method`` on a fresh fit)."""
    scaler, machine = est.best_estimator_[0], est.best_estimator_[-1]
    Ztr, Zte = scaler.transform(Xtr), scaler.transform(Xte)
    make = type(machine)(**machine.get_params()).fit
    _, t_fit = timed(make, Ztr, ytr)
    _, t_pred = timed(make(Ztr, ytr).predict, Zte)
    _, t_method = timed(getattr(make(Ztr, ytr), method), Zte)
    return machine, Ztr, Zte, t_fit, t_pred, t_method


def classification(name, split):
    from sklearn.isotonic import IsotonicRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    from kernelselect import KernelSelectionClassifier, datasets
    from kernelselect.models._uncertainty import fit_calibration

    data = datasets.load(name)
    Xtr, ytr, Xte, yte, _, seed = C.capped_half_split(name, "binary", data, split, CAP, TEST_CAP)
    classes = np.unique(ytr)
    ctr, cte = np.searchsorted(classes, ytr), np.searchsorted(classes, yte)
    rec = {"kind": "binary", "set": name, "split": split, "n_train": len(ytr), "n_test": len(yte)}

    clf, t_fit = timed(KernelSelectionClassifier(random_state=seed).fit, Xtr, ytr)
    pred, t_pred = timed(clf.predict, Xte)
    P, t_proba = timed(clf.predict_proba, Xte)
    rec.update(t_fit=t_fit, t_predict=t_pred, t_proba=t_proba, log_loss=log_loss(P, cte),
               ece=ece(P, cte), agree=float(np.mean(classes[P.argmax(1)] == pred)),
               accuracy=float(np.mean(pred == yte)))
    machine, Ztr, Zte, t_mfit, t_mpred, t_mproba = machine_times(clf, Xtr, ytr, Xte,
                                                                  "predict_proba")
    rec.update(t_machine_fit=t_mfit, t_machine_predict=t_mpred, t_machine_proba=t_mproba)
    # the alternatives on the same decision values
    F_loo = machine.loo_decision_[:, 0]
    f_te = machine.decision_function(Zte)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(F_loo, ctr)
    p1 = np.clip(iso.predict(f_te), 1e-6, 1 - 1e-6)
    Piso = np.column_stack([1 - p1, p1])
    rec.update(iso_log_loss=log_loss(Piso, cte), iso_ece=ece(Piso, cte))
    platt = fit_calibration(F_loo[:, None], ctr, 2, intercepts=True)
    Pb = platt.proba(f_te[:, None])
    rec.update(platt_b_log_loss=log_loss(Pb, cte), platt_b_ece=ece(Pb, cte),
               platt_b_agree=float(np.mean(Pb.argmax(1) == (f_te > 0))))
    ins = fit_calibration(machine.decision_function(Ztr)[:, None], ctr, 2)
    Pins = ins.proba(f_te[:, None])
    rec.update(insample_log_loss=log_loss(Pins, cte), insample_ece=ece(Pins, cte))
    # SVC(probability=True) at the grid search's (C, γ)
    grid, t_grid = timed(GridSearchCV(SVC(), {"C": SVC_C, "gamma": SVC_GAMMA}, cv=3).fit,
                         Xtr, ytr)
    svc, t_svc = timed(SVC(probability=True, random_state=seed, **grid.best_params_).fit,
                       Xtr, ytr)
    Ps = svc.predict_proba(Xte)
    rec.update(svc_log_loss=log_loss(Ps, cte), svc_ece=ece(Ps, cte), t_svc_fit=t_svc,
               t_svc_grid=t_grid, svc_accuracy=float(np.mean(svc.predict(Xte) == yte)),
               svc_params={k: float(v) for k, v in grid.best_params_.items()})
    return rec


def interval_stats(I, y):
    return (float(np.mean((I[:, 0] <= y) & (y <= I[:, 1]))),
            float(np.mean(I[:, 1] - I[:, 0])))


def regression(name, split, mapie=True):
    from sklearn.base import clone

    from kernelselect import KernelSelectionRegressor, datasets

    data = datasets.load(name)
    Xtr, ytr, Xte, yte, _, seed = C.capped_half_split(name, "regression", data, split, CAP,
                                                      TEST_CAP)
    n = len(ytr)
    rec = {"kind": "regression", "set": name, "split": split, "n_train": n, "n_test": len(yte)}
    reg, t_fit = timed(KernelSelectionRegressor(random_state=seed).fit, Xtr, ytr)
    _, t_pred = timed(reg.predict, Xte)
    I, t_int = timed(reg.predict_interval, Xte, coverage=0.9)
    rec.update(t_fit=t_fit, t_predict=t_pred, t_interval=t_int)
    rec["jplus_coverage"], rec["jplus_width"] = interval_stats(I, yte)
    J = reg.predict_interval(Xte, coverage=0.9, method="jackknife")
    rec["jack_coverage"], rec["jack_width"] = interval_stats(J, yte)
    _, _, _, t_mfit, t_mpred, t_mint = machine_times(reg, Xtr, ytr, Xte, "predict_interval")
    rec.update(t_machine_fit=t_mfit, t_machine_predict=t_mpred, t_machine_interval=t_mint)
    # split conformal: the same estimator on 75 %, calibrated on 25 %
    rng = np.random.default_rng([seed, 75])
    perm = rng.permutation(n)
    a, b = perm[:int(round(0.75 * n))], perm[int(round(0.75 * n)):]
    sc = KernelSelectionRegressor(random_state=seed).fit(Xtr[a], ytr[a])
    res = np.sort(np.abs(ytr[b] - sc.predict(Xtr[b])))
    k = int(np.ceil(0.9 * (len(b) + 1)))
    q = res[k - 1] if k <= len(b) else np.inf
    p = sc.predict(Xte)
    rec["split_coverage"], rec["split_width"] = interval_stats(np.column_stack([p - q, p + q]),
                                                               yte)
    if mapie:
        try:
            from mapie.regression import CrossConformalRegressor
            from sklearn.model_selection import LeaveOneOut
        except ImportError:
            return rec
        cv = LeaveOneOut() if n <= 400 else 10
        m = CrossConformalRegressor(clone(reg.best_estimator_), confidence_level=0.9,
                                    method="plus", cv=cv)
        _, t_m = timed(m.fit_conformalize, Xtr, ytr)
        _, pis = m.predict_interval(Xte)
        Im = np.asarray(pis)[:, :, 0]
        rec["mapie_coverage"], rec["mapie_width"] = interval_stats(Im, yte)
        rec.update(mapie_cv="loo" if n <= 400 else "10-fold", t_mapie=t_m)
    return rec


def large(n, test=20000, name="protein"):
    from kernelselect import KernelRidgeRegressor, KernelSelectionRegressor

    data = C.load_data(name)
    X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y, dtype=np.float64)
    tr, te, rng = C.seeded_split(X.shape[0], name, 0, n)
    te = te[:test]
    Xtr, Xte = C.standardise(X[tr], X[te])
    m, s = y[tr].mean(), y[tr].std()
    ytr, yte = (y[tr] - m) / s, (y[te] - m) / s
    sub = rng.choice(n, 2000, replace=False)
    sel = KernelSelectionRegressor(random_state=0, standardize=False).fit(Xtr[sub], ytr[sub])
    g, a = sel.best_params_["gamma"], sel.best_params_["alpha"] * n / 2000
    reg, t_fit = timed(KernelRidgeRegressor(gamma=g, alpha=a, approximation="nystrom-pcg",
                                            fit_intercept="mean", random_state=0).fit, Xtr, ytr)
    _, t_pred = timed(reg.predict, Xte)
    I, t_int = timed(reg.predict_interval, Xte, coverage=0.9)
    cov, width = interval_stats(I, yte)
    return {"kind": "large", "set": name, "n_train": n, "n_test": len(te),
            "gamma": np.asarray(g).tolist(), "alpha": a, "n_centres": reg.n_centres_,
            "coverage": cov, "width": width, "t_fit": t_fit, "t_predict": t_pred,
            "t_interval": t_int, "loo_mse": float(np.mean(reg.loo_residuals_ ** 2)),
            "loo_method": reg.loo_method_, **other_form(reg, Xtr, ytr, Xte, yte)}


def other_form(reg, Xtr, ytr, Xte, yte, exact_too=False):
    """Coverage and width of the 90 % jackknife interval on the leave-one-out form the
    machine did not use (``reg.loo_method_``): generalised cross-validation's where it
    used the closed form; the closed form where it used GCV's, when ``exact_too``."""
    from kernelselect.models import _uncertainty as U

    model, form = reg.model_, reg.intercept_form_
    Y = np.asarray(ytr, dtype=np.float64).reshape(-1, 1)
    if reg.loo_method_ == "closed form":
        key, t = "gcv", time.perf_counter()
        R = U._gcv_loo(model, Xtr, Y, form)
    elif exact_too:
        key, t = "closed_form", time.perf_counter()
        offset = reg._uncertainty_cache()["source"][2]
        R = U._feature_loo(model, Xtr, Y, reg.alpha_, form, offset)
    else:
        return {}
    seconds = time.perf_counter() - t
    I = U.jackknife_interval(np.asarray(reg.predict(Xte)).reshape(-1, 1), R, 0.9)[:, 0, :]
    cov, width = interval_stats(I, yte)
    return {f"coverage_{key}": cov, f"width_{key}": width, f"t_loo_{key}": seconds}


def large_synthetic(n, test=20000, dask=False, chunk=100_000, exact_too=False):
    """The conjugate-gradient machine's 90 % intervals at n = 2·10⁵ in memory or 10⁶ on a
    Dask array: ``ard_scale.synthetic`` (d = 10, four features carry the target, noise
    0.1), (γ, α) from a selection on 2000 rows (α scaled by n/2000) as :func:`large`,
    ``KernelRidgeRegressor(approximation="nystrom-pcg")`` on all n rows, coverage and
    width on ``test`` fresh rows, and the peak resident memory of the fit and of
    predict + predict_interval (each from the resident size before it, /proc's VmHWM)."""
    from ard_scale import synthetic
    from kernelselect import KernelRidgeRegressor, KernelSelectionRegressor

    X, y = synthetic(n + test, 0)
    Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
    Xmem, ymem = Xtr, ytr
    sub = np.random.default_rng(1).choice(n, 2000, replace=False)
    sel = KernelSelectionRegressor(random_state=0).fit(Xtr[sub], ytr[sub])
    g, a = sel.best_params_["gamma"], sel.best_params_["alpha"] * n / 2000
    if dask:
        import dask.array as da
        Xtr, ytr = da.from_array(Xtr, chunks=(chunk, -1)), da.from_array(ytr, chunks=chunk)
    reg = KernelRidgeRegressor(gamma=g, alpha=a, approximation="nystrom-pcg",
                               fit_intercept="mean", random_state=0)
    C.reset_peak_rss()
    rss_before_fit = C.peak_rss()
    _, t_fit = timed(reg.fit, Xtr, ytr)
    rss_fit = C.peak_rss()
    C.reset_peak_rss()
    rss_before_interval = C.peak_rss()
    _, t_pred = timed(reg.predict, Xte)
    I, t_int = timed(reg.predict_interval, Xte, coverage=0.9)
    rss_interval = C.peak_rss()
    cov, width = interval_stats(np.asarray(I), yte)
    return {"kind": "large", "set": "synthetic_d10" + ("_dask" if dask else ""),
            "n_train": n, "n_test": test, "gamma": np.asarray(g).tolist(), "alpha": a,
            "n_centres": reg.n_centres_, "coverage": cov, "width": width,
            "t_fit": t_fit, "t_predict": t_pred, "t_interval": t_int,
            "loo_mse": float(np.mean(np.asarray(reg.loo_residuals_) ** 2)),
            "rss_before_fit_gb": rss_before_fit / 2 ** 30, "rss_fit_gb": rss_fit / 2 ** 30,
            "rss_before_interval_gb": rss_before_interval / 2 ** 30,
            "rss_interval_gb": rss_interval / 2 ** 30, "load": list(os.getloadavg()),
            "loo_method": reg.loo_method_,
            **other_form(reg, Xmem, ymem, Xte, yte, exact_too)}


def large_binary(n, test=20000, name="htru2"):
    """The conjugate-gradient LSSVM's predict_proba at large n, as :func:`large`."""
    from kernelselect import KernelSelectionClassifier, LSSVMClassifier

    X, y = C.load(name)
    tr, te, rng = C.seeded_split(X.shape[0], name, 0, n)
    te = te[:test]
    Xtr, Xte = C.standardise(X[tr], X[te])
    ytr, yte = y[tr], y[te]
    sub = rng.choice(n, 2000, replace=False)
    sel = KernelSelectionClassifier(random_state=0, standardize=False).fit(Xtr[sub], ytr[sub])
    g, a = sel.best_params_["gamma"], sel.best_params_["alpha"] * n / 2000
    clf, t_fit = timed(LSSVMClassifier(gamma=g, alpha=a, approximation="nystrom-pcg",
                                       random_state=0).fit, Xtr, ytr)
    pred, t_pred = timed(clf.predict, Xte)
    P, t_proba = timed(clf.predict_proba, Xte)
    codes = np.searchsorted(clf.classes_, yte)
    return {"kind": "large_binary", "set": name, "n_train": n, "n_test": len(te), "gamma": g,
            "alpha": a, "n_centres": clf.n_centres_, "log_loss": log_loss(P, codes),
            "ece": ece(P, codes), "accuracy": float(np.mean(pred == yte)),
            "agree": float(np.mean(clf.classes_[P.argmax(1)] == pred)),
            "t_fit": t_fit, "t_predict": t_pred, "t_proba": t_proba}


def _commit():
    """The checkout's commit (what the record measured), or None outside git."""
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True, cwd=C.RESULTS).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _append(rec):
    rec.setdefault("commit", _commit())
    with gzip.open(RAW, "at") as fh:
        fh.write(json.dumps(rec) + "\n")
    C.log(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in rec.items()}))


def run(args):
    from kernelselect import datasets

    infos = datasets.list_datasets()
    done = set()
    if RAW.exists():
        for line in gzip.open(RAW, "rt"):
            r = json.loads(line)
            done.add((r["kind"], r["set"], r.get("split")))
    for info in infos:
        if args.sets and info.name not in args.sets:
            continue
        kind = "binary" if info.task == "binary" else "regression" if info.task == "regression" \
            else None
        if kind is None or (args.only and kind != args.only):
            continue
        for split in range(2):
            if (kind, info.name, split) in done:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rec = (classification(info.name, split) if kind == "binary"
                       else regression(info.name, split, mapie=not args.no_mapie))
            _append(rec)


def report(_args):
    recs = [json.loads(line) for line in gzip.open(RAW, "rt")]
    B = [r for r in recs if r["kind"] == "binary"]
    R = [r for r in recs if r["kind"] == "regression"]
    L = [r for r in recs if r["kind"] == "large"]
    LB = [r for r in recs if r["kind"] == "large_binary"]
    out = ["# Uncertainty without a refit: calibrated probabilities and prediction intervals",
           "", "Written by `studies/uncertainty_quality.py report` from "
           "`results/uncertainty_quality_raw.jsonl.gz` (the script's docstring says how each "
           "number is made). Two splits per set, at most 1000 training and 2000 test rows, "
           "this 2-core machine shared with other work (seconds are indicative).", ""]

    def mean(rs, k):
        return float(np.mean([r[k] for r in rs]))

    if B:
        out += ["## Classification: predict_proba", "",
                "| set | n | ours log-loss | SVC log-loss | ratio | ours ECE | SVC ECE | "
                "isotonic log-loss / ECE | in-sample Platt log-loss / ECE | argmax = predict | "
                "accuracy ours / SVC |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in sorted(B, key=lambda r: (r["set"], r["split"])):
            out.append(
                f"| {r['set']} ({r['split']}) | {r['n_train']} | {r['log_loss']:.4f} | "
                f"{r['svc_log_loss']:.4f} | {r['log_loss'] / r['svc_log_loss']:.2f} | "
                f"{r['ece']:.4f} | {r['svc_ece']:.4f} | {r['iso_log_loss']:.4f} / "
                f"{r['iso_ece']:.4f} | {r['insample_log_loss']:.4f} / {r['insample_ece']:.4f} | "
                f"{r['agree']:.4f} | {r['accuracy']:.3f} / {r['svc_accuracy']:.3f} |")
        ratios = [r["log_loss"] / r["svc_log_loss"] for r in B]
        sets = sorted({r["set"] for r in B})
        per_set = {s: np.mean([r["log_loss"] for r in B if r["set"] == s])
                   / np.mean([r["svc_log_loss"] for r in B if r["set"] == s]) for s in sets}
        out += ["", f"- mean log-loss: ours {mean(B, 'log_loss'):.4f}, SVC "
                f"{mean(B, 'svc_log_loss'):.4f} (target: ours ≤ SVC's) — "
                f"{'met' if mean(B, 'log_loss') <= mean(B, 'svc_log_loss') else 'NOT met'}",
                f"- largest per-set ratio (mean over splits): {max(per_set.values()):.3f} "
                f"({max(per_set, key=per_set.get)}); largest single split {max(ratios):.3f} "
                f"(target: no set above 1.2) — "
                f"{'met' if max(per_set.values()) <= 1.2 else 'NOT met'}",
                f"- mean ECE: ours {mean(B, 'ece'):.4f}, SVC {mean(B, 'svc_ece'):.4f} "
                f"(target ≤ 0.04) — {'met' if mean(B, 'ece') <= 0.04 else 'NOT met'}",
                f"- argmax predict_proba = predict: smallest {min(r['agree'] for r in B):.4f}, "
                f"mean {mean(B, 'agree'):.4f} (target ≥ 0.99)",
                f"- Platt's sigmoid with its intercept, σ(a·f + b), on the same values: mean "
                f"log-loss {mean(B, 'platt_b_log_loss'):.4f}, ECE {mean(B, 'platt_b_ece'):.4f}, "
                f"argmax = predict on {mean(B, 'platt_b_agree'):.4f} of the rows (smallest "
                f"{min(r['platt_b_agree'] for r in B):.4f})",
                f"- the alternatives on the same leave-one-out values: isotonic mean log-loss "
                f"{mean(B, 'iso_log_loss'):.4f}, ECE {mean(B, 'iso_ece'):.4f}; Platt on the "
                f"in-sample decision values {mean(B, 'insample_log_loss'):.4f}, ECE "
                f"{mean(B, 'insample_ece'):.4f}", ""]
    if R:
        out += ["## Regression: predict_interval(coverage=0.9)", "",
                "| set | n | jackknife+ coverage / width | jackknife coverage / width | "
                "split conformal coverage / width | MAPIE jackknife+ coverage / width |",
                "|---|---|---|---|---|---|"]
        for r in sorted(R, key=lambda r: (r["set"], r["split"])):
            mp = (f"{r['mapie_coverage']:.3f} / {r['mapie_width']:.3f} ({r['mapie_cv']})"
                  if "mapie_coverage" in r else "—")
            out.append(f"| {r['set']} ({r['split']}) | {r['n_train']} | "
                       f"{r['jplus_coverage']:.3f} / {r['jplus_width']:.3f} | "
                       f"{r['jack_coverage']:.3f} / {r['jack_width']:.3f} | "
                       f"{r['split_coverage']:.3f} / {r['split_width']:.3f} | {mp} |")
        sets = sorted({r["set"] for r in R})
        per_set = {s: np.mean([r["jplus_coverage"] for r in R if r["set"] == s]) for s in sets}
        cov = mean(R, "jplus_coverage")
        out += ["", f"- mean coverage (jackknife+, the default here): {cov:.3f} (target "
                f"[0.88, 0.92]) — {'met' if 0.88 <= cov <= 0.92 else 'NOT met'}; jackknife "
                f"{mean(R, 'jack_coverage'):.3f}; split conformal "
                f"{mean(R, 'split_coverage'):.3f}",
                f"- lowest per-set coverage (mean over splits): {min(per_set.values()):.3f} "
                f"({min(per_set, key=per_set.get)}); lowest single split "
                f"{min(r['jplus_coverage'] for r in R):.3f} (target: none below 0.84) — "
                f"{'met' if min(per_set.values()) >= 0.84 else 'NOT met'}",
                f"- mean width: jackknife+ {mean(R, 'jplus_width'):.3f}, jackknife "
                f"{mean(R, 'jack_width'):.3f}, split conformal {mean(R, 'split_width'):.3f} "
                f"(target: ours ≤ split conformal's) — "
                f"{'met' if mean(R, 'jplus_width') <= mean(R, 'split_width') else 'NOT met'}"]
        M = [r for r in R if "mapie_coverage" in r]
        if M:
            out.append(f"- MAPIE jackknife+/CV+ at the refit's fixed (γ, α), {len(M)} splits: "
                       f"coverage {mean(M, 'mapie_coverage'):.3f}, width "
                       f"{mean(M, 'mapie_width'):.3f} (ours on the same splits: "
                       f"{mean(M, 'jplus_coverage'):.3f}, {mean(M, 'jplus_width'):.3f}); "
                       f"MAPIE's refits took {mean(M, 't_mapie'):.2f} s on average")
        out.append("")
    if B or R:
        out += ["## Cost", ""]
        if B:
            sel = [(r["t_fit"] + r["t_proba"]) / (r["t_fit"] + r["t_predict"]) for r in B]
            mac = [(r["t_machine_fit"] + r["t_machine_proba"])
                   / (r["t_machine_fit"] + r["t_machine_predict"]) for r in B]
            extra = [(r["t_proba"] - r["t_predict"]) / r["t_svc_fit"] for r in B]
            whole = [(r["t_machine_fit"] + r["t_machine_proba"]) / r["t_svc_fit"] for r in B]
            pipeline = [(r["t_fit"] + r["t_proba"]) / (r["t_svc_grid"] + r["t_svc_fit"])
                        for r in B]
            out += [f"- classification, (fit + predict_proba) / (fit + predict), median over "
                    f"splits: KernelSelectionClassifier (selection and refit) "
                    f"{np.median(sel):.3f}; its refit machine alone {np.median(mac):.3f} "
                    f"(target ≤ 1.5)",
                    f"- predict_proba's extra seconds over predict / SVC(probability=True).fit "
                    f"at the same n, median {np.median(extra):.3f} (target ≤ 0.3); the refit "
                    f"machine's whole fit + predict_proba / SVC(probability=True).fit, median "
                    f"{np.median(whole):.3f}; KernelSelectionClassifier's fit (its selection "
                    f"included) / SVC(probability=True).fit, median "
                    f"{np.median([r['t_fit'] / r['t_svc_fit'] for r in B]):.2f} (the grid "
                    f"search SVC needs first: median "
                    f"{np.median([r['t_svc_grid'] for r in B]):.2f} s against "
                    f"{np.median([r['t_fit'] for r in B]):.2f} s)",
                    f"- what a user runs end to end, (γ, α) included: KernelSelectionClassifier "
                    f"fit + predict_proba / (SVC's GridSearchCV + SVC(probability=True).fit), "
                    f"median {np.median(pipeline):.3f}, largest {max(pipeline):.3f}"]
        if R:
            sel = [(r["t_fit"] + r["t_interval"]) / (r["t_fit"] + r["t_predict"]) for r in R]
            mac = [(r["t_machine_fit"] + r["t_machine_interval"])
                   / (r["t_machine_fit"] + r["t_machine_predict"]) for r in R]
            out += [f"- regression, (fit + predict_interval) / (fit + predict), median: "
                    f"KernelSelectionRegressor {np.median(sel):.3f}; its refit machine alone "
                    f"{np.median(mac):.3f} (target ≤ 1.5)"]
        out.append("")
    if L or LB:
        out += ["## Large n: the Nyström conjugate-gradient machine", ""]
        for r in L:
            units = "target units" if r["set"].startswith("synthetic") else "standardised target"
            at = f" (at {r['commit']}: {r['note']})" if "note" in r else (
                f" (at {r['commit']})" if r.get("commit") else "")
            line = (f"- {r['set']}{at}, n = {r['n_train']}, {r['n_test']} test rows, "
                    f"m = {r['n_centres']} centres: 90 % jackknife coverage "
                    f"{r['coverage']:.4f}, mean width {r['width']:.3f} ({units}; leave-one-out "
                    f"by {r.get('loo_method', 'closed form')}); fit "
                    f"{r['t_fit']:.1f} s, predict {r['t_predict']:.2f} s, predict_interval "
                    f"(leave-one-out passes included) {r['t_interval']:.2f} s")
            for key, label in (("gcv", "generalised cross-validation's form"),
                               ("closed_form", "the closed form")):
                if f"coverage_{key}" in r:
                    line += (f"; by {label}: coverage "
                             f"{r[f'coverage_{key}']:.4f}, width {r[f'width_{key}']:.3f} "
                             f"({r[f't_loo_{key}']:.1f} s)")
            if "rss_fit_gb" in r:
                line += (f"; peak memory of the fit {r['rss_fit_gb']:.2f} GB (from "
                         f"{r['rss_before_fit_gb']:.2f}), of predict + predict_interval "
                         f"{r['rss_interval_gb']:.2f} GB (from {r['rss_before_interval_gb']:.2f}): "
                         f"{r['rss_interval_gb'] / r['rss_fit_gb']:.2f} of the fit's; load "
                         f"{r['load'][0]:.1f}")
            out.append(line)
        for r in LB:
            out.append(f"- {r['set']}, n = {r['n_train']}, {r['n_test']} test rows, "
                       f"m = {r['n_centres']} centres: predict_proba log-loss "
                       f"{r['log_loss']:.4f}, ECE {r['ece']:.4f}, accuracy "
                       f"{r['accuracy']:.4f}, argmax = predict on {r['agree']:.4f}; fit "
                       f"{r['t_fit']:.1f} s, predict {r['t_predict']:.2f} s, predict_proba "
                       f"(leave-one-out passes included) {r['t_proba']:.2f} s")
        out.append("")
    OUT.write_text("\n".join(out))
    print("\n".join(out))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--sets", nargs="*")
    r.add_argument("--only", choices=["binary", "regression"])
    r.add_argument("--no-mapie", action="store_true")
    lg = sub.add_parser("large")
    lg.add_argument("--n", type=int, default=20000)
    lg.add_argument("--test", type=int, default=20000)
    lg.add_argument("--binary", metavar="SET", help="the LSSVM's predict_proba on SET instead")
    lg.add_argument("--synthetic", action="store_true",
                    help="ard_scale's synthetic d = 10 target, with the peak memory")
    lg.add_argument("--dask", action="store_true", help="--synthetic on a Dask array")
    lg.add_argument("--exact-too", action="store_true",
                    help="beyond LOO_EXACT_MAX_N rows also the closed-form residuals' coverage")
    sub.add_parser("report")
    args = p.parse_args()
    if args.cmd == "run":
        run(args)
    elif args.cmd == "large":
        _append(large_binary(args.n, args.test, args.binary) if args.binary
                else large_synthetic(args.n, args.test, args.dask, exact_too=args.exact_too)
                if args.synthetic
                else large(args.n, args.test))
    else:
        report(args)


if __name__ == "__main__":
    main()
