"""Runs a batch of fuzz cases in a fresh process and reports each outcome.

Usage (the fuzz tests do this): ``python _fuzz_worker.py`` with a pickled list of
cases on standard input; one JSON line per case on standard output, preceded by a
``{"start": i}`` line, so that the parent can tell which case killed the process
(signal death) or hung (timeout). The address space is capped (``RLIMIT_AS``), so an
allocation that escapes the library's own memory guard fails as ``MemoryError``.

A case is a dict with ``kind``:

- ``"call"``: ``target`` (dotted name), ``args``, ``kwargs``; ``check`` says how to
  judge a normal return: ``"selection"`` (best γ, α and value finite), ``"array"``
  (every number in the result finite) or ``"none"``.
- ``"estimator"``: ``target`` (class name in kernelselect), ``kwargs``, ``X``, ``y``:
  fit, then predict / transform on X; the output must be finite.
- ``"cli"``: ``argv`` (``{data}`` and ``{out}`` are replaced by paths in a fresh
  folder), ``data`` = (suffix, X, y) written as that file type: exit status, stderr
  and the files left in the folder are reported.
"""

import contextlib
import importlib
import io
import json
import math
import os
import pickle
import resource
import signal
import sys
import tempfile

import numpy as np


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang("case took longer than its time limit")


def _all_finite(obj):
    if obj is None or isinstance(obj, (str, bytes, bool)):
        return True
    if isinstance(obj, dict):
        return all(_all_finite(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return all(_all_finite(v) for v in obj)
    if isinstance(obj, (int, float, complex, np.generic, np.ndarray)):
        arr = np.asarray(obj)
        if arr.dtype.kind in "biuf":
            return bool(np.all(np.isfinite(arr)))
        if arr.dtype.kind == "c":
            return bool(np.all(np.isfinite(arr)))
        return True
    return True


def _resolve(name):
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def _rows(X):
    if X.ndim == 0:
        return X.reshape(1, 1)
    return X.reshape(X.shape[0], int(np.prod(X.shape[1:], dtype=np.int64)))


def _write_data(folder, suffix, X, y):
    path = os.path.join(folder, "data" + suffix)
    X = np.asarray(X)
    y = np.asarray(y)
    if suffix == ".npz":
        np.savez(path, X=X, y=y)
    elif suffix == ".npy":   # one array, the target as its last column when it fits
        rows = _rows(X)
        if y.size == rows.shape[0] and rows.dtype.kind == y.dtype.kind:
            rows = np.column_stack([rows, y.ravel()])
        np.save(path, rows)
    elif suffix == ".csv":
        with open(path, "w") as fh:
            rows = _rows(X)
            for r in range(rows.shape[0]):
                t = y.ravel()[r] if r < y.size else ""
                fh.write(",".join(str(v) for v in rows[r]) + f",{t}\n")
    else:  # svmlight, 0-based
        with open(path, "w") as fh:
            rows = _rows(X)
            for r in range(rows.shape[0]):
                t = y.ravel()[r] if r < y.size else 0
                fh.write(f"{t} " + " ".join(f"{j}:{v}" for j, v in enumerate(rows[r])) + "\n")
    return path


def run_case(case):
    kind = case["kind"]
    if kind == "call":
        out = _resolve(case["target"])(*case.get("args", ()), **case.get("kwargs", {}))
        check = case.get("check", "array")
        if check == "selection":
            best = out.best[out.criteria[0]]
            values = (out.best_gamma, out.best_alpha, best["value"])
            return {"status": "ok", "finite": all(math.isfinite(v) for v in values)}
        if check == "array":
            return {"status": "ok", "finite": _all_finite(out)}
        return {"status": "ok", "finite": True}
    if kind == "estimator":
        import kernelselect

        est = getattr(kernelselect, case["target"])(**case.get("kwargs", {}))
        est.fit(case["X"], case["y"])
        out = est.transform(case["X"]) if hasattr(est, "transform") else est.predict(case["X"])
        if hasattr(est, "decision_function") and not hasattr(est, "transform"):
            out = (out, est.decision_function(case["X"]))
        finite = _all_finite(out) if np.asarray(out[0] if isinstance(out, tuple) else out
                                                ).dtype.kind in "biufc" else True
        return {"status": "ok", "finite": finite}
    if kind == "cli":
        from kernelselect import cli

        with tempfile.TemporaryDirectory() as folder:
            data = _write_data(folder, *case["data"]) if case.get("data") else None
            argv = [a.replace("{data}", data or "").replace("{out}", os.path.join(folder, "out"))
                    for a in case["argv"]]
            before = set(os.listdir(folder))
            stdout, stderr = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                code = cli.main(argv)
            written = sorted(set(os.listdir(folder)) - before)
        return {"status": "exit", "code": code, "stderr": stderr.getvalue(),
                "stdout": stdout.getvalue()[-2000:], "written": written}
    raise ValueError(f"unknown case kind {kind!r}")


def main():
    limit = int(os.environ.get("FUZZ_ADDRESS_SPACE", str(3 * 2**30)))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    seconds = int(os.environ.get("FUZZ_CASE_SECONDS", "30"))
    signal.signal(signal.SIGALRM, _alarm)
    cases = pickle.load(sys.stdin.buffer)
    import warnings

    warnings.simplefilter("ignore")  # RuntimeWarnings are judged by their results
    for i, case in enumerate(cases):
        print(json.dumps({"start": i}), flush=True)
        signal.alarm(seconds)
        try:
            record = run_case(case)
        except Hang as exc:
            record = {"status": "hang", "message": str(exc)}
        except BaseException as exc:  # noqa: BLE001 - every outcome is reported
            record = {"status": "error", "type": type(exc).__name__,
                      "bases": [c.__name__ for c in type(exc).__mro__],
                      "message": str(exc)[:2000]}
        finally:
            signal.alarm(0)
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
