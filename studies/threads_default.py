"""Default threads against one thread: does `select_kernel(X, y)` with the default
thread policy ever run slower than on one thread, idle or beside a busy process?

For each size n (cadata rows when the shared data are there, else a synthetic
regression set), each thread setting and each condition, a fresh interpreter times
`select_kernel(X, y, random_state=0)` (import and data excluded); the settings run
interleaved, repeat after repeat, so that a change of machine load hits them alike.

Settings:
  one         OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1 (one thread everywhere)
  default     nothing set: the library's policy (kernelselect.utils._threads)
  passive     the default with OMP_WAIT_POLICY=PASSIVE (OpenMP threads sleep at once
              instead of spinning while they wait)
  all_cores   workers=-1: every core for OpenMP and BLAS whatever the size or load
              (the policy before the size and load rules)
Conditions:
  alone       nothing else started by the study
  busy        one extra process spinning on a core for the whole measurement

The machine's 1-minute load average is recorded before and after every run: on a
shared machine it is part of the result; so is the process's CPU time (all its threads),
whose ratio to the wall time shows how many threads did work. Raw records go to
results/threads_default_raw.jsonl; the report (results/threads_default.md) is
rebuilt from them with --report.

Usage: python studies/threads_default.py [--sizes 200,2000,20000] [--repeats 3]
                                        [--settings one,default]
       python studies/threads_default.py --report
"""

import argparse
import gzip
import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

RAW = C.RESULTS / "threads_default_raw.jsonl"
REPORT = C.RESULTS / "threads_default.md"
SETTINGS = {
    "one": ({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}, None),
    "default": ({}, None),
    "passive": ({"OMP_WAIT_POLICY": "PASSIVE"}, None),
    "all_cores": ({}, -1),
}

CHILD = r"""
import json, os, sys, time, warnings
import numpy as np
sys.path.insert(0, {studies!r})
n, workers = {n}, {workers}
try:
    import _common as C
    d = C.load_data("cadata")
    idx = np.random.default_rng(0).choice(d.X.shape[0], size=min(n, d.X.shape[0]), replace=False)
    X, y, data = d.X[idx], d.y[idx], "cadata"
except Exception:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 8))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.standard_normal(n)
    data = "synthetic"
import kernelselect
load_before = os.getloadavg()[0]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    t0, c0 = time.perf_counter(), time.process_time()
    res = kernelselect.select_kernel(X, y, random_state=0, workers=workers)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps(dict(seconds=seconds, cpu_seconds=cpu, data=data, n=int(X.shape[0]),
                      best_gamma=res.best_gamma, best_alpha=res.best_alpha,
                      builds=res.details.get("n_operator_builds"),
                      load_before=load_before, load_after=os.getloadavg()[0])))
"""


def _spin(stop):
    while not stop.is_set():
        pass


def measure(n, setting, condition):
    env_extra, workers = SETTINGS[setting]
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY")}
    env.update(env_extra)
    code = CHILD.format(studies=str(Path(__file__).resolve().parent), n=n, workers=workers)
    stop = multiprocessing.Event()
    spinner = multiprocessing.Process(target=_spin, args=(stop,), daemon=True) \
        if condition == "busy" else None
    if spinner is not None:
        spinner.start()
        time.sleep(0.5)
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=3600)
    finally:
        if spinner is not None:
            stop.set()
            spinner.join()
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    rec.update(setting=setting, condition=condition, cores=os.cpu_count(),
               time=time.strftime("%Y-%m-%d %H:%M:%S"))
    return rec


def run(sizes, repeats, conditions, settings=tuple(SETTINGS)):
    with open(RAW, "a") as f:
        for n in sizes:
            for condition in conditions:
                for rep in range(repeats):
                    for setting in settings:
                        rec = measure(n, setting, condition)
                        rec["repeat"] = rep
                        C.log(f"n={n} {condition} {setting}: {rec['seconds']:.2f} s "
                              f"(load {rec['load_before']:.1f})")
                        f.write(json.dumps(rec) + "\n")
                        f.flush()


def _records():
    if RAW.exists():
        return [json.loads(line) for line in RAW.read_text().splitlines() if line.strip()]
    gz = RAW.with_suffix(".jsonl.gz")
    with gzip.open(gz, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def report():
    recs = _records()
    rows = []
    keys = sorted({(r["n"], r["condition"]) for r in recs}, key=lambda k: (k[0], k[1]))
    for n, condition in keys:
        sel = [r for r in recs if r["n"] == n and r["condition"] == condition]
        med = {s: float(np.median([r["seconds"] for r in sel if r["setting"] == s]))
               for s in SETTINGS if any(r["setting"] == s for r in sel)}
        load = [r["load_before"] for r in sel] + [r["load_after"] for r in sel]
        one = med.get("one")
        ratio = {s: (med[s] / one if one else float("nan")) for s in med}
        rows.append((n, condition, med, ratio, min(load), max(load),
                     len([r for r in sel if r["setting"] == "one"]), sel))
    lines = [
        "# Default threads against one thread",
        "",
        "`python studies/threads_default.py` (raw records: `threads_default_raw.jsonl.gz`).",
        "Median wall time of `select_kernel(X, y, random_state=0)` in a fresh process, and",
        "its ratio to one thread (< 1: faster than one thread). `busy`: one extra process",
        "spinning on a core during the run. The load is the 1-minute load average seen",
        "before and after the runs (min–max): on a shared machine it is part of the result.",
        "",
        "| n | condition | repeats | one (s) | default | passive | all cores | load |",
        "|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for n, condition, med, ratio, lo, hi, reps, sel in rows:
        def cell(s):
            if s not in med:
                return "—"
            busy = [r["cpu_seconds"] / r["seconds"] for r in sel
                    if r["setting"] == s and "cpu_seconds" in r]
            cpu = f", CPU/wall {np.median(busy):.2f}" if busy else ""
            return f"{med[s]:.2f} s ({ratio[s]:.2f}×{cpu})"
        lines.append(f"| {n} | {condition} | {reps} | {med.get('one', float('nan')):.2f} | "
                     f"{cell('default')} | {cell('passive')} | {cell('all_cores')} | "
                     f"{lo:.1f}–{hi:.1f} |")
    REPORT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="200,2000,20000")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--conditions", default="alone,busy")
    p.add_argument("--settings", default=",".join(SETTINGS),
                   help="thread settings to time, comma-separated (default: all)")
    p.add_argument("--report", action="store_true", help="only rebuild the report")
    args = p.parse_args()
    if not args.report:
        run([int(v) for v in args.sizes.split(",")], args.repeats,
            args.conditions.split(","), args.settings.split(","))
        with open(RAW, "rb") as f, gzip.open(RAW.with_suffix(".jsonl.gz"), "wb") as g:
            g.write(f.read())
    report()


if __name__ == "__main__":
    main()
