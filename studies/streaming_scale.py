"""Streaming and Dask-distributed selection at scale: time, peak memory, cost floor.

Every measurement runs in a fresh child process (peak RSS = the child's ru_maxrss)
and appends one JSON line to studies/results/streaming_scale.jsonl together with
the machine load (``os.getloadavg``) before and after it.

Commands (run from the repository root with the project's virtualenv active):

    # n = 10⁶, d = 10, 15 γ, c = 200, eloo + gcv: this version (1 thread and default
    # threads), the cost floor, and a previous version built in another worktree
    python studies/streaming_scale.py inprocess --n 1000000 \
        --base-python /work/wt/streaming-base/.venv/bin/python
    # threads under a busy neighbour (a niced busy loop on the other core)
    python studies/streaming_scale.py threads --n 100000 \
        --base-python /work/wt/streaming-base/.venv/bin/python
    # 10⁷ rows from a .npy file on disk through a 2-worker LocalCluster
    python studies/streaming_scale.py dask-file --n 10000000 --path /tmp/ks_1e7.npy \
        --criteria gcv
    # strong scaling 1 → 2 workers at n = 10⁶
    python studies/streaming_scale.py scaling --n 1000000 --path /tmp/ks_1e6.npy \
        --criteria gcv
    # RandomMCM (n = 10⁶) and the exact moments (n = 2·10⁴), this version and a previous one
    python studies/streaming_scale.py grids --base-python /work/wt/stream-bench/.venv/bin/python
    # paper 000's large sets (a9a, w8a) at full size
    python studies/streaming_scale.py paper000
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import _common as C

RESULTS = Path(os.environ.get("STREAMING_SCALE_RESULTS",
                              C.RESULTS / "streaming_scale.jsonl"))
CRITERIA = ["eloo", "gcv"]
#: the streamed RandomMCM criteria and the moment criteria of the exact kernel
MCM_CRITERIA = ["random_kta", "random_mmd", "random_kta_row", "random_kta_row_2g",
                "random_mmd_row", "random_c1_rff"]
MOMENT_CRITERIA = ["kta", "ckta", "fsm", "mmd", "sm"]


def synthetic(n, d=10, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(X[:, 0] + 0.5 * np.sin(2.0 * X[:, 1]) + 0.5 * rng.standard_normal(n))
    return X, y


def peak_rss_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20


def cpu_seconds():
    """User + system CPU time of this process so far (all its threads)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# ---------------------------------------------------------------------------- children


def child_select(spec):
    """select_kernel on synthetic data (whatever kernelselect this Python imports)."""
    import kernelselect

    X, y = synthetic(spec["n"])
    extra = {}
    if spec.get("approximation"):           # else the library's default ("auto")
        extra["approximation"] = _approximation(spec["approximation"])
    if spec.get("alphas"):
        extra["alphas"] = spec["alphas"]
    t0, c0 = time.perf_counter(), cpu_seconds()
    res = kernelselect.select_kernel(X, y, criterion=CRITERIA, random_state=0,
                                     workers=spec.get("workers"), **extra)
    elapsed = time.perf_counter() - t0
    return {"seconds": elapsed, "cpu_seconds": cpu_seconds() - c0,
            "peak_rss_gb": peak_rss_gb(), "best_gamma": res.best_gamma,
            "eloo": res.curves["eloo"][:, 0].tolist(), "gcv": res.curves["gcv"][:, 0].tolist(),
            "kernelselect": kernelselect.__file__}


def _approximation(name):
    import kernelselect

    if name.startswith("random_mcm:"):
        return kernelselect.RandomMCM(n_features=int(name.split(":")[1]))
    if name.startswith("nystrom:"):
        return kernelselect.Nystroem(n_landmarks=int(name.split(":")[1]))
    if name == "exact_streaming":
        return kernelselect.Exact(method="streaming")
    raise ValueError(name)


def child_grid(spec):
    """select_kernel with one approximation and its criteria, one thread, whatever
    kernelselect this Python imports (the γ grid of the median heuristic, 15 γ)."""
    import kernelselect

    X, y = synthetic(spec["n"])
    t0, c0 = time.perf_counter(), cpu_seconds()
    res = kernelselect.select_kernel(X, y, criterion=spec["criteria"], random_state=0,
                                     approximation=_approximation(spec["approximation"]),
                                     workers=spec.get("workers"))
    return {"seconds": time.perf_counter() - t0, "cpu_seconds": cpu_seconds() - c0,
            "peak_rss_gb": peak_rss_gb(), "best_gamma": res.best_gamma,
            "curves": {k: v[:, 0].tolist() for k, v in res.curves.items()},
            "kernelselect": kernelselect.__file__}


