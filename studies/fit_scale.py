"""KernelSelectionCV() with no arguments at large n: in memory and on a Dask cluster.

``memory``: n rows × 10 features (synthetic: X ~ N(0, I), y = sin(Xw) + 0.1·noise with
a fixed w), ``KernelSelectionCV(random_state=0).fit(X, y)`` then ``predict`` on 10⁴ new
rows; the seconds of each, the refit's approximation, centres, iterations and residual,
the test NMSE, and the process's peak RSS (VmHWM, data generation included).
The predictions are kept in ``/tmp`` for the ``dask`` part. ``memory --centres M``:
``KernelSelectionRegressor(KernelRidgeRegressor(kernel="gaussian",
approximation=NystroemPCG(n_centres=M)))`` instead, the same selection with the refit's
centres given (the old default's m, to compare times at its test error).

``dask``: the same rows written to a ``.npy`` file (features and target as one array),
read by ``kernelselect.datasets.open_chunked`` as row-chunked Dask arrays on a
``LocalCluster`` of 2 single-threaded workers, then the same fit and ``predict`` on the
same new rows as a Dask array; the largest difference from the in-memory predictions,
the client's peak RSS and each worker's (the ``.npy`` file is written by a child
process, so that the client's peak is the fit's).

``dask --gamma G --alpha A``: the refit alone at a given (γ, α), for n where the
selection outlasts a run (about 10³ s at 10⁶ rows on 2 cores, so hours at 10⁷): the
pipeline ``KernelSelectionCV`` builds, Standardizer then
``KernelRidgeRegressor(approximation="auto")``, whose centres beyond 10⁶ rows are the
memory cap's with or without the selection's effective dimension.

One JSON line per run in ``results/fit_scale_raw.jsonl``; ``report`` writes
``results/fit_scale.md``. Each part runs in its own process:

    python studies/fit_scale.py memory --n 200000
    python studies/fit_scale.py memory --n 200000 --centres 11454
    python studies/fit_scale.py dask --n 200000
    python studies/fit_scale.py dask --n 10000000 --gamma 0.216 --alpha 0.316 --max-iter 1
    python studies/fit_scale.py dask --n 1000000 --checkpoint /tmp/run.ckpt
    python studies/fit_scale.py report

``--checkpoint PATH``: ``KernelSelectionCV(checkpoint=PATH)``; killed, the same command
resumes, and its record says what it read back.

``dask --kill-worker S [S …]``: a worker process is killed (SIGKILL, the two in turn)
S seconds after the fit starts; its nanny starts another, and the fit goes on:

    python studies/fit_scale.py dask --n 1000000 --kill-worker 100 420
"""

import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import _common as C

RAW = C.RESULTS / "fit_scale_raw.jsonl"
REPORT = C.RESULTS / "fit_scale.md"
D = 10
N_TEST = 10_000
TMP = Path(tempfile.gettempdir()) / "kernelselect_fit_scale"


def synthetic(n, seed=0):
    rng = np.random.default_rng(seed)
    w = np.random.default_rng(12345).standard_normal(D) / np.sqrt(D)
    X = rng.standard_normal((n, D))
    y = np.sin(2.0 * X @ w) + 0.1 * rng.standard_normal(n)
    return X, y


def load():
    return [round(x, 2) for x in os.getloadavg()]


