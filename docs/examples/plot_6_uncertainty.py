"""
Probabilities and prediction intervals without a refit
======================================================

A fitted kernel machine already knows what it would predict at each training point
had that point been left out: for a ridge-type machine the leave-one-out prediction
has a closed form, y_i − (y_i − f_i)/(1 − h_i), from the same factorisation as the fit.
``predict_proba`` calibrates the classifier's decision values on those out-of-sample
values, and ``predict_interval`` turns the regressor's leave-one-out residuals into
jackknife+ intervals. Neither refits anything.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from kernelselect import KernelSelectionClassifier, KernelSelectionRegressor, datasets
from kernelselect.models import plot_calibration, plot_intervals

# %%
# Class probabilities
# -------------------
# ``KernelSelectionClassifier`` selects (γ, α) and refits the least-squares SVM; its
# decision values fit ±1 by ridge regression and are not probabilities. The
# calibrated probabilities put the slope of a sigmoid on the leave-one-out decision
# values; the reliability diagram compares confidence with accuracy on held-out rows.

data = datasets.load("australian")
X_train, X_test, y_train, y_test = train_test_split(
    data.X, data.y, test_size=0.5, random_state=0, stratify=data.y)
clf = KernelSelectionClassifier(random_state=0).fit(X_train, y_train)
proba = clf.predict_proba(X_test)
print("classes:", clf.classes_, " first rows:\n", proba[:3].round(3))
print("argmax of predict_proba is predict on every row:",
      bool(np.all(clf.classes_[proba.argmax(axis=1)] == clf.predict(X_test))))
print(f"test log-loss {-np.mean(np.log(proba[np.arange(len(y_test)), np.searchsorted(clf.classes_, y_test)])):.3f}")

# %%
# Prediction intervals
# --------------------
# ``predict_interval(X, coverage=0.9)`` returns [lower, upper] per row. For an exact
# machine it is the jackknife+ interval, built from the n leave-one-out models (each
# one the fitted model minus a rank-one correction, so none is refitted); its
# coverage is at least 1 − 2·0.1 whatever the data and near 0.9 in practice.

reg_data = datasets.load("diabetes_reg")
Xr_train, Xr_test, yr_train, yr_test = train_test_split(
    reg_data.X, reg_data.y, test_size=0.5, random_state=0)
reg = KernelSelectionRegressor(random_state=0).fit(Xr_train, yr_train)
intervals = reg.predict_interval(Xr_test, coverage=0.9)
inside = (intervals[:, 0] <= yr_test) & (yr_test <= intervals[:, 1])
print(f"90% intervals: test coverage {inside.mean():.3f}, "
      f"mean width {np.mean(intervals[:, 1] - intervals[:, 0]):.1f}")

fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained",
                         gridspec_kw={"width_ratios": [1, 1.6]})
plot_calibration(proba, y_test, classes=clf.classes_, ax=axes[0], label="australian")
axes[0].set_title("reliability of predict_proba")
pred = reg.predict(Xr_test)
plot_intervals(pred, intervals, y_true=yr_test, prediction=pred, ax=axes[1],
               label="90% jackknife+")
axes[1].set(xlabel="prediction", ylabel="target", title="predict_interval, diabetes")
plt.show()
