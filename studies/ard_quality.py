"""Per-feature bandwidths (ARD) chosen by the gradient of the closed-form criteria:
do they beat isotropic 5-fold CV, and how do they compare with a Gaussian process?

Protocol (per dataset, per split)
---------------------------------
* The rows of ``defaults_quality.py``: 50/50 splits seeded by split and dataset name,
  features standardised on the training half, regression targets standardised on
  it; training halves above ``--cap`` (1000) rows replaced by one seeded subsample,
  at most ``--test-cap`` test rows scored; 5 splits on sets whose training half has
  at most 1000 rows, 2 on the others. Every regression and binary set of the shared
  data.
* **cv** (not rerun): the 5-fold CV records of ``defaults_quality.py`` on the same
  rows — kernel ridge regression over the 15 γ of the median-heuristic grid × 7 α
  (n_fit·10^k, k = −6…0), what ``GridSearchCV(KernelRidge(kernel="rbf"))`` selects.
* **ard** (``--methods ard``): ``kernelselect.select_kernel(X, y, kernel="ard")``
  with its defaults (timed in its two steps: the isotropic defaults, then the
  guarded search), and in the same record every candidate of the guard study — the
  unguarded optimum of a search on all rows, the mean of the nested fold optima, the
  other objective — each scored. (The records of the committed report were made
  while the shipped rule still ran the search on all rows before the nested check, so
  their ``time_ard`` includes it; the guard's fold optima, hence every candidate's
  choice, are the same.)
* **gp** (``--methods gp``): scikit-learn's ``GaussianProcessRegressor`` with
  ``ConstantKernel·RBF(length_scale=ones(d)) + WhiteKernel`` (one length scale per
  feature), ``n_restarts_optimizer=2``, ``normalize_y=True``, fitted to the real
  target (regression) or to the ±1 labels (binary: the sign of the posterior mean is
  the class — regression on the labels, the same model as the kernel ridge machines
  scored here, rather than the Laplace-approximate classifier). Run where its
  gradient tensor (n × n × (d + 2) float64) stays under ``--gp-max-bytes``.
* Score of every choice: test accuracy (binary; Δ in percentage points) or test MSE /
  training variance of y (regression) of kernel ridge regression (no intercept)
  refitted at the chosen kernel and ridge — the scorer of ``defaults_quality.py``;
  for an ARD kernel the features are scaled by √γ_k first. The GP is scored with its
  own posterior mean.
* Times are wall seconds of single-threaded processes (OMP/OPENBLAS_NUM_THREADS=1)
  on a shared 2-core machine; every record holds the 1-minute load average before
  and after. The speed comparison against the GP is made in one process, set by set
  (``--methods speed``).

Records go to ``<out>/ard_quality_raw.jsonl`` (one line per dataset, split and
method); reruns skip what is there; ``--report-only`` rebuilds the report.

Usage
-----
    python studies/ard_quality.py --methods gp
    python studies/ard_quality.py --methods ard
    python studies/ard_quality.py --methods speed --datasets abalone,cadata
    python studies/ard_quality.py --archive        # the working .jsonl into its .gz
    python studies/ard_quality.py --report-only
"""

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np

import _common as C

RAW = "ard_quality_raw.jsonl"
#: the guard rule select_kernel(kernel="ard") ships (chosen on half A, see the report)
SHIPPED = "bagged_nested"


def load_average():
    return [round(v, 2) for v in os.getloadavg()]


def krr_score(Xtr, ytr, Xte, yte, task, gamma, alpha):
    """KRR refitted at (γ, α); a vector γ scales the features by √γ (γ = 1 then)."""
    gamma = np.asarray(gamma, dtype=float)
    if gamma.ndim == 0:
        return C.test_score(Xtr, ytr, Xte, yte, task, float(gamma), float(alpha))
    s = np.sqrt(gamma)
    return C.test_score(Xtr * s, ytr, Xte * s, yte, task, 1.0, float(alpha))


# --------------------------------------------------------------------------- GP


