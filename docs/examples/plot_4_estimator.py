"""
Select and fit in one estimator
===============================

:class:`~kernelselect.KernelSelectionCV` selects γ and α with a criterion and refits
the kernel machine at the choice, like scikit-learn's ``GridSearchCV`` but from one
factorisation per γ instead of one fit per fold and candidate. Compare its test
accuracy with the median-heuristic γ at a fixed α.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from kernelselect import KernelSelectionCV, LSSVMClassifier, datasets
from kernelselect.kernels import median_heuristic_gamma

data = datasets.load("australian")
X_train, X_test, y_train, y_test = train_test_split(data.X, data.y, test_size=0.5,
                                                    random_state=0, stratify=data.y)

selected = make_pipeline(
    StandardScaler(),
    KernelSelectionCV(criterion="eloo", alphas=np.logspace(-2, 1, 4), random_state=0),
).fit(X_train, y_train)
print("selected:", selected[-1].best_params_)

scaled = StandardScaler().fit(X_train)
gamma0 = median_heuristic_gamma(scaled.transform(X_train), "gaussian",
                                np.random.default_rng(0))
baseline = make_pipeline(StandardScaler(),
                         LSSVMClassifier(gamma=gamma0, alpha=1.0)).fit(X_train, y_train)

scores = {"median heuristic γ, α = 1": baseline.score(X_test, y_test),
          "KernelSelectionCV (eloo)": selected.score(X_test, y_test)}
for name, score in scores.items():
    print(f"{name:>28}: test accuracy {score:.3f}")

fig, ax = plt.subplots(figsize=(6, 2.6), layout="constrained")
ax.barh(list(scores), list(scores.values()), color=["tab:gray", "tab:blue"])
ax.set_xlim(0.5, 1.0)
ax.set_xlabel("test accuracy")
ax.set_title(f"australian: n_train = {len(y_train)}, n_test = {len(y_test)}")
for i, value in enumerate(scores.values()):
    ax.text(value + 0.005, i, f"{value:.3f}", va="center")
