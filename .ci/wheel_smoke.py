"""Smoke test of an installed kernelselect wheel (run from outside the source tree).

Checks what a user without a compiler gets from ``pip install kernelselect``: the
compiled kernels load with OpenMP, a small selection runs and gives the same choice as
the exact criterion on a shipped dataset, and the ``kernelselect`` command answers.
"""

import os
import shutil
import subprocess
import sys

import numpy as np

import kernelselect
from kernelselect import datasets

here = os.path.dirname(os.path.abspath(__file__))
if os.path.dirname(os.path.abspath(kernelselect.__file__)).startswith(os.path.dirname(here)):
    sys.exit(f"kernelselect was imported from the source tree ({kernelselect.__file__}), "
             "not from the installed wheel")

config = kernelselect.show_config()
print(config)
if not config["openmp"]:
    sys.exit("the wheel's kernels were built without OpenMP")

data = datasets.load("breast_cancer")
result = kernelselect.select_kernel(data.X, data.y, criterion=["ree", "kta"],
                                    approximation=kernelselect.Nystroem(n_landmarks=100),
                                    standardize=True, random_state=0)
print(result)
assert np.isfinite(result.best_gamma) and result.best_gamma > 0, result.best_gamma
assert result.curves["ree"].shape == (15, 1)

exe = shutil.which("kernelselect")
if exe is None:
    sys.exit("the kernelselect command is not on PATH")
version = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True)
assert version.stdout.strip() == f"kernelselect {kernelselect.__version__}", version.stdout
print(version.stdout.strip())
print("wheel smoke test passed")