def peak_rss_gb():
    """This process's peak resident set (VmHWM: unlike ru_maxrss, not inherited from
    the parent that started a worker)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def progress_of(args):
    """``progress=`` for the estimators: the delay in seconds, False when negative."""
    return False if args.progress < 0 else args.progress


def bound_iterations(rec, max_iter):
    """A bounded run: the refit stops after ``max_iter`` conjugate-gradient iterations
    (peak memory is reached before the first: the iterations allocate (m, t) vectors)."""
    if not max_iter:
        return
    from kernelselect.models import _fit_policy

    plain = _fit_policy.machine_approximation

    def bounded(*a, **k):
        recipe = plain(*a, **k)
        if hasattr(recipe, "max_iter"):
            recipe.max_iter = max_iter
        return recipe

    _fit_policy.machine_approximation = bounded
    import kernelselect.models._machines as machines
    import kernelselect.models._selection_cv as scv

    scv.machine_approximation = bounded
    machines.machine_approximation = bounded
    rec["max_iter"] = max_iter


def refit_seconds(model):
    """The refit's seconds per phase (the first α's) and per iteration."""
    seconds = model.details.get("seconds")
    if not isinstance(seconds, list):
        return None
    out = dict(seconds[0])
    iters = model.details.get("iterations")
    if isinstance(iters, list) and iters and iters[0]:
        out["per_iteration"] = out.get("iterations", float("nan")) / iters[0]
    return out


class _GivenPoint:
    """The refit of ``KernelSelectionCV()`` alone, at a given (γ, α): the same
    Standardizer → KernelRidgeRegressor(approximation="auto", random_state=0) pipeline,
    for n where the selection outlasts a run (at 10⁷ rows on 2 cores it takes hours;
    beyond 10⁶ rows the automatic centres are the memory cap's either way)."""

    def __init__(self, gamma, alpha):
        self.best_params_ = {"gamma": gamma, "alpha": alpha}

    def fit(self, X, y):
        from sklearn.pipeline import Pipeline

        from kernelselect import KernelRidgeRegressor, Standardizer

        machine = KernelRidgeRegressor(random_state=0, **self.best_params_)
        self.best_estimator_ = Pipeline([("standardizer", Standardizer()),
                                         ("machine", machine)]).fit(X, y)
        return self

    def predict(self, X):
        return self.best_estimator_.predict(X)


def selection_levels(sel):
    """Each level the selection searched: its approximation, rows (None: all), γ
    evaluated and seconds (the sum of its operators' timings), so that a record says
    where the selection's time went."""
    res = getattr(sel, "selection_", None)
    if res is None:
        return None
    return [{"approximation": lv.approximation, "n_rows": getattr(lv, "n_rows", None),
             "gammas": int(np.size(lv.timings)), "seconds": float(np.sum(lv.timings))}
            for lv in res.levels]


def refit_summary(sel):
    if isinstance(sel, _GivenPoint):
        m = sel.best_estimator_[-1]
        return {"approximation": m.approximation_, "n_centres": m.n_centres_,
                "n_iter": m.n_iter_, "residual": m.residual_}
    r = sel.selection_.details["refit"]
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in r.items()}


def options(args):
    """The estimator's ``progress`` and ``checkpoint``, each only when asked for, so that
    the study also runs the code of earlier commits (which time the earlier defaults and
    may have neither)."""
    asked = {"progress": progress_of(args), "checkpoint": args.checkpoint}
    return {k: v for k, v in asked.items() if v not in (None, False)}


def resumed(sel):
    """What a checkpointed run read back: the operators it built (none when the whole
    selection was saved) and the iteration its solve continued from."""
    model = sel.best_estimator_[-1].model_
    start = model.details.get("resumed_from")
    return {"operator_builds": sel.selection_.details.get("n_operator_builds"),
            "solve_resumed_from": start, "files": sel.selection_.details.get("checkpoint")}


def memory(args):
    from kernelselect import (KernelRidgeRegressor, KernelSelectionCV,
                              KernelSelectionRegressor, NystroemPCG)

    X, y = synthetic(args.n)
    Xt, yt = synthetic(N_TEST, seed=1)
    rec = {"part": "memory", "n": args.n, "d": D, "load_before": load(),
           "omp_threads": os.environ.get("OMP_NUM_THREADS")}
    bound_iterations(rec, args.max_iter)
    if args.centres:      # the Gaussian selection with the refit's centres given
        rec["part"] = f"memory, {args.centres} centres given"
        sel = KernelSelectionRegressor(KernelRidgeRegressor(
            kernel="gaussian", approximation=NystroemPCG(n_centres=args.centres)),
            random_state=0, progress=progress_of(args))
    else:
        sel = KernelSelectionCV(random_state=0, **options(args))
    t0 = time.perf_counter()
    sel = sel.fit(X, y)
    rec["fit_seconds"] = time.perf_counter() - t0
    rec["selection_seconds"] = sel.selection_.details.get("total_seconds")
    rec["selection_levels"] = selection_levels(sel)
    rec["factors"] = sel.best_estimator_[-1].model_.details.get("factors")
    rec["refit_seconds"] = refit_seconds(sel.best_estimator_[-1].model_)
    rec["sample_rows"] = sel.best_estimator_[-1].model_.details.get("sample_rows")
    if args.checkpoint:
        rec["resumed"] = resumed(sel)
    t0 = time.perf_counter()
    pred = sel.predict(Xt)
    rec["predict_seconds"] = time.perf_counter() - t0
    rec.update(best_params={k: float(v) for k, v in sel.best_params_.items()},
               refit=refit_summary(sel), test_nmse=float(np.mean((pred - yt) ** 2) / np.var(yt)),
               peak_rss_gb=peak_rss_gb(), load_after=load())
    TMP.mkdir(exist_ok=True)
    np.save(TMP / f"memory_pred_{args.n}.npy", pred)
    C.append_record(RAW, rec)
    C.log(rec)


