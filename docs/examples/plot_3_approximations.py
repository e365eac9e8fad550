"""
How closely do the stand-ins follow the exact criterion?
========================================================

The leave-one-out criterion ``eloo`` on the exact kernel matrix and on three stand-ins:
Nyström with 100 and 300 landmarks and 300 random Fourier features. What matters for
selection is where each curve has its minimum, not its exact values.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

import kernelselect
from kernelselect import datasets

data = datasets.load("ionosphere")
gammas = kernelselect.selection.default_gammas(
    (data.X - data.X.mean(0)) / np.where(data.X.std(0) > 0, data.X.std(0), 1), random_state=0)

stand_ins = {
    "exact": "exact",
    "Nyström, c = 100": kernelselect.Nystroem(n_landmarks=100),
    "Nyström, c = 300": kernelselect.Nystroem(n_landmarks=300),
    "RFF, D = 300": kernelselect.RFF(n_features=300),
}
fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
for label, approximation in stand_ins.items():
    t0 = time.perf_counter()
    res = kernelselect.select_kernel(data.X, data.y, criterion="eloo", gammas=gammas,
                                     alphas=[0.1], approximation=approximation,
                                     random_state=0)
    seconds = time.perf_counter() - t0
    line, = ax.plot(np.log2(res.gammas), res.curves["eloo"][:, 0], marker="o", ms=3,
                    label=f"{label} ({seconds:.2f} s)")
    i = res.best["eloo"]["index"][0]
    ax.plot(np.log2(res.gammas[i]), res.curves["eloo"][i, 0], "o", ms=12, mfc="none",
            mec=line.get_color(), mew=1.5)
    print(f"{label:>18}: best gamma = {res.best_gamma:.4g}, {seconds:.2f} s")
ax.set_xlabel("log₂ γ")
ax.set_ylabel("eloo (lower is better)")
ax.set_title(f"ionosphere (n = {data.X.shape[0]}): eloo at α = 0.1; circles mark each minimum")
ax.legend()