def gp_fit_predict(Xtr, ytr, Xte, task, seed):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    d = Xtr.shape[1]
    kernel = ConstantKernel(1.0) * RBF(length_scale=np.ones(d)) + WhiteKernel(0.1)
    target = ytr if task == "regression" else np.where(ytr == np.unique(ytr)[1], 1.0, -1.0)
    gp = GaussianProcessRegressor(kernel=kernel, n_restarts_optimizer=2, normalize_y=True,
                                  random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp.fit(Xtr, target)
    return gp, gp.predict(Xte)


def gp_score(pred, yte, task, ytr):
    if task == "regression":
        return float(np.mean((pred - yte) ** 2))
    classes = np.unique(ytr)
    return float(np.mean(np.where(pred >= 0, classes[1], classes[0]) == yte))


def run_gp(name, task, data, split, args):
    Xtr, ytr, Xte, yte, n_full, seed = C.capped_half_split(name, task, data, split, args.cap,
                                                           args.test_cap)
    n, d = Xtr.shape
    base = dict(dataset=name, task=task, split=split, n_train=n, d=d, n_test=int(Xte.shape[0]))
    need = 8.0 * n * n * (d + 2)
    if need > args.gp_max_bytes:
        return [dict(base, method="gp", skipped=f"gradient tensor {need / 2**30:.1f} GiB")]
    load0 = load_average()
    t0 = time.perf_counter()
    gp, pred = gp_fit_predict(Xtr, ytr, Xte, task, seed)
    seconds = time.perf_counter() - t0
    params = gp.kernel_.get_params()
    ls = np.atleast_1d(params["k1__k2__length_scale"])
    return [dict(base, method="gp", score=gp_score(pred, yte, task, ytr), time=seconds,
                 load=[load0, load_average()], length_scale=ls.tolist(),
                 noise=float(params["k2__noise_level"]),
                 log_marginal_likelihood=float(gp.log_marginal_likelihood_value_))]


# --------------------------------------------------------------------------- ARD


def run_ard(name, task, data, split, args):
    """The isotropic defaults, then the per-feature search from them (what
    ``select_kernel(X, y, kernel="ard")`` does, in its two steps so that each is timed
    and every guard candidate is scored on the same search)."""
    import kernelselect
    from kernelselect.selection import _ard_search
    from kernelselect.selection._ard_select import select_ard

    Xtr, ytr, Xte, yte, n_full, seed = C.capped_half_split(name, task, data, split, args.cap,
                                                           args.test_cap)
    n, d = Xtr.shape
    base = dict(dataset=name, task=task, split=split, n_train=n, d=d, n_test=int(Xte.shape[0]))
    load0 = load_average()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        iso = kernelselect.select_kernel(Xtr, ytr, random_state=seed)
        t_iso = time.perf_counter() - t0
    # Xtr is standardised on the training half already: select_kernel's standardisation
    # leaves it unchanged (to rounding), and ARD works on the same matrix
    Xw = kernelselect.selection.standardize_columns(Xtr)
    t0 = time.perf_counter()
    res = select_ard(Xw, ytr, isotropic=iso, random_state=seed)       # guarded, as shipped
    t_ard = time.perf_counter() - t0
    free = select_ard(Xw, ytr, isotropic=iso, random_state=seed, guard="none")
    info = res.details["ard"]
    g0, a0 = iso.best_gamma, iso.best_alpha
    opt = free.details["ard"]["optimum"]
    guard = info["guard"]
    scores = {"iso": krr_score(Xtr, ytr, Xte, yte, task, g0, a0),
              "ard_raw": krr_score(Xtr, ytr, Xte, yte, task, opt["gamma"], opt["alpha"])}
    # bagged: the mean of the fold optima in (log γ, log α per point), whether kept or not
    th = np.array(guard["fold_thetas"])
    part = n - n / guard["folds"]
    bag_gamma = np.exp(th[:, :-1].mean(axis=0))
    bag_alpha = float(np.exp(th[:, -1].mean() + np.log(n / part)))
    scores["ard_bag"] = krr_score(Xtr, ytr, Xte, yte, task, bag_gamma, bag_alpha)
    # the other objective (k-fold ↔ leave-one-out) on the same exact matrix, unguarded
    other = "loo" if info["objective"] == "kfold" else "kfold"
    variant = {}
    if info["engine"] == "exact":
        Y = res_targets(ytr, task)
        prob = _ard_search.make_problem(Xw, Y, other, None)
        o2 = _ard_search.optimise(prob, g0, a0)
        variant = dict(objective=other, gamma=o2.gamma.tolist(), alpha=o2.alpha,
                       value=o2.value, seconds=o2.seconds, evaluations=o2.evaluations)
        scores["ard_raw_" + other] = krr_score(Xtr, ytr, Xte, yte, task, o2.gamma, o2.alpha)
    rec = dict(base, method="ard", scores=scores,
               score=krr_score(Xtr, ytr, Xte, yte, task, res.best_gamma, res.best_alpha),
               time_iso=t_iso, time_ard=t_ard, time=t_iso + t_ard,
               load=[load0, load_average()], iso=dict(gamma=g0, alpha=a0,
                                                       approximation=iso.details.get("approximation")),
               ard={k: v for k, v in info.items() if k not in ("bounds", "landmarks")},
               unguarded=opt, bag=dict(gamma=bag_gamma.tolist(), alpha=bag_alpha),
               variant=variant)
    return [rec]


def res_targets(y, task):
    """The ±1 / one-vs-rest / real target columns select_kernel builds (the study's
    targets are in the same class order)."""
    return C.targets(y, task)[0]


# --------------------------------------------------------------------------- α: joint or path


def profile_optimise(problem, gamma0, alpha0):
    """The inner-path alternative: L-BFGS-B over log γ only, each evaluation choosing α
    by a bounded scalar search of the criterion over log α on one factorisation per γ
    vector (an eigendecomposition of the exact matrix, or the Nyström factor), then the
    gradient in log γ at that α (the envelope theorem)."""
    import scipy.optimize

    from kernelselect.primitives import _ard
    from kernelselect.selection import _ard_search
    from kernelselect.criteria import evaluate_criterion, get_criterion
    from kernelselect.operators.dense import Exact

    d, n = problem.d, problem.n
    box = _ard_search.bounds(problem, gamma0)
    la_lo, la_hi = box[-1]
    state = {"alpha": alpha0, "evals": 0, "inner": 0}
    crit = get_criterion("ekfold" if problem.objective == "kfold" else "eloo")
    y = problem.Y[:, 0]

    def inner(log_gamma):
        Xs = problem.X * np.sqrt(np.exp(log_gamma))
        if problem.landmarks is None:
            ex = Exact(method="dense")
            st = ex.prepare(Xs, y, kernel="gaussian", random_state=0, workers=1)
            op = ex.build(Xs, y, 1.0, kernel="gaussian", state=st, workers=1)

            def f(la):
                state["inner"] += 1
                v = evaluate_criterion(crit, op, y, [np.exp(la)], loss="squared")[0]
                return np.log(v) if np.isfinite(v) and v > 0 else 1e300
        else:
            F = _ard.nystrom_factor(Xs, Xs[problem.landmarks], problem.landmarks,
                                    problem.landmarks.size, problem.eigen_floor)

            def f(la):
                state["inner"] += 1
                v = _ard.loo_path_nystrom(F, problem.Y, np.array([np.exp(la)]))[0]
                return np.log(v) if np.isfinite(v) and v > 0 else 1e300
        c = np.log(state["alpha"])
        r = scipy.optimize.minimize_scalar(f, bounds=(max(la_lo, c - 3 * np.log(10)),
                                                      min(la_hi, c + 3 * np.log(10))),
                                           method="bounded", options={"xatol": 1e-3})
        return float(r.x)

    def fun(log_gamma):
        state["evals"] += 1
        la = inner(log_gamma)
        state["alpha"] = float(np.exp(la))
        try:
            v, g = problem.evaluate(np.r_[log_gamma, la])
        except _ard.EvaluationError:
            return 1e300, np.zeros(d)
        return float(np.log(v)), g[:d] / v

    t0 = time.perf_counter()
    res = scipy.optimize.minimize(fun, np.full(d, np.log(gamma0)), jac=True, method="L-BFGS-B",
                                  bounds=box[:d], options={"maxiter": _ard_search.MAX_ITER,
                                                           "maxfun": _ard_search.MAX_EVALUATIONS,
                                                           "ftol": _ard_search.FTOL,
                                                           "gtol": _ard_search.GTOL})
    la = inner(res.x)
    v, _ = problem.evaluate(np.r_[res.x, la], grad=False)
    return dict(gamma=np.exp(res.x).tolist(), alpha=float(np.exp(la)), value=float(v),
                evaluations=state["evals"], inner=state["inner"],
                seconds=time.perf_counter() - t0)


def run_alpha(name, task, data, split, args):
    """Joint (log γ, log α) search against the inner α path, same start, same stand-in
    (exact up to n = 1000; a 200-landmark Nyström stand-in too), unguarded."""
    import kernelselect
    from kernelselect.selection import _ard_search

    Xtr, ytr, Xte, yte, n_full, seed = C.capped_half_split(name, task, data, split, args.cap,
                                                           args.test_cap)
    n, d = Xtr.shape
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        iso = kernelselect.select_kernel(Xtr, ytr, random_state=seed)
    Xw = kernelselect.selection.standardize_columns(Xtr)
    Y = res_targets(ytr, task)
    out = []
    rng = np.random.default_rng(seed)
    engines = [("exact", None)]
    if n >= 400:
        engines.append(("nystrom", np.sort(rng.choice(n, 200, replace=False))))
    for engine, marks in engines:
        objective = "kfold" if engine == "exact" and n <= 400 else "loo"
        prob = _ard_search.make_problem(Xw, Y, objective, marks, workers=1)
        joint = _ard_search.optimise(prob, iso.best_gamma, iso.best_alpha)
        prof = profile_optimise(prob, iso.best_gamma, iso.best_alpha)
        out.append(dict(dataset=name, task=task, split=split, method=f"alpha/{engine}",
                        n_train=n, d=d, objective=objective, load=load_average(),
                        joint=dict(value=joint.value, evaluations=joint.evaluations,
                                   seconds=joint.seconds, alpha=joint.alpha,
                                   score=krr_score(Xtr, ytr, Xte, yte, task, joint.gamma,
                                                   joint.alpha)),
                        path=dict(prof, score=krr_score(Xtr, ytr, Xte, yte, task,
                                                        prof["gamma"], prof["alpha"]))))
    return out


# --------------------------------------------------------------------------- speed


def run_speed(name, task, data, split, args):
    """select_kernel(X, y, kernel="ard") and the GP on the same rows, one after the
    other in this process (ARD first), with the load before and after each."""
    import kernelselect

    Xtr, ytr, Xte, yte, n_full, seed = C.capped_half_split(name, task, data, split, args.cap,
                                                           args.test_cap)
    loads = [load_average()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        res = kernelselect.select_kernel(Xtr, ytr, kernel="ard", random_state=seed, workers=1)
        t_ard = time.perf_counter() - t0
    loads.append(load_average())
    t0 = time.perf_counter()
    _, pred = gp_fit_predict(Xtr, ytr, Xte, task, seed)
    t_gp = time.perf_counter() - t0
    loads.append(load_average())
    info = res.details["ard"]
    return [dict(dataset=name, task=task, split=split, method="speed", n_train=int(Xtr.shape[0]),
                 d=int(Xtr.shape[1]), ard_seconds=t_ard, gp_seconds=t_gp, ratio=t_ard / t_gp,
                 ard_parts=dict(search=info["optimum"]["seconds"],
                                guard=info["guard"].get("seconds"), total=info["seconds"]),
                 kept=info["kept"], gp_score=gp_score(pred, yte, task, ytr),
                 ard_score=krr_score(Xtr, ytr, Xte, yte, task, res.best_gamma, res.best_alpha),
                 load=loads)]


# --------------------------------------------------------------------------- main


RUNNERS = {"gp": run_gp, "ard": run_ard, "alpha": run_alpha, "speed": run_speed}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=C.DATA)
    p.add_argument("--out-dir", type=Path, default=C.RESULTS)
    p.add_argument("--datasets", default=None)
    p.add_argument("--tasks", default="regression,binary")
    p.add_argument("--splits", default="0,1")
    p.add_argument("--small-splits", default="2,3,4",
                   help="extra splits for sets whose training half has at most --small rows")
    p.add_argument("--small", type=int, default=1000)
    p.add_argument("--methods", default="ard")
    p.add_argument("--cap", type=int, default=1000)
    p.add_argument("--test-cap", type=int, default=10000)
    p.add_argument("--gp-max-bytes", type=float, default=2**30)
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--archive", action="store_true",
                   help="write every record of <out>/ard_quality_raw.jsonl into its .gz")
    args = p.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.archive:
        archive(args.out_dir / RAW)
        return
    if args.report_only:
        report(args.out_dir)
        return
    raw = args.out_dir / RAW
    done = {(r["dataset"], r["split"], r["method"].split("/")[0]) for r in C.read_jsonl(raw)}
    loaded = {}
    for name, task, split, method in _work(args):
        if (name, split, method) in done:
            continue
        if name not in loaded:
            loaded.clear()
            loaded[name] = C.load_data(name, args.data_dir)
        t0 = time.perf_counter()
        try:
            recs = RUNNERS[method](name, task, loaded[name], split, args)
        except Exception as exc:  # one failing set is a result, not a stop
            recs = [dict(dataset=name, task=task, split=split, method=f"error/{method}",
                         error=f"{type(exc).__name__}: {exc}")]
        for r in recs:
            C.append_record(raw, r)
        C.log(f"{name} split {split} {method}: {time.perf_counter() - t0:.1f} s "
              + " ".join(f"{r['method']}={r.get('score', r.get('error'))}" for r in recs))