def write_data(args):
    X, y = synthetic(args.n)
    np.save(args.path, np.column_stack([X, y]))


def dask_part(args):
    import dask
    from dask.distributed import Client, LocalCluster

    from kernelselect import KernelSelectionCV
    from kernelselect.datasets import open_chunked

    TMP.mkdir(exist_ok=True)
    path = TMP / f"data_{args.n}.npy"
    if not path.exists():  # in a child process, so that the client's peak RSS is the fit's
        subprocess.run([sys.executable, __file__, "write-data", "--n", str(args.n),
                        "--path", str(path)], check=True)
    Xt, yt = synthetic(N_TEST, seed=1)
    rec = {"part": "dask", "n": args.n, "d": D, "workers": 2, "load_before": load()}
    bound_iterations(rec, args.max_iter)
    rss_before = peak_rss_gb()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      memory_limit=args.worker_memory, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        X, y = open_chunked(str(path), chunk_rows=args.chunk_rows)
        rec["chunks"] = len(X.chunks[0])
        t0 = time.perf_counter()
        if args.kill_worker:
            rec["worker_kills"] = kill_workers(client, args.kill_worker, t0)
        sel = (KernelSelectionCV(random_state=0, **options(args)) if args.gamma is None
               else _GivenPoint(args.gamma, args.alpha)).fit(X, y)
        rec["fit_seconds"] = time.perf_counter() - t0
        import dask.array as da

        t0 = time.perf_counter()
        pred = sel.predict(da.from_array(Xt, chunks=(args.chunk_rows, -1)))
        pred = np.asarray(dask.compute(pred)[0])
        rec["predict_seconds"] = time.perf_counter() - t0
        rec["worker_peak_rss_gb"] = sorted(client.run(peak_rss_gb).values())
        rec["refit_seconds"] = refit_seconds(sel.best_estimator_[-1].model_)
        rec["sample_rows"] = sel.best_estimator_[-1].model_.details.get("sample_rows")
        rec["selection_seconds"] = (None if args.gamma is not None
                                    else sel.selection_.details.get("total_seconds"))
        rec["selection_levels"] = None if args.gamma is not None else selection_levels(sel)
        rec["factors"] = sel.best_estimator_[-1].model_.details.get("factors")
        if args.checkpoint:
            rec["resumed"] = resumed(sel)
    if args.gamma is not None:
        rec["part"] = "dask, refit alone"
    if args.kill_worker:
        rec["part"] = f"dask, {len(args.kill_worker)} workers killed"
    rec.update(best_params={k: float(v) for k, v in sel.best_params_.items()},
               refit=refit_summary(sel), test_nmse=float(np.mean((pred - yt) ** 2) / np.var(yt)),
               client_peak_rss_gb=peak_rss_gb(), client_rss_before_gb=rss_before,
               load_after=load())
    other = TMP / f"memory_pred_{args.n}.npy"
    if other.exists():
        rec["max_abs_diff_memory"] = float(np.max(np.abs(pred - np.load(other))))
    C.append_record(RAW, rec)
    C.log(rec)


def kill_workers(client, seconds, t0):
    """Kill a worker process (SIGKILL, the workers in turn) at each of ``seconds`` after
    ``t0``, from a thread; the returned list fills with what was killed when."""
    kills = []

    def run():
        for k, at in enumerate(sorted(seconds)):
            time.sleep(max(0.0, t0 + at - time.perf_counter()))
            pids = client.run(os.getpid)
            address = sorted(pids)[k % len(pids)]
            os.kill(pids[address], signal.SIGKILL)
            kills.append({"seconds": round(time.perf_counter() - t0, 1), "pid": pids[address]})
            C.log({"killed worker": pids[address], "seconds": kills[-1]["seconds"]})
    threading.Thread(target=run, daemon=True).start()
    return kills


