"""Best-of time of a few selections and a fit, one thread, printed as JSON; run
alternately under two source trees (PYTHONPATH) to compare them in pairs."""
import json
import time
import numpy as np
from threadpoolctl import threadpool_limits
import kernelselect as ks
rng = np.random.default_rng(0)
out = {}
with threadpool_limits(1):
    for n in (1000, 2000):
        X = rng.standard_normal((n, 8)); y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)
        ts = []
        for _ in range(2):
            t = time.perf_counter(); ks.select_kernel(X, y, kernel="gaussian"); ts.append(time.perf_counter() - t)
        out[f"exact{n}"] = min(ts)
    X = rng.standard_normal((10000, 8)); y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(10000)
    for a in ("nystrom", "rff"):
        ts = []
        for _ in range(2):
            t = time.perf_counter(); ks.select_kernel(X, y, kernel="gaussian", approximation=a); ts.append(time.perf_counter() - t)
        out[a + "1e4"] = min(ts)
    Xf = X[:2000]; yf = y[:2000]
    ts = []
    for _ in range(3):
        t = time.perf_counter(); ks.KernelRidgeRegressor(gamma=0.1, alpha=1.0).fit(Xf, yf).predict(Xf); ts.append(time.perf_counter() - t)
    out["fit2000"] = min(ts)
print(json.dumps(out))
