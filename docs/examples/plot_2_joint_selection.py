"""
Select γ and α together
=======================

Every spectral criterion is evaluated for a whole α path from one factorisation per
γ, so selecting the ridge as well costs little. The heat maps show each criterion over
the (γ, α) grid; the curves above them are the same values, one line per α.
"""

import numpy as np

import kernelselect
from kernelselect import datasets

data = datasets.load("mpg")
print(data.X.shape, data.task)

alphas = np.logspace(-3, 1, 5)
result = kernelselect.select_kernel(
    data.X, data.y,
    criterion=["gcv", "eloo"],
    alphas=alphas,
    approximation="exact",
    random_state=0,
)
print(result)

# %%
# Brighter is better in every heat map. Here gcv selects (red diamond); the open circle
# is each criterion's own best.

fig = result.plot(kind="both", data_name="mpg")