def child_floor(spec):
    """The cost floor per γ: the kernel block K(X_b, Z) and the Gram product C_bᵀC_b for
    every row block (one thread), summed over the 15 γ of the default grid."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from kernelselect import lowlevel
    from kernelselect.operators.streaming_lowrank import block_rows
    from kernelselect.selection import default_gammas

    X, y = synthetic(spec["n"])
    gammas = default_gammas(X, random_state=0)
    rng = np.random.default_rng(0)
    Z = X[np.sort(rng.choice(X.shape[0], 200, replace=False))]
    rows = 8 * block_rows(200)
    t0, c0 = time.perf_counter(), cpu_seconds()
    with threadpool_limits(1, user_api="blas"):
        for g in gammas:
            G = np.zeros((200, 200))
            for a in range(0, X.shape[0], rows):
                C = lowlevel.kernel_block(X[a:a + rows], Z, g, workers=1)
                G += C.T @ C
    return {"seconds": time.perf_counter() - t0, "cpu_seconds": cpu_seconds() - c0,
            "peak_rss_gb": peak_rss_gb()}


def child_dask(spec):
    """select_kernel on a .npy file through a LocalCluster (processes, 1 thread each)."""
    import distributed

    import kernelselect
    from kernelselect.utils._dask import from_file

    cluster = distributed.LocalCluster(n_workers=spec["workers"], threads_per_worker=1,
                                       processes=True, dashboard_address=":0",
                                       memory_limit=spec.get("memory_limit", "4GiB"))
    client = distributed.Client(cluster)
    try:
        X, y = from_file(spec["path"], chunk_rows=spec.get("chunk_rows"))
        t0, cpu0 = time.perf_counter(), client.run(cpu_seconds)
        with distributed.get_task_stream(client) as ts:
            res = kernelselect.select_kernel(X, y, criterion=spec.get("criteria", CRITERIA),
                                             random_state=0)
        elapsed = time.perf_counter() - t0
        per_worker = client.run(peak_rss_gb)
        cpu = {w: v - cpu0.get(w, 0.0) for w, v in client.run(cpu_seconds).items()}
        tasks = {}
        for t in ts.data:
            name = t["key"][0] if isinstance(t["key"], tuple) else str(t["key"])
            kind = name.rsplit("-", 1)[0]
            span = sum(s["stop"] - s["start"] for s in t["startstops"]
                       if s["action"] == "compute")
            tasks.setdefault(kind, []).append(span)
        return {"seconds": elapsed, "peak_rss_gb_client": peak_rss_gb(),
                "peak_rss_gb_workers": per_worker, "cpu_seconds_workers": cpu,
                "chunks": len(X.chunks[0]),
                "chunk_rows": X.chunks[0][0], "best_gamma": res.best_gamma,
                "task_seconds": {k: {"count": len(v), "total": sum(v)}
                                 for k, v in tasks.items()},
                "curves": {k: v[:, 0].tolist() for k, v in res.curves.items()}}
    finally:
        client.close()
        cluster.close()


def child_paper000(spec):
    """Selection by the streaming path on a 50 % split, then the LSSVM on the train half
    at the chosen γ (α = 1, paper 000's protocol) and its test accuracy."""
    import numpy as np

    import kernelselect
    from kernelselect.models import LSSVMClassifier

    path = Path(spec["path"])
    data = C.load_data(path.stem, path.parent)
    X, y = data.X, data.y
    rng = np.random.default_rng(spec["seed"])
    perm = rng.permutation(X.shape[0])
    tr, te = perm[: X.shape[0] // 2], perm[X.shape[0] // 2:]
    gammas = 2.0 ** np.arange(-8, 7)
    t0 = time.perf_counter()
    res = kernelselect.select_kernel(X[tr], y[tr], criterion=spec["criterion"], gammas=gammas,
                                     alphas=[1.0], random_state=spec["seed"])
    t_sel = time.perf_counter() - t0
    t0 = time.perf_counter()
    clf = LSSVMClassifier(gamma=res.best_gamma, alpha=1.0,
                          approximation=kernelselect.Nystroem(n_landmarks=1000),
                          random_state=spec["seed"]).fit(X[tr], y[tr])
    acc = float(np.mean(clf.predict(X[te]) == y[te]))
    return {"seconds_selection": t_sel, "seconds_fit": time.perf_counter() - t0,
            "accuracy": acc, "best_gamma": res.best_gamma, "n_train": int(tr.size),
            "peak_rss_gb": peak_rss_gb()}


CHILDREN = {"select": child_select, "floor": child_floor, "dask": child_dask,
            "paper000": child_paper000, "grid": child_grid}


# ---------------------------------------------------------------------------- driver


def run_child(spec, python=None, env=None, busy=False, hog_nice=10):
    python = python or sys.executable
    full_env = dict(os.environ, **(env or {}))
    hog = None
    if busy:
        # a busy loop at ``hog_nice`` above this process's niceness (0: an equal competitor)
        hog = subprocess.Popen(["nice", "-n", str(hog_nice), python, "-c", "while True: pass"])
        time.sleep(0.5)
    load0 = os.getloadavg()
    try:
        out = subprocess.run([python, __file__, "_child", json.dumps(spec)], env=full_env,
                             capture_output=True, text=True, check=True)
    except subprocess.CalledProcessError as exc:
        print(exc.stderr, file=sys.stderr)
        raise
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    result = json.loads(out.stdout.strip().splitlines()[-1])
    record = {"spec": spec, "python": python, "env": env or {}, "busy_neighbour": busy,
              **({"hog_nice": hog_nice} if busy else {}),
              "load_before": load0, "load_after": os.getloadavg(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), **result}
    RESULTS.parent.mkdir(exist_ok=True)
    with open(RESULTS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    short = {k: v for k, v in record.items() if k not in ("eloo", "gcv", "curves")}
    print(json.dumps(short), flush=True)
    return record


ONE = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def write_npy(path, n, d=10):
    """X and y of :func:`synthetic` as one (n, d + 1) .npy file, written in blocks."""
    import numpy as np

    path = Path(path)
    if path.exists() and np.load(path, mmap_mode="r").shape == (n, d + 1):
        return
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, d + 1))
    rng = np.random.default_rng(0)
    step = 10 ** 6
    for a in range(0, n, step):
        m = min(step, n - a)
        X = rng.standard_normal((m, d))
        out[a:a + m, :d] = X
        out[a:a + m, d] = np.sign(X[:, 0] + 0.5 * np.sin(2.0 * X[:, 1])
                                  + 0.5 * rng.standard_normal(m))
    out.flush()
    del out


PAPER000 = {  # paper 000 (Ding & Liao, AAAI 2018), Table 1: accuracy %, seconds (30 runs)
    "a9a": {"name": "adult (32561, 123)", "C1(v)": (84.17, 61.02), "C2(v)": (84.29, 64.21),
            "C3(v)": (84.42, 91.58), "KTA": (84.72, 4287.95), "MMD-B": (84.91, 3930.97),
            "5-fold CV": None, "ELOO": None},
    "w8a": {"name": "w8a (49749, 300)", "C1(v)": (98.11, 3865.91), "C2(v)": (98.24, 3890.73),
            "C3(v)": (97.84, 4718.15), "KTA": (97.80, 21715.09), "MMD-B": (98.55, 21110.3),
            "5-fold CV": None, "ELOO": None},
}


def _load(path=RESULTS):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _version(r):
    # worktrees of the versions compared: streaming-base (before the streamed Nyström
    # and RFF) and stream-bench (279b2f3: before the streamed RandomMCM and exact
    # moments, compared in the grid records; its streamed Nyström ran the thread runs)
    if "streaming-base" in r["python"]:
        return "previous"
    if "stream-bench" in r["python"]:
        return "previous" if r["spec"]["kind"] == "grid" else "streaming (279b2f3)"
    return "streaming"


def _load_str(r):
    return f"{r['load_before'][0]:.1f} → {r['load_after'][0]:.1f}"


def report(records):
    """Markdown tables of the records, in the order they were made."""
    rs = list(records)
    out = []
    sel = [r for r in rs if r["spec"]["kind"] in ("select", "floor")]
    for n in sorted({r["spec"]["n"] for r in sel}, reverse=True):
        out += [f"### In process, n = {n:,}, d = 10, 15 γ, Nyström c = 200, eloo + gcv", "",
                "| version | threads | busy neighbour | wall s | CPU s | peak RSS GB | "
                "load (1 min) | best γ | finished (UTC) |", "|---|---|---|---:|---:|---:|---|---:|---|"]
        for r in [r for r in sel if r["spec"]["n"] == n]:
            kind = "floor (kernel block + CᵀC)" if r["spec"]["kind"] == "floor" else _version(r)
            thr = r["spec"].get("workers") or ("1" if kind.startswith("floor") else "default")
            busy = "no" if not r["busy_neighbour"] else (
                "yes" if r.get("hog_nice", 10) else "yes (equal nice)")
            out.append(f"| {kind} | {thr} | {busy} | "
                       f"{r['seconds']:.1f} | {r.get('cpu_seconds', float('nan')):.1f} | "
                       f"{r['peak_rss_gb']:.2f} | {_load_str(r)} | "
                       f"{r.get('best_gamma', float('nan')):.4g} | {r['date'][11:16]} |")
        out.append("")
    gr = [r for r in rs if r["spec"]["kind"] == "grid"]
    if gr:
        out += ["### Streamed grids: RandomMCM and the exact kernel's moments (d = 10, 15 γ, "
                "one thread)", "",
                "| approximation | criteria | n | version | wall s | CPU s | peak RSS GB | "
                "load (1 min) | best γ | largest curve difference | finished (UTC) |",
                "|---|---|---:|---|---:|---:|---:|---|---:|---:|---|"]
        for r in gr:
            twin = [o for o in gr if o["spec"] == r["spec"] and _version(o) != _version(r)]
            diff = float("nan")
            if twin:
                import numpy as np

                diff = max(float(np.nanmax(np.abs(np.asarray(r["curves"][k]) /
                                                  np.asarray(twin[0]["curves"][k]) - 1)))
                           for k in r["curves"])
            out.append(f"| {r['spec']['approximation']} | {','.join(r['spec']['criteria'])} | "
                       f"{r['spec']['n']:,} | {_version(r)} | {r['seconds']:.1f} | "
                       f"{r['cpu_seconds']:.1f} | {r['peak_rss_gb']:.2f} | {_load_str(r)} | "
                       f"{r['best_gamma']:.4g} | {diff:.1e} | {r['date'][11:16]} |")
        out.append("")
    dk = [r for r in rs if r["spec"]["kind"] == "dask"]
    if dk:
        out += ["### Dask, LocalCluster (processes, 1 thread per worker), .npy file on disk", "",
                "| file | criteria | workers | chunks × rows | wall s | peak RSS per worker GB "
                "| client GB | worker CPU s | chunk tasks: wall s (count) | load (1 min) |",
                "|---|---|---:|---|---:|---|---:|---|---|---|"]
        for r in dk:
            tasks = r["task_seconds"].get("_chunk_task", {"total": float("nan"), "count": 0})
            peaks = ", ".join(f"{v:.2f}" for v in r["peak_rss_gb_workers"].values())
            cpu = r.get("cpu_seconds_workers")
            cpu = ", ".join(f"{v:.1f}" for v in cpu.values()) if cpu else "n/a"
            out.append(f"| {os.path.basename(r['spec']['path'])} | "
                       f"{','.join(r['spec'].get('criteria', CRITERIA))} | "
                       f"{r['spec']['workers']} | {r['chunks']} × {r['chunk_rows']:,} | "
                       f"{r['seconds']:.1f} | {peaks} | {r['peak_rss_gb_client']:.2f} | {cpu} | "
                       f"{tasks['total']:.1f} ({tasks['count']}) | {_load_str(r)} |")
        out.append("")
    pp = [r for r in rs if r["spec"]["kind"] == "paper000"]
    if pp:
        out += ["### Paper 000's large sets, full size (50 % train / 50 % test, γ = 2^−8…2^6, "
                "α = 1)", "", "| set | this library: eloo (streamed Nyström c = 200) | "
                "selection s | test accuracy | paper: C1(v) acc / s | C3(v) acc / s | "
                "KTA acc / s | MMD-B acc / s |", "|---|---|---:|---:|---|---|---|---|"]
        for r in pp:
            name = Path(r["spec"]["path"]).stem
            ref = PAPER000.get(name, {})
            cells = [f"{ref[k][0]:.2f} % / {ref[k][1]:.0f}" if ref.get(k) else "NA"
                     for k in ("C1(v)", "C3(v)", "KTA", "MMD-B")]
            out.append(f"| {ref.get('name', name)} | γ = {r['best_gamma']:.4g} | "
                       f"{r['seconds_selection']:.1f} | {100 * r['accuracy']:.2f} % | "
                       + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("inprocess")
    a.add_argument("--n", type=int, default=10 ** 6)
    a.add_argument("--base-python")
    a = sub.add_parser("threads")
    a.add_argument("--n", type=int, default=10 ** 5)
    a.add_argument("--base-python")
    a.add_argument("--hog-nice", type=int, default=10,
                   help="niceness of the busy neighbour relative to this process (0: equal)")
    for name in ("dask-file", "scaling"):
        a = sub.add_parser(name)
        a.add_argument("--n", type=int, default=10 ** 7)
        a.add_argument("--path", required=True)
        a.add_argument("--chunk-rows", type=int, default=250_000)
        a.add_argument("--criteria", default=",".join(CRITERIA))
    a = sub.add_parser("grids")
    a.add_argument("--n-mcm", type=int, default=10 ** 6)
    a.add_argument("--n-exact", type=int, default=20_000)
    a.add_argument("--base-python")
    sub.add_parser("paper000")
    sub.add_parser("report")
    a = sub.add_parser("_child")
    a.add_argument("spec")
    args = p.parse_args(argv)

    if args.cmd == "report":
        print(report(_load()))
        return
    if args.cmd == "_child":
        spec = json.loads(args.spec)
        print(json.dumps(CHILDREN[spec["kind"]](spec)))
        return
    if args.cmd == "inprocess":
        run_child({"kind": "select", "n": args.n, "workers": 1}, env=ONE)
        run_child({"kind": "floor", "n": args.n}, env=ONE)
        run_child({"kind": "select", "n": args.n})
        if args.base_python:
            run_child({"kind": "select", "n": args.n, "workers": 1}, python=args.base_python,
                      env=ONE)
    elif args.cmd == "threads":
        pythons = [None] + ([args.base_python] if args.base_python else [])
        # the streamed Nyström path of the measurement: c = 200, α = 1
        fixed = {"kind": "select", "n": args.n, "approximation": "nystrom:200",
                 "alphas": [1.0]}
        for py in pythons:
            run_child(dict(fixed, workers=1), python=py, env=ONE)
            run_child(fixed, python=py)
            run_child(dict(fixed, workers=1), python=py, env=ONE, busy=True,
                      hog_nice=args.hog_nice)
            run_child(fixed, python=py, busy=True, hog_nice=args.hog_nice)
    elif args.cmd == "grids":
        jobs = [{"kind": "grid", "n": args.n_mcm, "approximation": "random_mcm:100",
                 "criteria": list(MCM_CRITERIA), "workers": 1},
                {"kind": "grid", "n": args.n_exact, "approximation": "exact_streaming",
                 "criteria": list(MOMENT_CRITERIA), "workers": 1}]
        for spec in jobs:
            run_child(spec, env=ONE)
            if args.base_python:
                run_child(spec, python=args.base_python, env=ONE)
    elif args.cmd == "dask-file":
        write_npy(args.path, args.n)
        run_child({"kind": "dask", "path": args.path, "workers": 2,
                   "chunk_rows": args.chunk_rows, "criteria": args.criteria.split(",")},
                  env=ONE)
    elif args.cmd == "scaling":
        write_npy(args.path, args.n)
        for w in (1, 2):
            run_child({"kind": "dask", "path": args.path, "workers": w,
                       "chunk_rows": args.chunk_rows, "criteria": args.criteria.split(",")},
                      env=ONE)
    elif args.cmd == "paper000":
        for name in ("a9a", "w8a"):
            run_child({"kind": "paper000", "path": str(C.DATA / f"{name}.npz"), "seed": 0,
                       "criterion": "eloo"}, env=ONE)


if __name__ == "__main__":
    main()