def report(args):
    recs = list(C.read_jsonl(RAW))
    lines = ["# KernelSelectionCV() at large n", "",
             "Generated by `studies/fit_scale.py report` from `fit_scale_raw.jsonl.gz`. "
             "Synthetic data, d = 10; the machine has 2 cores and was shared with other "
             "work during every run (1-minute load average before and after given).", "",
             "| part | n | fit s | predict s (10⁴ rows) | refit | m | iterations | residual | "
             "test NMSE | peak RSS GiB | Dask − memory | load |",
             "|---|---:|---:|---:|---|---:|---:|---:|---:|---|---:|---|"]
    for r in recs:
        f = r["refit"]
        rss = (f"{r['peak_rss_gb']:.2f}" if r["part"].startswith("memory") else
               f"client {r['client_peak_rss_gb']:.2f}, workers "
               + ", ".join(f"{w:.2f}" for w in r["worker_peak_rss_gb"]))
        diff = f"{r['max_abs_diff_memory']:.1e}" if "max_abs_diff_memory" in r else "—"
        bounded = f" (stopped after {r['max_iter']} iteration)" if r.get("max_iter") else ""
        lines.append(
            f"| {r['part']}{bounded} | {r['n']} | {r['fit_seconds']:.0f} | "
            f"{r['predict_seconds']:.1f} | "
            f"{f['approximation']} | {f['n_centres'] or '—'} | {f['n_iter'] or '—'} | "
            f"{f['residual'] or float('nan'):.1e} | {r['test_nmse']:.4f} | {rss} | {diff} | "
            f"{r['load_before'][0]} → {r['load_after'][0]} |")
    phased = [r for r in recs if r.get("refit_seconds")]
    if phased:
        lines += ["", "Seconds per phase of the refit (the selection's own, where recorded):",
                  "", "| part | n | m | sampled rows | selection | preconditioner | "
                  "right-hand side | iterations | per iteration |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in phased:
            ph = r["refit_seconds"]
            sel_s = r.get("selection_seconds")
            lines.append(
                f"| {r['part']} | {r['n']} | {r['refit']['n_centres']} | "
                f"{r.get('sample_rows') or '—'} | "
                f"{'—' if sel_s is None else format(sel_s, '.0f')} | "
                f"{ph.get('preconditioner', float('nan')):.0f} | "
                f"{ph.get('right-hand side', float('nan')):.0f} | "
                f"{ph.get('iterations', float('nan')):.0f} | "
                f"{ph.get('per_iteration', float('nan')):.1f} |")
    lines += ["", "Notes. A run *stopped after 1 iteration* (``--max-iter 1``) goes through the "
              "selection, the preconditioner, the right-hand side and one conjugate-gradient "
              "iteration (with its explicit residual, a second pass): the memory peaks "
              "before the first iteration (the iterations allocate only (m, t) vectors), so "
              "its peak RSS is the full fit's; its test NMSE is not (the iterate is far "
              "from converged). Its time for the full fit is the phases before the "
              "iterations plus the iterations a converged fit takes times the time of "
              "one (about half the bounded run's *iterations* column, which holds two "
              "passes)."]
    lines.append("")
    lines += C.note_lines(recs, lambda r: f"{r['part']} at n = {r['n']} "
                                          f"(m = {r['refit']['n_centres']})", "Run notes:")
    C.write_report(REPORT, lines)


def main(argv=None):
    p, sub = C.command_parser(__doc__)
    for name in ("memory", "dask"):
        r = sub.add_parser(name)
        r.add_argument("--n", type=int, default=200_000)
        r.add_argument("--chunk-rows", type=int, default=2**16)
        r.add_argument("--worker-memory", default="3GB")
        r.add_argument("--max-iter", type=int, default=None)
        r.add_argument("--progress", type=float, default=60.0,
                       help="progress lines on stderr once the fit has run this many "
                            "seconds (the selection's levels, the iterations and the time "
                            "left); a negative number for none")
        r.add_argument("--checkpoint", default=None, metavar="PATH",
                       help="KernelSelectionCV(checkpoint=PATH): run the same command again "
                            "after an interruption to resume (the record says what was "
                            "read back)")
        if name == "memory":
            r.add_argument("--centres", type=int, default=None,
                           help="KernelSelectionRegressor(KernelRidgeRegressor(kernel="
                                "'gaussian', approximation=NystroemPCG(n_centres=M)))")
        if name == "dask":
            r.add_argument("--gamma", type=float, default=None,
                           help="the refit alone at this γ (with --alpha), no selection")
            r.add_argument("--alpha", type=float, default=None)
            r.add_argument("--kill-worker", type=float, nargs="+", default=None,
                           metavar="S", help="kill a worker process S seconds into the fit "
                                             "(its nanny starts another)")
    w = sub.add_parser("write-data")
    w.add_argument("--n", type=int, required=True)
    w.add_argument("--path", required=True)
    C.run_command(p, sub, argv, report, memory=memory, dask=dask_part, **{"write-data": write_data})


if __name__ == "__main__":
    main()