def _work(args):
    """(set, task, split, method) in the order they run: cheap sets first, 5 splits on
    sets whose training half has at most ``--small`` rows."""
    tasks = args.tasks.split(",")
    sets = [s for s in C.list_data(args.data_dir) if s[1] in tasks
            and (not args.datasets or s[0] in args.datasets.split(","))]
    sets.sort(key=lambda s: min(s[2] // 2, args.cap) * s[3] ** 0.5)
    splits = [int(v) for v in args.splits.split(",")]
    extra = [int(v) for v in args.small_splits.split(",")] if args.small_splits else []
    return [(name, task, split, method) for name, task, n, _ in sets
            for split in splits + (extra if n // 2 <= args.small else [])
            for method in args.methods.split(",")]


# --------------------------------------------------------------------------- report


#: the candidate rules of the guard study: name → (description, rule(record) → score key)
def _guard_candidates():
    def unguarded(r):
        return "ard_raw"

    def nested(margin):
        def rule(r):
            g = r["ard"]["guard"]
            return "ard_raw" if g["ard"] < (1.0 - margin) * g["isotropic"] else "iso"
        return rule

    def vote(r):
        g = r["ard"]["guard"]
        wins = sum(a < i for a, i in zip(g["fold_ard"], g["fold_isotropic"]))
        return "ard_raw" if 2 * wins > len(g["fold_ard"]) else "iso"

    def first_fold(r):
        g = r["ard"]["guard"]
        return "ard_raw" if g["fold_ard"][0] < g["fold_isotropic"][0] else "iso"

    def bagged(r):
        g = r["ard"]["guard"]
        return "ard_bag" if g["ard"] < g["isotropic"] else "iso"

    def other(r):
        return next((k for k in r["scores"] if k.startswith("ard_raw_")), "ard_raw")

    return {
        "isotropic": ("the isotropic defaults (the start)", lambda r: "iso"),
        "unguarded": ("the optimum, always", unguarded),
        "other_objective": ("the optimum of the other objective (k-fold ↔ leave-one-out), "
                            "always", other),
        "nested": ("nested 5-fold check: the optimum if its held-out error is lower", nested(0.0)),
        "nested_5pc": ("nested check with a 5 % margin", nested(0.05)),
        "vote": ("the optimum if it wins in a majority of the nested folds", vote),
        "holdout": ("the first nested fold alone decides (one search on (k−1)/k of the rows)",
                    first_fold),
        "bagged_nested": ("the mean of the 5 fold optima (log scale) if the nested check "
                          "passes", bagged),
    }


def halves(names):
    """Two halves of the data sets, fixed by name (crc32 parity), for tuning a rule on
    one and confirming it on the other."""
    import zlib

    return ({n for n in names if zlib.crc32(n.encode()) % 2 == 0},
            {n for n in names if zlib.crc32(n.encode()) % 2 == 1})


def _per_set(recs_by, cv_by, names, task, pick):
    """Per set: (mean score of the picked choice, mean CV score) over the splits that
    have both."""
    out = {}
    for name in names:
        pairs = [(r["scores"][pick(r)], cv_by[(name, r["split"])]["score"])
                 for r in recs_by.get(name, []) if (name, r["split"]) in cv_by]
        if pairs:
            a, c = np.mean(pairs, axis=0)
            out[name] = (float(a), float(c))
    return out


def _summary(per_set, task):
    """(headline, worst, worst set): geometric-mean NMSE ratio (regression) or mean Δ
    accuracy in points (binary)."""
    if not per_set:
        return float("nan"), float("nan"), "–"
    if task == "regression":
        ratios = {k: a / c for k, (a, c) in per_set.items()}
        worst = max(ratios, key=ratios.get)
        return float(np.exp(np.mean(np.log(list(ratios.values()))))), ratios[worst], worst
    deltas = {k: 100 * (a - c) for k, (a, c) in per_set.items()}
    worst = min(deltas, key=deltas.get)
    return float(np.mean(list(deltas.values()))), deltas[worst], worst


def _fmt_summary(task, head, worst, where):
    if task == "regression":
        return f"{head:.3f} | {worst:.3f} ({where})"
    return f"{head:+.2f} | {worst:+.2f} ({where})"


def _gp_summary(ard, gp, cv_by, names, task, guarded):
    """The GP against CV and against the guarded ARD on the splits the GP ran."""
    vs_cv, vs_gp, sets = [], [], []
    for name in names:
        if name not in gp:
            continue
        by_split = {r["split"]: r for r in ard[name]}
        pairs = [(r["score"], by_split[r["split"]]["scores"][guarded(by_split[r["split"]])],
                  cv_by[(name, r["split"])]["score"]) for r in gp[name]
                 if r["split"] in by_split and (name, r["split"]) in cv_by]
        if not pairs:
            continue
        g, a, c = np.mean(pairs, axis=0)
        sets.append(name)
        vs_cv.append(g / c if task == "regression" else 100 * (g - c))
        vs_gp.append(a / g if task == "regression" else 100 * (a - g))
    if not sets:
        return ""
    if task == "regression":
        return (f"GP (ARD RBF + white noise, 2 restarts; split 0 on the sets of 2 splits), on "
                f"{len(sets)} sets: test NMSE ratio to CV {np.exp(np.mean(np.log(vs_cv))):.3f} "
                f"(geometric mean); guarded ARD / GP on the same splits: geometric mean "
                f"{np.exp(np.mean(np.log(vs_gp))):.3f}, arithmetic mean {np.mean(vs_gp):.3f}, "
                f"range {min(vs_gp):.3f}–{max(vs_gp):.3f}.")
    return (f"GP on ±1 labels (regression on the labels, sign of the posterior mean; split 0), "
            f"on {len(sets)} sets with d ≤ 40: Δ accuracy vs CV {np.mean(vs_cv):+.2f} points "
            f"(mean); guarded ARD − GP on the same splits {np.mean(vs_gp):+.2f} points.")


def _choose_guard(ard, cv_by, tasks, cands):
    """The rule fixed before the last records came in: on half A, among the candidates
    whose binary mean Δ vs CV is at least the isotropic start's, the one with the lowest
    regression geometric-mean ratio to CV; confirmed on half B if it beats the
    isotropic start there on regression and is within 0.1 point of it on binary."""
    score = {}
    for half_index in (0, 1):
        for key, (_, pick) in cands.items():
            row = []
            for task in ("regression", "binary"):
                names = sorted(n for n in ard if tasks.get(n) == task)
                group = sorted(halves(names)[half_index])
                row.append(_summary(_per_set(ard, cv_by, group, task, pick), task)[0])
            score[(half_index, key)] = row
    floor = score[(0, "isotropic")][1]
    eligible = [k for k in cands if k != "isotropic" and score[(0, k)][1] >= floor]
    if not eligible:
        return ["No guard candidate matched the isotropic start on binary sets of half A.", ""]
    best = min(eligible, key=lambda k: score[(0, k)][0])
    reg_b, bin_b = score[(1, best)]
    iso_b = score[(1, "isotropic")]
    confirmed = reg_b < iso_b[0] and bin_b >= iso_b[1] - 0.1
    return ["## The guard chosen", "",
            f"On half A the rule is **{best}** ({cands[best][0]}): regression "
            f"{score[(0, best)][0]:.3f} (isotropic {score[(0, 'isotropic')][0]:.3f}), binary "
            f"{score[(0, best)][1]:+.2f} (isotropic {floor:+.2f}). On half B: regression "
            f"{reg_b:.3f} against {iso_b[0]:.3f}, binary {bin_b:+.2f} against {iso_b[1]:+.2f}: "
            + ("confirmed." if confirmed else "not confirmed."), ""]


def _shipped_seconds(r):
    """Seconds of the shipped rule for an ARD record: the isotropic selection plus the
    nested searches (``time`` of the committed records also holds a search on all rows,
    which the shipped rule runs only beyond the guard's range)."""
    guard = r["ard"]["guard"]
    return r["time_iso"] + guard["seconds"] if "seconds" in guard else r["time"]


def _policy_section(ard, tasks, cands):
    """The default-policy evidence: the guarded ARD against the isotropic defaults, per
    half, with the time it costs."""
    lines = ["## Default policy: the shipped ARD rule against the isotropic defaults", "",
             "Per half of the sets (A, B as above): regression, geometric mean over sets of "
             "the test NMSE ratio shipped ARD / isotropic defaults and the sets where it is "
             "below 0.95 or above 1.05; binary, mean Δ accuracy (points) and the sets beyond "
             "±1 point; the median time ratio of the shipped rule (isotropic selection + nested "
             "searches) to the isotropic selection.", "",
             "| task | half | sets | headline | better | worse | kept (splits) | median time ratio |",
             "|---|---|---:|---:|---|---|---:|---:|"]
    guarded = cands[SHIPPED][1]
    for task in ("regression", "binary"):
        names = sorted(n for n in ard if tasks.get(n) == task)
        for label, group in zip(("A", "B"), halves(names)):
            vals, better, worse, kept, ratio = [], [], [], [0, 0], []
            for name in sorted(group):
                rs = ard[name]
                g = np.mean([r["scores"][guarded(r)] for r in rs])
                i = np.mean([r["scores"]["iso"] for r in rs])
                v = g / i if task == "regression" else 100 * (g - i)
                vals.append(v)
                if (task == "regression" and v < 0.95) or (task != "regression" and v > 1):
                    better.append(name)
                if (task == "regression" and v > 1.05) or (task != "regression" and v < -1):
                    worse.append(name)
                kept[0] += sum(r["ard"]["kept"] for r in rs)
                kept[1] += len(rs)
                ratio += [_shipped_seconds(r) / r["time_iso"] for r in rs]
            if not vals:
                continue
            head = (f"{np.exp(np.mean(np.log(vals))):.3f}" if task == "regression"
                    else f"{np.mean(vals):+.2f}")
            lines.append(f"| {task} | {label} | {len(vals)} | {head} | {', '.join(better) or '–'} "
                         f"| {', '.join(worse) or '–'} | {kept[0]}/{kept[1]} | "
                         f"{np.median(ratio):.1f} |")
    return lines + [""]


def archive(path):
    """Every record of ``path`` and its archive into ``path.gz`` (later lines win per
    dataset, split and method), sorted, with a fixed gzip header."""
    import gzip
    import json

    recs = {}
    for r in C.read_jsonl(path):
        recs[(r["dataset"], r["method"], r["split"])] = r
    text = "".join(json.dumps(recs[k], separators=(",", ":")) + "\n" for k in sorted(recs))
    with open(str(path) + ".gz", "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
            fh.write(text.encode())
    print(f"{len(recs)} records in {path}.gz")


def report(out_dir):
    recs = C.read_jsonl(out_dir / RAW)
    cv_recs = C.read_jsonl(C.RESULTS / "defaults_quality_raw.jsonl.gz")
    cv_by = {(r["dataset"], r["split"]): r for r in cv_recs if r["method"] == "cv"}
    ard = {}
    for r in recs:
        if r["method"] == "ard" and "scores" in r:
            ard.setdefault(r["dataset"], []).append(r)
    gp = {}
    for r in recs:
        if r["method"] == "gp" and "score" in r:
            gp.setdefault(r["dataset"], []).append(r)
    tasks = {r["dataset"]: r["task"] for r in recs if "task" in r}
    cands = _guard_candidates()
    lines = ["# Per-feature bandwidths (ARD) against isotropic 5-fold CV and a Gaussian process",
             "", "Generated by `studies/ard_quality.py --report-only` from "
             "`ard_quality_raw.jsonl.gz` (protocol in the script's docstring); the CV "
             "records are those of `defaults_quality_raw.jsonl.gz` (same rows).", ""]
    for task in ("regression", "binary"):
        names = sorted(n for n in ard if tasks.get(n) == task)
        if not names:
            continue
        a_half, b_half = halves(names)
        unit = "test NMSE ratio to CV (geometric mean over sets)" if task == "regression" \
            else "Δ test accuracy vs CV, points (mean over sets)"
        lines += [f"## {task}: {len(names)} sets", "",
                  f"Headline: {unit}; worst set beside it. Halves A and B: the sets split by "
                  "name (crc32 parity), A to choose a rule, B to confirm it.", "",
                  "| rule | all sets | worst (all) | half A | worst (A) | half B | worst (B) |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for key, (desc, pick) in cands.items():
            cells = []
            for group in (names, sorted(a_half), sorted(b_half)):
                h, w, where = _summary(_per_set(ard, cv_by, group, task, pick), task)
                cells.append(_fmt_summary(task, h, w, where))
            lines.append(f"| {key}: {desc} | " + " | ".join(cells) + " |")
        lines += ["", _gp_summary(ard, gp, cv_by, names, task, cands[SHIPPED][1])]
        lines += ["", "| set | n_train | d | splits | CV | isotropic | unguarded | shipped "
                  "(bagged, guarded) | kept | other objective | GP (splits) | GP s | "
                  "ARD s (iso + nested searches) |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name in names:
            rs = ard[name]
            cvs = [cv_by[(name, r["split"])]["score"] for r in rs if (name, r["split"]) in cv_by]
            cell = (lambda v: f"{v:.4f}") if task == "regression" else (lambda v: f"{100 * v:.2f}")

            def mean_of(pick):
                return cell(np.mean([r["scores"][pick(r)] for r in rs]))
            g = gp.get(name)
            gp_cells = (f"{cell(np.mean([r['score'] for r in g]))} ({len(g)}) | "
                        f"{np.median([r['time'] for r in g]):.0f}" if g else "– | –")
            lines.append(
                f"| {name} | {rs[0]['n_train']} | {rs[0]['d']} | {len(rs)} | "
                f"{cell(np.mean(cvs)) if cvs else '–'} | {mean_of(cands['isotropic'][1])} | "
                f"{mean_of(cands['unguarded'][1])} | {mean_of(cands[SHIPPED][1])} | "
                f"{sum(r['ard']['kept'] for r in rs)}/{len(rs)} | "
                f"{mean_of(cands['other_objective'][1])} | {gp_cells} | "
                f"{np.median([_shipped_seconds(r) for r in rs]):.1f} |")
        lines.append("")
    lines += _choose_guard(ard, cv_by, tasks, cands)
    lines += _policy_section(ard, tasks, cands)
    speed = [r for r in recs if r["method"] == "speed"]
    if speed:
        lines += ["## Time against the GP at n = 1000", "",
                  "`select_kernel(X, y, kernel=\"ard\")` (isotropic start, the searches on "
                  "3 nested folds of the Nyström stand-in, their mean optimum when they "
                  "beat the isotropic kernel) and the GP (2 restarts) on the same training "
                  "half, one after the other in one single-threaded process; 1-minute load "
                  "average before ARD, between, after the GP.", "",
                  "| set | n | d | ARD s | GP s | ratio | kept | load |",
                  "|---|---:|---:|---:|---:|---:|---|---|"]
        for r in sorted(speed, key=lambda r: r["dataset"]):
            lines.append(f"| {r['dataset']} | {r['n_train']} | {r['d']} | {r['ard_seconds']:.1f} | "
                         f"{r['gp_seconds']:.0f} | {r['ratio']:.3f} | {r['kept']} | "
                         + " / ".join(f"{lv[0]:.1f}" for lv in r["load"]) + " |")
        ratios = [r["ratio"] for r in speed]
        lines += ["", f"Median ratio {np.median(ratios):.3f}, largest {max(ratios):.3f}.", ""]
    alpha = [r for r in recs if r["method"].startswith("alpha/")]
    if alpha:
        lines += ["## α jointly or on an inner path", "",
                  "Same start, same stand-in, unguarded: L-BFGS-B over (log γ, log α) "
                  "against L-BFGS-B over log γ with α chosen per evaluation by a bounded "
                  "scalar search (one factorisation per γ vector: an eigendecomposition of "
                  "the exact matrix, or the Nyström factor) and the envelope gradient.", "",
                  "| set | stand-in | criterion joint / path | evaluations joint / path "
                  "(inner α) | seconds joint / path |", "|---|---|---:|---:|---:|"]
        for r in sorted(alpha, key=lambda r: (r["dataset"], r["method"])):
            j, p = r["joint"], r["path"]
            lines.append(f"| {r['dataset']} | {r['method'].split('/')[1]} | {j['value']:.4g} / "
                         f"{p['value']:.4g} | {j['evaluations']} / {p['evaluations']} "
                         f"({p['inner']}) | {j['seconds']:.1f} / {p['seconds']:.1f} |")
        lines.append("")
    (out_dir / "ard_quality.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
