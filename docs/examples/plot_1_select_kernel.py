"""
Select a kernel width on a shipped data set
===========================================

Evaluate three criteria over the default γ grid on the ``breast_cancer`` set with a
Nyström stand-in for the kernel matrix, and look at where each criterion would choose.
"""

import kernelselect
from kernelselect import datasets

data = datasets.load("breast_cancer")
print(data.X.shape, data.task)

result = kernelselect.select_kernel(
    data.X, data.y,
    criterion=["eloo", "kta", "ree"],          # eloo selects; kta and ree are shown beside it
    approximation=kernelselect.Nystroem(n_landmarks=200),
    random_state=0,
)
print(result)

# %%
# Each panel is one criterion against log₂ γ. The red diamond is the selected kernel
# (eloo's best); the open circle is the panel's own criterion's best. kta is
# maximised, eloo and ree are minimised — the axis labels say so.

fig = result.plot(data_name="breast_cancer")

# %%
# The same numbers as a table, one row per candidate:

print(result.to_frame().round(4).to_string(index=False))
